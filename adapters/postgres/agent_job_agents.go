package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/errs"
)

// A person's agents in the job store: their links (only the token's hash
// kept) and their workers' places and presence.

// CreateLink implements ports.AgentJobs.
func (s *AgentJobRepository) CreateLink(ctx context.Context, l agentjobs.Link) error {
	_, err := s.db.Pool.Exec(ctx, `INSERT INTO agent_links (id, owner, token_sha256, created_at) VALUES ($1, $2, $3, $4)`,
		l.ID, l.Owner, l.TokenSHA256, l.CreatedAt)
	if err != nil {
		return fmt.Errorf("postgres: create agent link: %w", err)
	}
	return nil
}

func scanAgentLink(row pgx.Row) (agentjobs.Link, error) {
	var l agentjobs.Link
	err := row.Scan(&l.ID, &l.Owner, &l.TokenSHA256, &l.CreatedAt, &l.RevokedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return l, agentjobs.NotFound("agent link")
	}
	if err != nil {
		return l, fmt.Errorf("postgres: read agent link: %w", err)
	}
	l.CreatedAt = l.CreatedAt.UTC()
	return l, nil
}

// LinkByToken implements ports.AgentJobs.
func (s *AgentJobRepository) LinkByToken(ctx context.Context, hash string) (agentjobs.Link, error) {
	return scanAgentLink(s.db.Pool.QueryRow(ctx, `SELECT id, owner, token_sha256, created_at, revoked_at FROM agent_links WHERE token_sha256 = $1`, hash))
}

// Links implements ports.AgentJobs.
func (s *AgentJobRepository) Links(ctx context.Context, owner string) ([]agentjobs.Link, error) {
	rows, err := s.db.Pool.Query(ctx, `SELECT id, owner, token_sha256, created_at, revoked_at FROM agent_links
WHERE owner = $1 AND revoked_at IS NULL ORDER BY created_at, id LIMIT 1000`, owner)
	if err != nil {
		return nil, fmt.Errorf("postgres: agent links: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (agentjobs.Link, error) { return scanAgentLink(row) })
}

// RevokeLinks implements ports.AgentJobs.
func (s *AgentJobRepository) RevokeLinks(ctx context.Context, owner, id string, at time.Time) (int, error) {
	tag, err := s.db.Pool.Exec(ctx, `UPDATE agent_links SET revoked_at = $3
WHERE owner = $1 AND ($2 = '' OR id = $2) AND revoked_at IS NULL`, owner, id, at)
	if err != nil {
		return 0, fmt.Errorf("postgres: revoke agent links: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

const workerColumns = `owner, agent, worker, name, n, can, first_seen, last_seen, waiting_until`

func scanWorker(row pgx.Row, extra ...any) (agentjobs.Worker, error) {
	var w agentjobs.Worker
	err := row.Scan(append([]any{&w.Owner, &w.Agent, &w.Worker, &w.Name, &w.N, &w.Can, &w.FirstSeen, &w.LastSeen, &w.WaitingUntil}, extra...)...)
	if err != nil {
		return w, fmt.Errorf("postgres: read worker: %w", err)
	}
	w.FirstSeen, w.LastSeen = w.FirstSeen.UTC(), w.LastSeen.UTC()
	return w, nil
}

// Seen implements ports.AgentJobs. A transaction-scoped advisory lock on the
// agent keeps two new workers from taking one place or passing the cap.
func (s *AgentJobRepository) Seen(ctx context.Context, w agentjobs.Worker, maxWorkers, maxAgents int) (agentjobs.Worker, error) {
	// A worker seen before (every wait but its first) is one statement.
	out, err := scanWorker(s.db.Pool.QueryRow(ctx, `UPDATE agent_workers SET name = $4, can = coalesce($5, can), last_seen = $6,
	waiting_until = $7 WHERE owner = $1 AND agent = $2 AND worker = $3 RETURNING `+workerColumns,
		w.Owner, w.Agent, w.Worker, w.Name, w.Can, w.LastSeen, w.WaitingUntil))
	if err == nil || !errors.Is(err, pgx.ErrNoRows) {
		return out, err
	}
	err = pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		// One lock per person: a new worker counts the person's agents too.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('workers ' || $1, 0))`, w.Owner); err != nil {
			return err
		}
		var count, last int
		if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(max(n), 0) FROM agent_workers WHERE owner = $1 AND agent = $2`,
			w.Owner, w.Agent).Scan(&count, &last); err != nil {
			return err
		}
		if count >= maxWorkers {
			return agentjobs.TooManyWorkers()
		}
		if count == 0 {
			var agents int
			if err := tx.QueryRow(ctx, `SELECT count(DISTINCT agent) FROM agent_workers WHERE owner = $1`, w.Owner).Scan(&agents); err != nil {
				return err
			}
			if agents >= maxAgents {
				return agentjobs.TooManyAgents()
			}
		}
		var err error
		out, err = scanWorker(tx.QueryRow(ctx, `INSERT INTO agent_workers (`+workerColumns+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)
ON CONFLICT (owner, agent, worker) DO UPDATE SET name = excluded.name, can = coalesce(excluded.can, agent_workers.can),
	last_seen = excluded.last_seen, waiting_until = excluded.waiting_until
RETURNING `+workerColumns, w.Owner, w.Agent, w.Worker, w.Name, last+1, w.Can, w.LastSeen, w.WaitingUntil))
		return err
	})
	if err != nil {
		if _, ok := errs.As(err); ok {
			return out, err
		}
		return out, fmt.Errorf("postgres: worker seen: %w", err)
	}
	return out, nil
}

// WaitEnded implements ports.AgentJobs.
func (s *AgentJobRepository) WaitEnded(ctx context.Context, owner, agent, worker string, at time.Time) error {
	_, err := s.db.Pool.Exec(ctx, `UPDATE agent_workers SET waiting_until = NULL, last_seen = greatest(last_seen, $4)
WHERE owner = $1 AND agent = $2 AND worker = $3`, owner, agent, worker, at)
	if err != nil {
		return fmt.Errorf("postgres: wait ended: %w", err)
	}
	return nil
}

// Workers implements ports.AgentJobs.
func (s *AgentJobRepository) Workers(ctx context.Context, owner string) ([]agentjobs.Worker, error) {
	rows, err := s.db.Pool.Query(ctx, `SELECT w.owner, w.agent, w.worker, w.name, w.n, w.can, w.first_seen, w.last_seen, w.waiting_until, j.id
FROM agent_workers w
LEFT JOIN LATERAL (SELECT id FROM agent_jobs j WHERE j.owner = w.owner AND j.status = 'taken'
	AND lower(j.taken_by) = w.agent AND j.worker = w.worker ORDER BY j.updated_at DESC LIMIT 1) j ON true
WHERE w.owner = $1
ORDER BY (SELECT min(first_seen) FROM agent_workers a WHERE a.owner = w.owner AND a.agent = w.agent), w.agent, w.n
LIMIT 1000`, owner)
	if err != nil {
		return nil, fmt.Errorf("postgres: workers: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (agentjobs.Worker, error) {
		var job *string
		w, err := scanWorker(row, &job)
		w.Job = job
		return w, err
	})
}
