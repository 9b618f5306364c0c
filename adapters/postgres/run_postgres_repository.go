package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// notifyChannel carries run notifications between processes: "e <run> <seq>"
// when a run's log grew, "s <run>" when someone asked it to stop. Ids only:
// a payload is capped at 8000 bytes and readers read the store anyway.
const notifyChannel = "petal_runs"

// RunRepository is the run store and event log on PostgreSQL.
type RunRepository struct {
	db      *DB
	bus     *EventBus // when set and listening, plain appends notify through it
	batcher *appendBatcher
	ended   ports.Counter
}

var _ ports.RunStore = (*RunRepository)(nil)

// NewRunRepository makes the run store over db.
func NewRunRepository(db *DB) *RunRepository {
	s := &RunRepository{db: db}
	s.batcher = newAppendBatcher(s.appendNow)
	return s.ObservedBy(ports.NoMetrics{})
}

// ObservedBy declares the store's metrics on m: the runs this process ended,
// by how.
func (s *RunRepository) ObservedBy(m ports.Metrics) *RunRepository {
	s.ended = m.Counter("petal_runs_ended_total",
		"Agent runs this process ended, by status (done, failed, stopped, interrupted; a sweep's ends count here as interrupted).", "status")
	return s
}

// PublishingThrough makes plain appends notify through bus, which wakes this
// process's viewers at once and batches the NOTIFYs other processes hear:
// PostgreSQL serialises the commits of notifying transactions, so a NOTIFY
// per append would cap appends across all runs. A crash between an append
// and its batched NOTIFY costs other processes' viewers up to their safety
// poll (5 s), never an event. Chats' first and last events still notify in
// their own transaction.
func (s *RunRepository) PublishingThrough(bus *EventBus) *RunRepository { s.bus = bus; return s }

