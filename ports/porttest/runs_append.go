package porttest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/petal-near/petal/domain/runs"
)

// racingAppendCases are the RunStore contract's cases for appends that race
// on one run (a store may batch them into one write): each caller gets back
// its own last seq, and one caller's bad event fails that caller alone.
func racingAppendCases(t *testing.T, newRuns func(t *testing.T) Runs) {
	t.Run("racing appends each get back their own last seq, in their own order", func(t *testing.T) {
		s := newRuns(t).Store
		newRun(t, s, "run_own", "")
		const writers, each = 16, 12
		lasts := make([][]int64, writers)
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					// Appends of one, two and three events, so batches mix sizes.
					var evs []runs.NewEvent
					for k := range 1 + i%3 {
						evs = append(evs, runs.Make(runs.KindMessage, runs.MessageData{Text: fmt.Sprintf("%d/%d/%d", w, i, k)}))
					}
					last, err := s.Append(context.Background(), "run_own", evs...)
					if err != nil {
						t.Error(err)
						return
					}
					lasts[w] = append(lasts[w], last)
				}
			})
		}
		wg.Wait()
		evs, err := s.Events(t.Context(), "run_own", 0, 10_000)
		must(t, err)
		bySeq := map[int64]string{}
		for i, e := range evs {
			if e.Seq != int64(i) {
				t.Fatalf("event %d has seq %d", i, e.Seq)
			}
			var m runs.MessageData
			must(t, json.Unmarshal(e.Data, &m))
			bySeq[e.Seq] = m.Text
		}
		for w := range writers {
			for i, last := range lasts[w] {
				k := i % 3
				// The caller's events sit together, ending at the seq it was given.
				for j := 0; j <= k; j++ {
					want := fmt.Sprintf("%d/%d/%d", w, i, k-j)
					if got := bySeq[last-int64(j)]; got != want {
						t.Fatalf("writer %d append %d: seq %d holds %q, want %q", w, i, last-int64(j), got, want)
					}
				}
				if i > 0 && last <= lasts[w][i-1] {
					t.Fatalf("writer %d: append %d got seq %d after %d", w, i, last, lasts[w][i-1])
				}
			}
		}
	})

	t.Run("one racing append's bad event fails that append alone", func(t *testing.T) {
		s := newRuns(t).Store
		newRun(t, s, "run_mixed", "")
		const writers = 24
		var wg sync.WaitGroup
		var good atomic.Int64
		for w := range writers {
			wg.Go(func() {
				ev := runs.Make(runs.KindMessage, runs.MessageData{Text: fmt.Sprint(w)})
				if w%4 == 0 {
					ev = runs.NewEvent{Kind: runs.KindHeartbeat, Data: json.RawMessage(`{}`)} // never stored
				}
				_, err := s.Append(context.Background(), "run_mixed", ev)
				if (err != nil) != (w%4 == 0) {
					t.Errorf("writer %d: err %v", w, err)
				}
				if err == nil {
					good.Add(1)
				}
			})
		}
		wg.Wait()
		evs, err := s.Events(t.Context(), "run_mixed", 0, 1000)
		must(t, err)
		if int64(len(evs)) != 1+good.Load() || good.Load() != writers*3/4 {
			t.Fatalf("%d events for %d good appends", len(evs), good.Load())
		}
	})
}
