package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
)

// The event log's appends: numbered under the run row's lock in one
// statement, batched per run by runs_batch.go.

// Append implements ports.RunStore. Concurrent appends to one run from this
// process go as one statement (runs_batch.go).
func (s *RunRepository) Append(ctx context.Context, id string, events ...runs.NewEvent) (int64, error) {
	if len(events) == 0 {
		return appendTx(ctx, s.db.Pool, id, nil)
	}
	return s.batcher.append(ctx, id, events)
}

// appendNow writes events in one statement, its own transaction: no
// BEGIN/COMMIT round trips.
func (s *RunRepository) appendNow(ctx context.Context, id string, events []runs.NewEvent) (int64, error) {
	if s.bus == nil || !s.bus.publishing.Load() {
		return appendTx(ctx, s.db.Pool, id, events)
	}
	last, err := appendQuiet(ctx, s.db.Pool, id, events)
	if err == nil && len(events) > 0 {
		s.bus.published(id, last)
	}
	return last, err
}

// appendQuietSQL is appendSQL without its NOTIFY.
const appendQuietSQL = `WITH s AS (
	UPDATE runs SET next_seq = next_seq + $2, updated_at = now(), flower = coalesce($5::json, flower)
	WHERE id = $1 AND status = 'running' RETURNING next_seq - $2 AS first
), ins AS (
	INSERT INTO run_events (run_id, seq, kind, data)
	SELECT $1, s.first + t.i - 1, t.k, t.d::json
	FROM s, unnest($3::text[], $4::text[]) WITH ORDINALITY AS t(k, d, i)
)
SELECT s.first + $2 - 1 FROM s`

// appendSQL numbers and inserts events under the run row's lock (the UPDATE
// takes it, ordering concurrent appenders), keeps the last flower on the run
// and notifies (delivered on commit), in one statement: one round trip, and
// on its own it is its own transaction.
const appendSQL = `WITH s AS (
	UPDATE runs SET next_seq = next_seq + $2, updated_at = now(), flower = coalesce($5::json, flower)
	WHERE id = $1 AND status = 'running' RETURNING next_seq - $2 AS first
), ins AS (
	INSERT INTO run_events (run_id, seq, kind, data)
	SELECT $1, s.first + t.i - 1, t.k, t.d::json
	FROM s, unnest($3::text[], $4::text[]) WITH ORDINALITY AS t(k, d, i)
)
SELECT s.first + $2 - 1, pg_notify($6, 'e ' || $1 || ' ' || (s.first + $2 - 1)) FROM s`

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// appendTx appends events through q, notifying in the same statement, and
// returns the last seq. With no events it returns next_seq-1 and changes
// nothing.
func appendTx(ctx context.Context, q querier, id string, events []runs.NewEvent) (int64, error) {
	return appendWith(ctx, q, id, events, true)
}

// appendQuiet appends without notifying.
func appendQuiet(ctx context.Context, q querier, id string, events []runs.NewEvent) (int64, error) {
	return appendWith(ctx, q, id, events, false)
}

func appendWith(ctx context.Context, q querier, id string, events []runs.NewEvent, notify bool) (int64, error) {
	n := int64(len(events))
	if n == 0 {
		var next int64
		err := q.QueryRow(ctx, `SELECT next_seq FROM runs WHERE id = $1`, id).Scan(&next)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, errs.Newf(errs.NotFound, "no run %s", id)
		}
		return next - 1, err
	}
	kinds := make([]string, n)
	datas := make([]string, n)
	var flower []byte
	for i, e := range events {
		if !e.Kind.Stored() {
			return 0, fmt.Errorf("append to run: %s events are not stored", e.Kind)
		}
		kinds[i] = string(e.Kind)
		datas[i] = string(e.Data)
		if e.Kind == runs.KindFlower {
			flower = e.Data
		}
	}
	var last int64
	var err error
	if notify {
		var notified string
		err = q.QueryRow(ctx, appendSQL, id, n, kinds, datas, nullJSON(flower), notifyChannel).Scan(&last, &notified)
	} else {
		err = q.QueryRow(ctx, appendQuietSQL, id, n, kinds, datas, nullJSON(flower)).Scan(&last)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, notRunning(ctx, q, id)
	}
	if err != nil {
		return 0, fmt.Errorf("append to run: %w", err)
	}
	return last, nil
}

// notRunning says why an append found no running run: none by that id, or
// it has ended (a sweep ended it while its job, fenced or cut off, went on;
// nothing may follow its end).
func notRunning(ctx context.Context, q querier, id string) error {
	var status string
	err := q.QueryRow(ctx, `SELECT status FROM runs WHERE id = $1`, id).Scan(&status)
	if errors.Is(err, pgx.ErrNoRows) {
		return errs.Newf(errs.NotFound, "no run %s", id)
	}
	if err != nil {
		return fmt.Errorf("append to run: %w", err)
	}
	return errs.Newf(errs.Conflict, "run %s has ended (%s); nothing is added after its end", id, status)
}
