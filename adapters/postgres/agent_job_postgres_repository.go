package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/ports"
)

// AgentJobRepository keeps agent links, workers and jobs (migrations/000023). A take is
// one transaction: the oldest open job, locked with FOR UPDATE SKIP LOCKED so
// racing takers (on any replica) each get another, marked taken, with its
// worker's continue link made beside it.
type AgentJobRepository struct{ db *DB }

var _ ports.AgentJobs = (*AgentJobRepository)(nil)

// NewAgentJobRepository makes the store over db.
func NewAgentJobRepository(db *DB) *AgentJobRepository { return &AgentJobRepository{db: db} }

const jobColumns = `id, owner, coalesce(run_id, ''), exploration, conversation, coalesce(part_of, ''), part, parts, kind, title, brief, inputs,
	to_agent, status, taken_by, worker, n, report, created_at, updated_at, last_seen`

func scanJob(row pgx.Row, extra ...any) (agentjobs.Job, error) {
	var j agentjobs.Job
	var status string
	err := row.Scan(append([]any{&j.ID, &j.Owner, &j.Run, &j.Exploration, &j.Conversation, &j.PartOf, &j.Part, &j.Parts, &j.Kind, &j.Title, &j.Brief, &j.Inputs,
		&j.To, &status, &j.TakenBy, &j.Worker, &j.N, &j.Report, &j.CreatedAt, &j.UpdatedAt, &j.LastSeen}, extra...)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return j, agentjobs.NotFound("job")
	}
	if err != nil {
		return j, fmt.Errorf("postgres: read job: %w", err)
	}
	j.Status = agentjobs.Status(status)
	j.CreatedAt, j.UpdatedAt = j.CreatedAt.UTC(), j.UpdatedAt.UTC()
	if j.LastSeen != nil {
		t := j.LastSeen.UTC()
		j.LastSeen = &t
	}
	return j, nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Open implements ports.AgentJobs. The owner's open jobs are counted under
// a lock on the owner, so two hand-outs can't pass the cap together.
func (s *AgentJobRepository) Open(ctx context.Context, jobs []agentjobs.Job, conv explorations.Exploration, maxOpen int) error {
	if len(jobs) == 0 {
		return nil
	}
	owner := jobs[0].Owner
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('jobs ' || $1, 0))`, owner); err != nil {
			return err
		}
		var open int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM agent_jobs WHERE owner = $1 AND status = 'open'`, owner).Scan(&open); err != nil {
			return err
		}
		if open+len(jobs) > maxOpen {
			return agentjobs.TooManyOpen()
		}
		if conv.ID != "" {
			if _, err := tx.Exec(ctx, `INSERT INTO explorations (id, owner, question, title, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)`,
				conv.ID, conv.Owner, conv.Question, conv.Title, conv.CreatedAt); err != nil {
				return err
			}
		}
		for _, j := range jobs {
			var inputs any
			if j.Inputs != nil {
				inputs = string(j.Inputs)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO agent_jobs (id, owner, run_id, exploration, conversation, part_of, part, parts, kind, title, brief,
	inputs, to_agent, status, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, 'open', $14, $14)`,
				j.ID, j.Owner, nullable(j.Run), j.Exploration, j.Conversation, nullable(j.PartOf), j.Part, j.Parts, j.Kind, j.Title, j.Brief,
				inputs, j.To, j.CreatedAt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if _, ok := errs.As(err); ok {
			return err
		}
		return fmt.Errorf("postgres: open jobs: %w", err)
	}
	return nil
}

// Take implements ports.AgentJobs: one statement, so one round trip and
// its own transaction: the oldest open job locked with FOR UPDATE SKIP
// LOCKED, marked taken, its worker's continue link and the take written,
// the worker's wait marked over, and the conversation's question read.
// StillThere is asked just before the statement is sent.
func (s *AgentJobRepository) Take(ctx context.Context, t ports.Take) (*agentjobs.Job, error) {
	if t.StillThere != nil {
		if err := t.StillThere(); err != nil {
			return nil, err
		}
	}
	var openedAt time.Time
	var question string
	// A job whose conversation has no room for its worker's link is passed
	// over (it waits open); the trigger on exploration_links is what holds
	// the cap when two takes race for the last place.
	// The link taken through is locked FOR SHARE: a revoke waits for a take
	// under way, and a take waits for a revoke under way and then sees it.
	j, err := scanJob(s.db.Pool.QueryRow(ctx, `WITH through AS (
	SELECT ($13 = '' OR EXISTS (SELECT 1 FROM agent_links WHERE id = $13 AND owner = $1 AND revoked_at IS NULL FOR SHARE))
		AND ($14 = '' OR EXISTS (SELECT 1 FROM exploration_links WHERE id = $14 AND revoked_at IS NULL FOR SHARE)) AS live),
pick AS (
	SELECT id, updated_at AS opened_at FROM agent_jobs
	WHERE owner = $1 AND status = 'open' AND (to_agent = $2 OR to_agent = '') AND ($7 = '' OR id = $7)
		AND ($8 = '' OR exploration = $8 OR conversation = $8)
		AND coalesce((SELECT live FROM exploration_live_links WHERE exploration = agent_jobs.conversation), 0) < $12
		AND (SELECT live FROM through)
	ORDER BY to_agent = '', created_at, id
	LIMIT 1 FOR UPDATE SKIP LOCKED),
taken AS (
	UPDATE agent_jobs j SET status = 'taken', taken_by = $3, worker = $4, n = $5, updated_at = $6, last_seen = $6
	FROM pick WHERE j.id = pick.id
	RETURNING `+jobColumnsOfJ+`, pick.opened_at),
link AS (
	INSERT INTO exploration_links (id, exploration, scope, token_sha256, created_at)
	SELECT $9, conversation, 'continue', $10, $6 FROM taken),
take AS (
	INSERT INTO agent_job_takes (link_id, job, process, taken_at) SELECT $9, id, $11, $6 FROM taken),
waited AS (
	UPDATE agent_workers SET waiting_until = NULL, last_seen = $6
	WHERE owner = $1 AND agent = $2 AND worker = $4 AND EXISTS (SELECT 1 FROM taken))
SELECT taken.*, coalesce(e.question, '') FROM taken LEFT JOIN explorations e ON e.id = taken.conversation`,
		t.Owner, t.Agent, t.Name, t.Worker, t.N, t.At, t.OnlyJob, t.Exploration, t.LinkID, t.LinkSHA256, t.Process,
		explorations.MaxLiveLinks, t.AgentLink, t.ExplorationLink), &openedAt, &question)
	if errs.Is(err, errs.NotFound) {
		// Nothing taken: say why when it is the link.
		if why := s.deadLink(ctx, t); why != nil {
			return nil, why
		}
	}
	if tooManyLinks(err) || (errs.Is(err, errs.NotFound) && t.OnlyJob != "") {
		if t.OnlyJob != "" && s.conversationFull(ctx, t.OnlyJob) {
			return nil, agentjobs.ConversationFull(explorations.MaxLiveLinks)
		}
		return nil, nil // the last place went to another take: nothing taken
	}
	if errs.Is(err, errs.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	j.OpenedAt, j.Question = openedAt.UTC(), question
	return &j, nil
}

// deadLink is the refusal of a take whose link doesn't work (revoked, or
// never the owner's), nil when it works or when the store can't say (the
// take took nothing either way).
func (s *AgentJobRepository) deadLink(ctx context.Context, t ports.Take) error {
	if t.AgentLink == "" && t.ExplorationLink == "" {
		return nil
	}
	var agentLive, explorationLive bool
	err := s.db.Pool.QueryRow(ctx, `SELECT
	$1 = '' OR EXISTS (SELECT 1 FROM agent_links WHERE id = $1 AND owner = $3 AND revoked_at IS NULL),
	$2 = '' OR EXISTS (SELECT 1 FROM exploration_links WHERE id = $2 AND revoked_at IS NULL)`,
		t.AgentLink, t.ExplorationLink, t.Owner).Scan(&agentLive, &explorationLive)
	switch {
	case err != nil:
		return nil
	case !agentLive:
		return agentjobs.BadAgentLink()
	case !explorationLive:
		return explorations.NotFound()
	}
	return nil
}

// conversationFull says whether job is open with no room left on its
// conversation for a worker's link.
func (s *AgentJobRepository) conversationFull(ctx context.Context, job string) bool {
	var full bool
	err := s.db.Pool.QueryRow(ctx, `SELECT coalesce(c.live, 0) >= $2 FROM agent_jobs j
LEFT JOIN exploration_live_links c ON c.exploration = j.conversation WHERE j.id = $1 AND j.status = 'open'`, job, explorations.MaxLiveLinks).Scan(&full)
	return err == nil && full
}

// jobColumnsOfJ is jobColumns on the alias j.
const jobColumnsOfJ = `j.id, j.owner, coalesce(j.run_id, ''), j.exploration, j.conversation, coalesce(j.part_of, ''), j.part, j.parts, j.kind,
	j.title, j.brief, j.inputs, j.to_agent, j.status, j.taken_by, j.worker, j.n, j.report, j.created_at, j.updated_at, j.last_seen`

// Delivered implements ports.AgentJobs.
func (s *AgentJobRepository) Delivered(ctx context.Context, linkID string, at time.Time) error {
	_, err := s.db.Pool.Exec(ctx, `UPDATE agent_job_takes SET delivered_at = $2 WHERE link_id = $1`, linkID, at)
	if err != nil {
		return fmt.Errorf("postgres: take delivered: %w", err)
	}
	return nil
}

// endTakes ends the job's current takes with why and revokes their links.
func endTakes(ctx context.Context, tx pgx.Tx, job, why string, at time.Time, only string) error {
	_, err := tx.Exec(ctx, `WITH ended AS (
	UPDATE agent_job_takes SET ended = $2 WHERE job = $1 AND ended IS NULL AND ($4 = '' OR link_id = $4) RETURNING link_id)
UPDATE exploration_links SET revoked_at = $3 WHERE id IN (SELECT link_id FROM ended) AND revoked_at IS NULL`, job, why, at, only)
	return err
}

// Release implements ports.AgentJobs.
func (s *AgentJobRepository) Release(ctx context.Context, linkID string, at time.Time) error {
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		var job string
		err := tx.QueryRow(ctx, `SELECT job FROM agent_job_takes WHERE link_id = $1 AND ended IS NULL AND delivered_at IS NULL FOR UPDATE`, linkID).Scan(&job)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE agent_jobs SET status = 'open', taken_by = '', worker = '', n = 0, updated_at = $2, last_seen = NULL
WHERE id = $1 AND status = 'taken'`, job, at); err != nil {
			return err
		}
		return endTakes(ctx, tx, job, "released", at, linkID)
	})
	if err != nil {
		return fmt.Errorf("postgres: release take: %w", err)
	}
	return nil
}

