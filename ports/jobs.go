package ports

import (
	"context"
	"time"
)

// JobLeases keeps one lease row per scheduled job, shared by every replica:
// the job's next run time and who is running it until when. A job runs on one
// replica at a time because only one can hold its lease; when that replica
// dies, the lease runs out and a peer takes the job at its next turn.
type JobLeases interface {
	// Claim takes job's lease for holder until leaseFor from now, if the job
	// is due (its next run time has come) and nobody holds a current lease.
	// claimed is false, and nothing changes, otherwise.
	Claim(ctx context.Context, job, holder string, leaseFor time.Duration) (claimed bool, err error)
	// Finish gives the lease back, records how the run went and makes the job
	// due again after next. A holder whose lease was taken by another (it ran
	// out) changes nothing: held is false.
	Finish(ctx context.Context, job, holder string, next time.Duration, run JobRun) (held bool, err error)
	// Jobs lists every job's lease row, for operators and health.
	Jobs(ctx context.Context) ([]JobState, error)
}

// JobRun is how one run of a job went.
type JobRun struct {
	Outcome string // "ok", "failed" or "overran" (past its deadline)
	Items   int64  // what it handled: runs ended, rows deleted…
	Error   string // the error's text when it failed
}

// JobState is one job's lease row.
type JobState struct {
	Name       string
	NextAt     time.Time
	Holder     string // empty when nobody runs it
	LeaseUntil time.Time
	StartedAt  time.Time
	FinishedAt time.Time
	Last       JobRun
	Runs       int64
}
