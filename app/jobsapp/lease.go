package jobsapp

import (
	"context"
	"log/slog"
	"time"

	"github.com/petal-near/petal/app/internal/ids"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// LeaseStale is how old a process's heartbeat may be before the process is
// taken for gone; leases beat every LeaseEvery. The ledger releases holds by
// the same rule.
const (
	LeaseStale = 30 * time.Second
	LeaseEvery = 5 * time.Second
)

// ProcessID names this serving process: its lease, and the runs its jobs hold.
type ProcessID string

// NewProcessID makes a fresh process id.
func NewProcessID(random ports.Random) (ProcessID, error) {
	h, err := ids.RandomHex(random, 12)
	return ProcessID("proc_" + h), err
}

// FenceAfter is how long a process goes on without a heartbeat that landed
// before it stops its own jobs: well before LeaseStale, when peers take the
// lease for dead and sweep its runs, so the process's jobs have ended (and
// stopped spending) before anyone else ends them.
const FenceAfter = LeaseStale - 2*LeaseEvery

// Fencer is what KeepLease stops when the lease lapses (the agent's jobs).
type Fencer interface {
	// Fence ends every job this process holds (their runs interrupted) and
	// refuses new ones until Unfence.
	Fence()
	Unfence()
}

// KeepLease beats p's lease every LeaseEvery until ctx ends. Each heartbeat
// has LeaseEvery to land. When none has landed for FenceAfter (the database
// unreachable, the row locked, the process paused), or the lease is found
// gone (peers took the process for dead), f is fenced; the next heartbeat
// that lands (re-taking a lease found gone) lifts it.
func KeepLease(ctx context.Context, leases ports.Leases, p ports.Process, f Fencer, log *slog.Logger) {
	t := time.NewTicker(LeaseEvery)
	defer t.Stop()
	landed := time.Now() // when the last heartbeat that landed was sent
	fenced := false
	fence := func(why string, args ...any) {
		if !fenced {
			log.Error("process lease lapsed: ending this process's runs before a peer sweeps them", append([]any{"why", why}, args...)...)
			f.Fence()
			fenced = true
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if since := time.Since(landed); since > FenceAfter {
			// Checked before beating: a process paused past the lease
			// (a stopped VM, a long GC) fences at once on waking.
			fence("no heartbeat has landed", "for_s", int(since.Seconds()))
		}
		sent := time.Now()
		hctx, cancel := context.WithTimeout(ctx, LeaseEvery)
		err := leases.Heartbeat(hctx, p.ID)
		if errs.Is(err, errs.NotFound) {
			// Taken for dead: whatever this process ran may have been swept.
			fence("the lease was gone")
			err = leases.Register(hctx, p)
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			log.Warn("process lease heartbeat failed", "err", err)
			continue
		}
		landed = sent
		if fenced {
			log.Info("process lease beats again: taking new runs")
			f.Unfence()
			fenced = false
		}
	}
}