// Create implements ports.RunStore.
func (s *RunRepository) Create(ctx context.Context, run runs.Run, first ...runs.NewEvent) (runs.Run, error) {
	thread, err := json.Marshal(nonNilThread(run.Thread))
	if err != nil {
		return run, err
	}
	err = pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO runs (id, owner, status, model, process_id, thread, draft, settings_model, settings_effort)
			VALUES ($1, NULLIF($2, ''), 'running', $3, NULLIF($4, ''), $5, $6, NULLIF($7, ''), NULLIF($8, ''))`,
			run.ID, run.Owner, run.Model, run.ProcessID, thread, nullJSON(run.Draft), run.Settings.Model, run.Settings.Effort)
		if err != nil {
			return fmt.Errorf("create run: %w", err)
		}
		_, err = appendTx(ctx, tx, run.ID, first)
		return err
	})
	if err != nil {
		return run, err
	}
	return s.Get(ctx, run.ID)
}

// Get implements ports.RunStore.
func (s *RunRepository) Get(ctx context.Context, id string) (runs.Run, error) {
	var r runs.Run
	var owner, process, exploration, pickModel, pickEffort *string
	var thread, draft, flower []byte
	err := s.db.Pool.QueryRow(ctx, `SELECT id, owner, status, model, process_id, thread, draft, flower, exploration, title, settings_model, settings_effort,
			next_seq, created_at, updated_at
		FROM runs WHERE id = $1`, id).Scan(&r.ID, &owner, &r.Status, &r.Model, &process, &thread, &draft, &flower, &exploration, &r.Title, &pickModel, &pickEffort,
		&r.NextSeq, &r.CreatedAt, &r.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, errs.Newf(errs.NotFound, "no run %s", id)
	}
	if err != nil {
		return r, fmt.Errorf("get run: %w", err)
	}
	if owner != nil {
		r.Owner = *owner
	}
	if process != nil {
		r.ProcessID = *process
	}
	if exploration != nil {
		r.Exploration = *exploration
	}
	if pickModel != nil {
		r.Settings.Model = *pickModel
	}
	if pickEffort != nil {
		r.Settings.Effort = *pickEffort
	}
	if err := json.Unmarshal(thread, &r.Thread); err != nil {
		return r, fmt.Errorf("run %s thread: %w", id, err)
	}
	r.Draft, r.Flower = draft, flower
	return r, nil
}

// Resume implements ports.RunStore.
func (s *RunRepository) Resume(ctx context.Context, id, processID string, thread []runs.Message, first ...runs.NewEvent) (runs.Run, error) {
	b, err := json.Marshal(nonNilThread(thread))
	if err != nil {
		return runs.Run{}, err
	}
	err = pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		var status runs.Status
		err := tx.QueryRow(ctx, `SELECT status FROM runs WHERE id = $1 FOR UPDATE`, id).Scan(&status)
		if errors.Is(err, pgx.ErrNoRows) {
			return errs.Newf(errs.NotFound, "no run %s", id)
		}
		if err != nil {
			return fmt.Errorf("resume run: %w", err)
		}
		if status == runs.Running {
			return errs.New(errs.Conflict, "this run is still going", "follow it at GET /api/v1/agent/runs/"+id+", or stop it first")
		}
		if _, err := tx.Exec(ctx, `UPDATE runs SET status = 'running', process_id = NULLIF($2, ''), thread = $3, updated_at = now() WHERE id = $1`,
			id, processID, b); err != nil {
			return fmt.Errorf("resume run: %w", err)
		}
		_, err = appendTx(ctx, tx, id, first)
		return err
	})
	if err != nil {
		return runs.Run{}, err
	}
	return s.Get(ctx, id)
}

// SaveThread implements ports.RunStore.
func (s *RunRepository) SaveThread(ctx context.Context, id string, thread []runs.Message) error {
	b, err := json.Marshal(nonNilThread(thread))
	if err != nil {
		return err
	}
	tag, err := s.db.Pool.Exec(ctx, `UPDATE runs SET thread = $2, updated_at = now() WHERE id = $1`, id, b)
	if err != nil {
		return fmt.Errorf("save thread: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return errs.Newf(errs.NotFound, "no run %s", id)
	}
	return nil
}

// SetExploration implements ports.RunStore.
func (s *RunRepository) SetExploration(ctx context.Context, id, exploration string) error {
	tag, err := s.db.Pool.Exec(ctx, `UPDATE runs SET exploration = $2, updated_at = now() WHERE id = $1`, id, exploration)
	if err != nil {
		return fmt.Errorf("set the run's exploration: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return errs.Newf(errs.NotFound, "no run %s", id)
	}
	return nil
}

// SetTitle implements ports.RunStore. Naming is activity: the conversation
// moves to the top of its owner's list.
func (s *RunRepository) SetTitle(ctx context.Context, id, title string) error {
	tag, err := s.db.Pool.Exec(ctx, `UPDATE runs SET title = $2, updated_at = now() WHERE id = $1`, id, title)
	if err != nil {
		return fmt.Errorf("name the run: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return errs.Newf(errs.NotFound, "no run %s", id)
	}
	return nil
}

// SetSettings implements ports.RunStore.
func (s *RunRepository) SetSettings(ctx context.Context, id string, settings runs.Settings) error {
	tag, err := s.db.Pool.Exec(ctx, `UPDATE runs SET settings_model = NULLIF($2, ''), settings_effort = NULLIF($3, '') WHERE id = $1`,
		id, settings.Model, settings.Effort)
	if err != nil {
		return fmt.Errorf("keep the run's settings: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return errs.Newf(errs.NotFound, "no run %s", id)
	}
	return nil
}

// End implements ports.RunStore.
func (s *RunRepository) End(ctx context.Context, id string, status runs.Status, events ...runs.NewEvent) (int64, error) {
	if !status.Ended() {
		return 0, fmt.Errorf("end run %s: %q is not an ending status", id, status)
	}
	var last int64
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		var err error
		if last, err = appendTx(ctx, tx, id, events); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE runs SET status = $2, updated_at = now() WHERE id = $1`, id, status)
		return err
	})
	if err == nil {
		s.ended.Add(1, string(status))
	}
	return last, err
}

