package snapshotsapp_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/nearrpc"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// setClock is a clock the test moves by hand.
type setClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *setClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *setClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestTheDAOListIsReadAtMostDaily(t *testing.T) {
	snaps, directory := memory.NewSnapshotStore(), memory.NewDAODirectory()
	fake := nearrpctest.New(t)
	cfg, err := config.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	clock := &setClock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	chain := nearrpc.New(nearrpc.Options{URLs: map[string]string{snapshots.Mainnet: fake.URL}, Backoff: time.Millisecond, CallTimeout: time.Second})
	svc := snapshotsapp.NewSnapshotService(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)),
		snapshotsapp.NewSnapshotLibrary(cfg, snaps, ports.NoMetrics{}), directory, chain, clock, memory.NewSemaphore(clock))
	var find toolkit.Tool
	for _, tool := range svc.Tools() {
		if tool.Name == "find_target" {
			find = tool
		}
	}
	ask := func() (snapshotsapp.FindAnswer, error) {
		out, err := find.Run(t.Context(), toolkit.Call{Input: json.RawMessage(`{"query":"creatives"}`), Progress: func(toolkit.Progress) {}})
		if err != nil {
			return snapshotsapp.FindAnswer{}, err
		}
		return out.(snapshotsapp.FindAnswer), nil
	}

	if _, err := ask(); err != nil {
		t.Fatal(err)
	}
	if n := fake.CountCalls("get_daos"); n != 1 {
		t.Fatalf("first ask reads the factory: %d calls", n)
	}
	clock.add(23 * time.Hour)
	if _, err := ask(); err != nil || fake.CountCalls("get_daos") != 1 {
		t.Fatalf("within a day the kept list answers: %v, %d calls", err, fake.CountCalls("get_daos"))
	}
	clock.add(2 * time.Hour)
	if _, err := ask(); err != nil || fake.CountCalls("get_daos") != 2 {
		t.Fatalf("after a day the factory is read again: %v, %d calls", err, fake.CountCalls("get_daos"))
	}

	// A failed refresh falls back on the kept list.
	clock.add(25 * time.Hour)
	fake.Inject(nearrpctest.Fault{Function: "get_number_daos", Status: http.StatusServiceUnavailable})
	out, err := ask()
	if err != nil || len(out.Candidates) == 0 || string(out.Candidates[0].Params) != `{"dao":"creatives.sputnik-dao.near","chain":"near:mainnet"}` {
		t.Fatalf("kept list: %+v, %v", out, err)
	}

	// With no list kept and the factory unreachable, it says the source failed.
	empty := snapshotsapp.NewSnapshotService(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)),
		snapshotsapp.NewSnapshotLibrary(cfg, snaps, ports.NoMetrics{}), memory.NewDAODirectory(), chain, clock, memory.NewSemaphore(clock))
	for _, tool := range empty.Tools() {
		if tool.Name == "find_target" {
			_, err := tool.Run(t.Context(), toolkit.Call{Input: json.RawMessage(`{"query":"creatives"}`), Progress: func(toolkit.Progress) {}})
			if !errs.Is(err, errs.SourceFailed) {
				t.Fatalf("no list, no factory: %v", err)
			}
		}
	}
}

// Callers that find the DAO list stale at once share one read of the
// factory: the first one's read is held in flight while the others ask.
func TestOneRefreshOfTheDAOListServesEveryoneAsking(t *testing.T) {
	snaps, directory := memory.NewSnapshotStore(), memory.NewDAODirectory()
	fake := nearrpctest.New(t)
	cfg, err := config.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	clock := &setClock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	chain := nearrpc.New(nearrpc.Options{URLs: map[string]string{snapshots.Mainnet: fake.URL}, Backoff: time.Millisecond, CallTimeout: 30 * time.Second})
	svc := snapshotsapp.NewSnapshotService(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)),
		snapshotsapp.NewSnapshotLibrary(cfg, snaps, ports.NoMetrics{}), directory, chain, clock, memory.NewSemaphore(clock))
	var find toolkit.Tool
	for _, tool := range svc.Tools() {
		if tool.Name == "find_target" {
			find = tool
		}
	}
	hold := make(chan struct{})
	fake.Inject(nearrpctest.Fault{Function: "get_number_daos", Times: 1, Hold: hold})
	const askers = 8
	answers := make(chan error, askers)
	for range askers {
		go func() {
			out, err := find.Run(t.Context(), toolkit.Call{Input: json.RawMessage(`{"query":"creatives"}`), Progress: func(toolkit.Progress) {}})
			if err == nil && len(out.(snapshotsapp.FindAnswer).Candidates) == 0 {
				err = errors.New("no candidates")
			}
			answers <- err
		}()
	}
	for fake.CountCalls("get_number_daos") == 0 {
		time.Sleep(time.Millisecond) // until the first refresh is in flight
	}
	close(hold)
	for range askers {
		if err := <-answers; err != nil {
			t.Fatal(err)
		}
	}
	if n := fake.CountCalls("get_number_daos"); n != 1 {
		t.Fatalf("%d askers read the factory %d times, not once", askers, n)
	}
}