// ReleaseUndelivered implements ports.AgentJobs.
func (s *AgentJobRepository) ReleaseUndelivered(ctx context.Context, staleAfter time.Duration, limit int) ([]string, error) {
	rows, err := s.db.Pool.Query(ctx, `SELECT t.link_id, j.owner FROM agent_job_takes t JOIN agent_jobs j ON j.id = t.job
WHERE t.delivered_at IS NULL AND t.ended IS NULL AND NOT EXISTS (
	SELECT 1 FROM processes p WHERE p.id = t.process AND p.heartbeat_at > now() - make_interval(secs => $1))
ORDER BY t.taken_at LIMIT $2`, staleAfter.Seconds(), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: undelivered takes: %w", err)
	}
	type gone struct{ Link, Owner string }
	takes, err := pgx.CollectRows(rows, pgx.RowToStructByPos[gone])
	if err != nil {
		return nil, fmt.Errorf("postgres: undelivered takes: %w", err)
	}
	owners := []string{}
	for _, t := range takes {
		if err := s.Release(ctx, t.Link, time.Now().UTC()); err != nil {
			return owners, err
		}
		owners = append(owners, t.Owner)
	}
	return owners, nil
}

// Job implements ports.AgentJobs.
func (s *AgentJobRepository) Job(ctx context.Context, id string) (agentjobs.Job, error) {
	return scanJob(s.db.Pool.QueryRow(ctx, `SELECT `+jobColumns+` FROM agent_jobs WHERE id = $1`, id))
}

