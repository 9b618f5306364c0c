package porttest

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petal-near/petal/ports"
)

// JobLeasesContract runs the JobLeases contract against the keepers
// newLeases makes (fresh, with no job yet).
func JobLeasesContract(t *testing.T, newLeases func(t *testing.T) ports.JobLeases) {
	claim := func(t *testing.T, l ports.JobLeases, job, holder string, leaseFor time.Duration) bool {
		t.Helper()
		ok, err := l.Claim(t.Context(), job, holder, leaseFor)
		must(t, err)
		return ok
	}
	finish := func(t *testing.T, l ports.JobLeases, job, holder string, next time.Duration, run ports.JobRun) bool {
		t.Helper()
		held, err := l.Finish(t.Context(), job, holder, next, run)
		must(t, err)
		return held
	}

	t.Run("one holder at a time; the holder finishes and the job waits its next turn", func(t *testing.T) {
		l := newLeases(t)
		if !claim(t, l, "sweep", "proc_a", time.Minute) {
			t.Fatal("the first claim of a new job takes it")
		}
		if claim(t, l, "sweep", "proc_b", time.Minute) {
			t.Fatal("a job held by another is not taken")
		}
		if finish(t, l, "sweep", "proc_b", time.Hour, ports.JobRun{Outcome: "ok"}) {
			t.Fatal("only the holder finishes")
		}
		if !finish(t, l, "sweep", "proc_a", time.Hour, ports.JobRun{Outcome: "ok", Items: 3}) {
			t.Fatal("the holder finishes")
		}
		if claim(t, l, "sweep", "proc_b", time.Minute) {
			t.Fatal("a finished job is not due before its next turn")
		}
		jobs, err := l.Jobs(t.Context())
		must(t, err)
		if len(jobs) != 1 || jobs[0].Name != "sweep" || jobs[0].Holder != "" || jobs[0].Runs != 1 ||
			jobs[0].Last.Outcome != "ok" || jobs[0].Last.Items != 3 || !jobs[0].NextAt.After(jobs[0].FinishedAt) {
			t.Fatalf("jobs: %+v", jobs)
		}
	})

	t.Run("a job due again at once is taken again; jobs are apart", func(t *testing.T) {
		l := newLeases(t)
		if !claim(t, l, "a", "proc_a", time.Minute) || !claim(t, l, "b", "proc_a", time.Minute) {
			t.Fatal("two jobs are held apart")
		}
		if !finish(t, l, "a", "proc_a", 0, ports.JobRun{Outcome: "failed", Error: "boom"}) {
			t.Fatal("finish a")
		}
		if !claim(t, l, "a", "proc_b", time.Minute) {
			t.Fatal("a job due at once is taken by the next claimer")
		}
		jobs, err := l.Jobs(t.Context())
		must(t, err)
		if len(jobs) != 2 || jobs[0].Name != "a" || jobs[0].Holder != "proc_b" || jobs[0].Last.Error != "boom" || jobs[1].Holder != "proc_a" {
			t.Fatalf("jobs: %+v", jobs)
		}
	})

	t.Run("a lease that ran out is taken by another, and its old holder's finish changes nothing", func(t *testing.T) {
		l := newLeases(t)
		if !claim(t, l, "sweep", "proc_dead", -time.Second) { // a lease already run out
			t.Fatal("first claim")
		}
		if !claim(t, l, "sweep", "proc_b", time.Minute) {
			t.Fatal("a lapsed lease is taken")
		}
		if finish(t, l, "sweep", "proc_dead", time.Hour, ports.JobRun{Outcome: "overran"}) {
			t.Fatal("the old holder's finish changes nothing")
		}
		jobs, err := l.Jobs(t.Context())
		must(t, err)
		if len(jobs) != 1 || jobs[0].Holder != "proc_b" || jobs[0].Runs != 0 {
			t.Fatalf("jobs: %+v", jobs)
		}
	})

	t.Run("twenty claimers at once: one wins", func(t *testing.T) {
		l := newLeases(t)
		var won atomic.Int32
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				ok, err := l.Claim(t.Context(), "sweep", fmt.Sprintf("proc_%d", i), time.Minute)
				if err != nil {
					t.Error(err)
				}
				if ok {
					won.Add(1)
				}
			})
		}
		wg.Wait()
		if won.Load() != 1 {
			t.Fatalf("%d claimers won", won.Load())
		}
	})
}
