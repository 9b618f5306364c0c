package app

import (
	"context"
	"errors"
	"time"
)

// Sweep timing. A replica killed at T beat its lease last at T at the latest,
// so its lease lapses by T+LeaseStale (30 s) and the next sweep, at most
// SweepEvery later, ends its runs: within 45 s of the kill, with nothing
// restarted.
const (
	SweepEvery    = 5 * time.Second
	SweepDeadline = 30 * time.Second
)

// SweepJob is the scheduled job that ends the runs of processes whose lease
// has lapsed (interrupted: their error event, no done, which every replica's
// viewers see through the bus) and then gives back their ledger holds. One
// replica sweeps at a time; any replica may.
func SweepJob(agent *AgentService, ledger *Ledger) Job {
	return Job{Name: "sweep_lapsed_leases", Every: SweepEvery, Deadline: SweepDeadline,
		Run: func(ctx context.Context) (int64, error) {
			ended, err := agent.Recover(ctx)
			// The holds go back after the runs end, whatever the runs' sweep
			// managed: a hold of a dead process is never settled by anyone.
			released, herr := ledger.ReleaseOrphanHolds(ctx)
			return int64(len(ended) + released), errors.Join(err, herr)
		}}
}
