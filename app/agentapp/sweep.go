package agentapp

import (
	"context"
	"errors"
	"time"

	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/ports"
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
// Its metrics count what the sweeps of this process ended.
func SweepJob(agent *AgentService, ledger *moneyapp.Ledger, m ports.Metrics) jobsapp.Job {
	m = ports.MetricsOrNone(m)
	ended := m.Counter("petal_sweep_runs_ended_total", "Runs of processes whose lease lapsed that this process's sweeps ended (interrupted).")
	released := m.Counter("petal_sweep_holds_released_total", "Ledger holds of processes whose lease lapsed that this process's sweeps released.")
	return jobsapp.Job{Name: "sweep_lapsed_leases", Every: SweepEvery, Deadline: SweepDeadline,
		Run: func(ctx context.Context) (int64, error) {
			runs, err := agent.Recover(ctx)
			ended.Add(float64(len(runs)))
			// The holds go back after the runs end, whatever the runs' sweep
			// managed: a hold of a dead process is never settled by anyone.
			holds, herr := ledger.ReleaseOrphanHolds(ctx)
			// And the holds a live process gave up releasing, past any chat.
			stuck, serr := ledger.ReleaseStuckHolds(ctx, agent.StuckAfter())
			holds += stuck
			released.Add(float64(holds))
			return int64(len(runs) + holds), errors.Join(err, herr, serr)
		}}
}
