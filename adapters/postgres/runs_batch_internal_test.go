package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/runs"
)

// The batcher's own rules, with a write that records what it was given:
// appends arriving while one is written go together as the next statement,
// and a caller who leaves before its batch is taken is written nowhere.
func TestAppendBatcherCoalescesAndLetsWaitersLeave(t *testing.T) {
	var mu sync.Mutex
	var statements [][]runs.NewEvent
	next := int64(1)
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	b := newAppendBatcher(func(_ context.Context, _ string, evs []runs.NewEvent) (int64, error) {
		entered <- struct{}{}
		<-release
		mu.Lock()
		defer mu.Unlock()
		statements = append(statements, evs)
		next += int64(len(evs))
		return next - 1, nil
	})
	ev := func(s string) []runs.NewEvent {
		return []runs.NewEvent{runs.Make(runs.KindMessage, runs.MessageData{Text: s})}
	}

	leaderDone := make(chan int64)
	go func() {
		last, _ := b.append(context.Background(), "r", ev("lead"))
		leaderDone <- last
	}()
	<-entered // the leader is writing; everything after this waits

	leaving, leave := context.WithCancel(context.Background())
	left := make(chan error)
	go func() { _, err := b.append(leaving, "r", ev("gone")); left <- err }()
	var wg sync.WaitGroup
	results := make([]int64, 3)
	for i := range results {
		wg.Go(func() { results[i], _ = b.append(context.Background(), "r", ev("follower")) })
	}
	// Wait until all four are queued behind the leader, then let one leave.
	for {
		b.mu.Lock()
		n := len(b.queues["r"].pending)
		b.mu.Unlock()
		if n == 4 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	leave()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Fatalf("the leaving caller got %v", err)
	}
	close(release)
	if last := <-leaderDone; last != 1 {
		t.Fatalf("leader's last seq %d", last)
	}
	wg.Wait()
	if len(statements) != 2 || len(statements[1]) != 3 {
		t.Fatalf("statements %v: want the leader's alone, then the three followers together", statements)
	}
	seen := map[int64]bool{}
	for _, r := range results {
		if r < 2 || r > 4 || seen[r] {
			t.Fatalf("follower seqs %v: each of 2, 3, 4 once", results)
		}
		seen[r] = true
	}
	if len(b.queues) != 0 {
		t.Fatalf("the queue of a run with nothing pending stays: %v", b.queues)
	}
}
