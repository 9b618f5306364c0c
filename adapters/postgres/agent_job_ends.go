package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/errs"
)

// How a job ends or opens again: its owner stopping or reopening it, its
// worker reporting (the rest of the store is in agentjobs.go).

// lockOwned locks owner's job, or answers the one not-found.
func lockOwned(ctx context.Context, tx pgx.Tx, owner, id string) (agentjobs.Job, error) {
	return scanJob(tx.QueryRow(ctx, `SELECT `+jobColumns+` FROM agent_jobs WHERE id = $1 AND owner = $2 FOR UPDATE`, id, owner))
}

func wrongState(j agentjobs.Job, want string) *errs.Error {
	return errs.Newf(errs.BadInput, "job %s is %s; only %s", j.ID, j.Status, want)
}

// Stop implements ports.AgentJobs.
func (s *AgentJobRepository) Stop(ctx context.Context, owner, id string, at time.Time) (agentjobs.Job, error) {
	var out agentjobs.Job
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		j, err := lockOwned(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		if !j.CanStop() {
			return wrongState(j, "an open or taken job can be stopped")
		}
		if err := endTakes(ctx, tx, id, agentjobs.EndedStopped, at, ""); err != nil {
			return err
		}
		out, err = scanJob(tx.QueryRow(ctx, `UPDATE agent_jobs SET status = 'stopped', updated_at = $2 WHERE id = $1 RETURNING `+jobColumns, id, at))
		return err
	})
	return out, storeErr("stop job", err)
}

// Reopen implements ports.AgentJobs.
func (s *AgentJobRepository) Reopen(ctx context.Context, owner, id, to string, at time.Time) (agentjobs.Job, error) {
	var out agentjobs.Job
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		j, err := lockOwned(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		if !j.CanRetry() {
			return wrongState(j, "a taken, failed or stopped job can be sent again")
		}
		if err := endTakes(ctx, tx, id, agentjobs.EndedHandedOver, at, ""); err != nil {
			return err
		}
		out, err = scanJob(tx.QueryRow(ctx, `UPDATE agent_jobs SET status = 'open', to_agent = $3, taken_by = '', worker = '', n = 0,
	report = '', last_seen = NULL, updated_at = $2 WHERE id = $1 RETURNING `+jobColumns, id, at, to))
		return err
	})
	return out, storeErr("reopen job", err)
}

// Report implements ports.AgentJobs. A part locks its whole group first, in
// one order, so of two last parts reporting at once the second sees the
// first's report and only one of them ends the group.
func (s *AgentJobRepository) Report(ctx context.Context, id, linkID string, status agentjobs.Status, summary string, at time.Time) (agentjobs.Job, bool, error) {
	var out agentjobs.Job
	var groupDone bool
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		var partOf *string
		err := tx.QueryRow(ctx, `SELECT part_of FROM agent_jobs WHERE id = $1`, id).Scan(&partOf)
		if errors.Is(err, pgx.ErrNoRows) {
			return agentjobs.NotFound("job")
		}
		if err != nil {
			return err
		}
		if partOf != nil {
			if _, err := tx.Exec(ctx, `SELECT id FROM agent_jobs WHERE part_of = $1 ORDER BY id FOR UPDATE`, *partOf); err != nil {
				return err
			}
		}
		j, err := scanJob(tx.QueryRow(ctx, `SELECT `+jobColumns+` FROM agent_jobs WHERE id = $1 FOR UPDATE`, id))
		if err != nil {
			return err
		}
		if linkID != "" {
			var ended *string
			var job string
			err := tx.QueryRow(ctx, `SELECT job, ended FROM agent_job_takes WHERE link_id = $1`, linkID).Scan(&job, &ended)
			switch {
			case errors.Is(err, pgx.ErrNoRows) || (err == nil && job != id):
				return agentjobs.NotFound("job")
			case err != nil:
				return err
			case ended != nil && *ended != "released" && *ended != agentjobs.EndedReported:
				return agentjobs.EndedError(*ended)
			case ended != nil && *ended == agentjobs.EndedReported:
				// Reported through this take already: the job's state answers.
			case ended != nil:
				return agentjobs.NotFound("job")
			}
		}
		if j.Status == agentjobs.Stopped {
			return agentjobs.EndedError(agentjobs.EndedStopped)
		}
		if j.Status != agentjobs.Taken {
			return wrongState(j, "a taken job can be reported")
		}
		out, err = scanJob(tx.QueryRow(ctx, `UPDATE agent_jobs SET status = $2, report = $3, updated_at = $4, last_seen = $4
WHERE id = $1 RETURNING `+jobColumns, id, string(status), summary, at))
		if err != nil {
			return err
		}
		// The worker's continue link lives as long as its take: it ends with
		// the report, freeing its place on the conversation.
		if err := endTakes(ctx, tx, id, agentjobs.EndedReported, at, ""); err != nil {
			return err
		}
		if partOf != nil {
			var left int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM agent_jobs WHERE part_of = $1 AND status NOT IN ('done', 'failed', 'stopped')`,
				*partOf).Scan(&left); err != nil {
				return err
			}
			groupDone = left == 0
		}
		return nil
	})
	return out, groupDone, storeErr("report job", err)
}
