package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// JobLeases keeps scheduled jobs' lease rows (scheduled_jobs, migrations/000012_scheduled_jobs).
// Times are the database's (now()), so replicas' clocks don't matter.
type JobLeases struct {
	db *DB
}

var _ ports.JobLeases = (*JobLeases)(nil)

// NewJobLeases makes the job lease keeper over db.
func NewJobLeases(db *DB) *JobLeases { return &JobLeases{db: db} }

// Claim implements ports.JobLeases: one statement, which makes the row the
// first time and otherwise takes it only when due and free (or its lease ran
// out), so two replicas racing for it can't both win.
func (l *JobLeases) Claim(ctx context.Context, job, holder string, leaseFor time.Duration) (bool, error) {
	var claimed bool
	err := l.db.Pool.QueryRow(ctx, `INSERT INTO scheduled_jobs AS j (name, holder, lease_until, started_at)
VALUES ($1, $2, now() + make_interval(secs => $3), now())
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until, started_at = excluded.started_at
WHERE j.next_at <= now() AND (j.holder IS NULL OR j.lease_until < now())
RETURNING true`, job, holder, leaseFor.Seconds()).Scan(&claimed)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim job %s: %w", job, err)
	}
	return claimed, nil
}

// Finish implements ports.JobLeases.
func (l *JobLeases) Finish(ctx context.Context, job, holder string, next time.Duration, run ports.JobRun) (bool, error) {
	tag, err := l.db.Pool.Exec(ctx, `UPDATE scheduled_jobs SET holder = NULL, lease_until = NULL, finished_at = now(),
next_at = now() + make_interval(secs => $3), last_outcome = $4, last_items = $5, last_error = $6, runs = runs + 1
WHERE name = $1 AND holder = $2`, job, holder, next.Seconds(), run.Outcome, run.Items, run.Error)
	if err != nil {
		return false, fmt.Errorf("finish job %s: %w", job, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Jobs implements ports.JobLeases.
func (l *JobLeases) Jobs(ctx context.Context) ([]ports.JobState, error) {
	rows, err := l.db.Pool.Query(ctx, `SELECT name, next_at, coalesce(holder, ''), coalesce(lease_until, 'epoch'), coalesce(started_at, 'epoch'),
coalesce(finished_at, 'epoch'), coalesce(last_outcome, ''), last_items, last_error, runs FROM scheduled_jobs ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ports.JobState, error) {
		var s ports.JobState
		err := r.Scan(&s.Name, &s.NextAt, &s.Holder, &s.LeaseUntil, &s.StartedAt, &s.FinishedAt, &s.Last.Outcome, &s.Last.Items, &s.Last.Error, &s.Runs)
		return s, err
	})
}