func (s *AgentJobRepository) collect(rows pgx.Rows, err error) ([]agentjobs.Job, error) {
	if err != nil {
		return nil, fmt.Errorf("postgres: jobs: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (agentjobs.Job, error) { return scanJob(row) })
}

// JobsOf implements ports.AgentJobs.
func (s *AgentJobRepository) JobsOf(ctx context.Context, exploration, afterID string, limit int) ([]agentjobs.Job, error) {
	return s.collect(s.db.Pool.Query(ctx, `SELECT `+jobColumns+` FROM agent_jobs
WHERE (exploration = $1 OR conversation = $1)
	AND ($2 = '' OR (created_at, id) > (SELECT created_at, id FROM agent_jobs WHERE id = $2))
ORDER BY created_at, id LIMIT $3`, exploration, afterID, limit))
}

// Group implements ports.AgentJobs.
func (s *AgentJobRepository) Group(ctx context.Context, partOf string) ([]agentjobs.Job, error) {
	return s.collect(s.db.Pool.Query(ctx, `SELECT `+jobColumns+` FROM agent_jobs WHERE part_of = $1 ORDER BY part, id LIMIT 100`, partOf))
}

// TakeOf implements ports.AgentJobs.
func (s *AgentJobRepository) TakeOf(ctx context.Context, linkID string) (ports.JobTake, error) {
	var t ports.JobTake
	var ended *string
	err := s.db.Pool.QueryRow(ctx, `SELECT link_id, job, ended, delivered_at IS NOT NULL FROM agent_job_takes WHERE link_id = $1`, linkID).
		Scan(&t.LinkID, &t.Job, &ended, &t.Delivered)
	if errors.Is(err, pgx.ErrNoRows) {
		return t, agentjobs.NotFound("take")
	}
	if err != nil {
		return t, fmt.Errorf("postgres: take: %w", err)
	}
	if ended != nil {
		t.Ended = *ended
	}
	return t, nil
}

// Touch implements ports.AgentJobs.
func (s *AgentJobRepository) Touch(ctx context.Context, linkID string, at time.Time) error {
	_, err := s.db.Pool.Exec(ctx, `UPDATE agent_jobs SET last_seen = $2
WHERE id = (SELECT job FROM agent_job_takes WHERE link_id = $1 AND ended IS NULL) AND (last_seen IS NULL OR last_seen < $2)`, linkID, at)
	if err != nil {
		return fmt.Errorf("postgres: touch job: %w", err)
	}
	return nil
}

// storeErr passes petal's errors through and wraps the rest.
func storeErr(what string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errs.As(err); ok {
		return err
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}