// Events implements ports.RunStore.
func (s *RunRepository) Events(ctx context.Context, id string, from int64, limit int) ([]runs.Event, error) {
	rows, err := s.db.Pool.Query(ctx, `SELECT seq, kind, data FROM run_events WHERE run_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`, id, from, limit)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (runs.Event, error) {
		var e runs.Event
		var data []byte
		err := row.Scan(&e.Seq, &e.Kind, &data)
		e.Data = data
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return out, nil
}

// interruptBatch is how many orphaned runs one statement ends: each batch is
// its own short transaction, so a sweep of thousands never holds many row
// locks for long.
const interruptBatch = 500

// interruptSQL ends up to $2 orphaned runs in one statement: it locks them
// (skipping any a late appender holds: the next sweep gets those), appends
// the interrupted error as each one's next event, sets the status and
// notifies each run's viewers on every replica (delivered on commit).
const interruptSQL = `WITH victims AS (
	SELECT r.id FROM runs r
	WHERE r.status = 'running' AND NOT EXISTS (
		SELECT 1 FROM processes p WHERE p.id = r.process_id AND p.heartbeat_at > now() - make_interval(secs => $1))
	ORDER BY r.id LIMIT $2 FOR UPDATE OF r SKIP LOCKED
), ` + interruptVictims

// interruptStuckSQL is interruptSQL for runs not written to for $1 seconds,
// whatever their process.
const interruptStuckSQL = `WITH victims AS (
	SELECT r.id FROM runs r
	WHERE r.status = 'running' AND r.updated_at < now() - make_interval(secs => $1)
	ORDER BY r.id LIMIT $2 FOR UPDATE OF r SKIP LOCKED
), ` + interruptVictims

// interruptVictims ends the victims: their interrupted event, their
// status, and their viewers told.
const interruptVictims = `s AS (
	UPDATE runs SET next_seq = runs.next_seq + 1, status = 'interrupted', updated_at = now()
	FROM victims v WHERE runs.id = v.id
	RETURNING runs.id, runs.next_seq - 1 AS seq
), ins AS (
	INSERT INTO run_events (run_id, seq, kind, data) SELECT s.id, s.seq, $3, $4::json FROM s
)
SELECT s.id, pg_notify($5, 'e ' || s.id || ' ' || s.seq) FROM s`

// InterruptOrphans implements ports.RunStore, in batches of interruptBatch
// until none is left or ctx ends.
func (s *RunRepository) InterruptOrphans(ctx context.Context, staleAfter time.Duration, ev runs.NewEvent) ([]string, error) {
	return s.interrupt(ctx, interruptSQL, staleAfter, ev)
}

// InterruptStuck implements ports.RunStore, in batches like InterruptOrphans.
func (s *RunRepository) InterruptStuck(ctx context.Context, quiet time.Duration, ev runs.NewEvent) ([]string, error) {
	return s.interrupt(ctx, interruptStuckSQL, quiet, ev)
}

func (s *RunRepository) interrupt(ctx context.Context, sql string, after time.Duration, ev runs.NewEvent) ([]string, error) {
	var done []string
	for {
		rows, err := s.db.Pool.Query(ctx, sql, after.Seconds(), interruptBatch, string(ev.Kind), string(ev.Data), notifyChannel)
		if err != nil {
			return done, fmt.Errorf("interrupt orphaned runs: %w", err)
		}
		ids, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
			var id, notified string
			err := r.Scan(&id, &notified)
			return id, err
		})
		if err != nil {
			return done, fmt.Errorf("interrupt orphaned runs: %w", err)
		}
		s.ended.Add(float64(len(ids)), string(runs.Interrupted))
		done = append(done, ids...)
		if len(ids) < interruptBatch {
			return done, nil
		}
	}
}

func nonNilThread(t []runs.Message) []runs.Message {
	if t == nil {
		return []runs.Message{}
	}
	return t
}

func nullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return []byte(b)
}
