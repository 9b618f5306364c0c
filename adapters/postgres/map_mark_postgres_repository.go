package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// MapMarkRepository is ports.MapMarkRepository on the map_marks table (migration 38), its
// logos kept in media beside the profiles' pictures (their bytes in the blob
// store when one is set: KeepingBodiesIn).
type MapMarkRepository struct {
	db     *DB
	bodies bodies
}

var _ ports.MapMarks = (*MapMarkRepository)(nil)

// NewMapMarkRepository makes the keeper of the maps' marks over db, logos' bytes in
// the rows.
func NewMapMarkRepository(db *DB) *MapMarkRepository { return &MapMarkRepository{db: db} }

// KeepingBodiesIn has new logos' bytes written to blobs (nil: the rows).
func (m *MapMarkRepository) KeepingBodiesIn(blobs ports.Blobs) *MapMarkRepository {
	m.bodies = bodies{blobs: blobs}
	return m
}

// Due implements ports.MapMarks.
func (m *MapMarkRepository) Due(ctx context.Context, ids []string, limit int) ([]string, error) {
	rows, err := m.db.Pool.Query(ctx, `SELECT i.id FROM unnest($1::text[]) AS i(id)
LEFT JOIN map_marks k ON k.map_id = i.id
WHERE k.map_id IS NULL OR k.next_at <= now()
ORDER BY k.map_id IS NOT NULL, k.next_at, i.id LIMIT $2`, ids, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: marks due: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: marks due: %w", err)
	}
	return out, nil
}

// Keep implements ports.MapMarks: the logo and the mark in one transaction,
// so retention (which skips a locked picture) never deletes a logo between
// its keeping and the mark that shows it. changed_at moves only when the
// mark does, so a re-read that finds the same mark leaves every replica's
// cards as they are.
func (m *MapMarkRepository) Keep(ctx context.Context, w ports.MarkWrite) error {
	var kept keptBody
	if p := w.Logo; p != nil {
		// The logo's bytes before the transaction: no lock waits on the store.
		inRow, key, err := m.bodies.keep(ctx, p.Bytes)
		if err != nil {
			return fmt.Errorf("postgres: keep mark's logo: %w", err)
		}
		kept = keptBody{inRow: inRow, key: key}
	}
	err := pgx.BeginFunc(ctx, m.db.Pool, func(tx pgx.Tx) error {
		var logo *string
		if p := w.Logo; p != nil {
			if err := m.bodies.insertPicture(ctx, tx, *p, kept, time.Time{}); err != nil {
				return fmt.Errorf("keep logo: %w", err)
			}
			logo = &p.SHA256
		}
		_, err := tx.Exec(ctx, `INSERT INTO map_marks (map_id, mark, logo_sha256, read_at, changed_at, next_at, failures, last_error)
VALUES ($1, $2, $3, now(), now(), now() + make_interval(secs => $4), 0, NULL)
ON CONFLICT (map_id) DO UPDATE SET mark = EXCLUDED.mark, logo_sha256 = EXCLUDED.logo_sha256, read_at = now(),
	changed_at = CASE WHEN map_marks.mark IS DISTINCT FROM EXCLUDED.mark THEN now() ELSE map_marks.changed_at END,
	next_at = EXCLUDED.next_at, failures = 0, last_error = NULL`, w.MapID, string(w.Mark), logo, w.Again.Seconds())
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: keep mark: %w", err)
	}
	return nil
}

// Failed implements ports.MapMarks. changed_at moves only when a mark
// given differs from the one kept, as Keep's does.
func (m *MapMarkRepository) Failed(ctx context.Context, mapID string, mark json.RawMessage, reason string, first, most time.Duration) error {
	if r := []rune(reason); len(r) > 500 {
		reason = string(r[:500])
	}
	var given *string
	if mark != nil {
		s := string(mark)
		given = &s
	}
	_, err := m.db.Pool.Exec(ctx, `INSERT INTO map_marks (map_id, mark, changed_at, next_at, failures, last_error)
VALUES ($1, $5::text, CASE WHEN $5::text IS NULL THEN NULL ELSE now() END, now() + make_interval(secs => $3), 1, $2)
ON CONFLICT (map_id) DO UPDATE SET failures = map_marks.failures + 1, last_error = EXCLUDED.last_error,
	next_at = now() + make_interval(secs => least($4::float8, $3::float8 * power(2, least(map_marks.failures, 30)))),
	mark = coalesce(EXCLUDED.mark, map_marks.mark),
	changed_at = CASE WHEN EXCLUDED.mark IS NOT NULL AND map_marks.mark IS DISTINCT FROM EXCLUDED.mark THEN now() ELSE map_marks.changed_at END`,
		mapID, reason, first.Seconds(), most.Seconds(), given)
	if err != nil {
		return fmt.Errorf("postgres: note a failed mark: %w", err)
	}
	return nil
}

// Mark implements ports.MapMarks.
func (m *MapMarkRepository) Mark(ctx context.Context, mapID string) (json.RawMessage, error) {
	var mark *string
	err := m.db.Pool.QueryRow(ctx, `SELECT mark FROM map_marks WHERE map_id = $1`, mapID).Scan(&mark)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && mark == nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: read a mark: %w", err)
	}
	return json.RawMessage(*mark), nil
}

// Marks implements ports.MapMarks.
func (m *MapMarkRepository) Marks(ctx context.Context, after string, limit int) (map[string]json.RawMessage, string, error) {
	rows, err := m.db.Pool.Query(ctx, `SELECT map_id, mark FROM map_marks WHERE mark IS NOT NULL AND map_id > $1 ORDER BY map_id LIMIT $2`, after, limit)
	if err != nil {
		return nil, "", fmt.Errorf("postgres: read marks: %w", err)
	}
	defer rows.Close()
	out := map[string]json.RawMessage{}
	last := ""
	for rows.Next() {
		var id, mark string
		if err := rows.Scan(&id, &mark); err != nil {
			return nil, "", fmt.Errorf("postgres: read marks: %w", err)
		}
		out[id], last = json.RawMessage(mark), id
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("postgres: read marks: %w", err)
	}
	if len(out) < limit {
		last = ""
	}
	return out, last, nil
}

// Version implements ports.MapMarks.
func (m *MapMarkRepository) Version(ctx context.Context) (ports.MarksVersion, error) {
	var v ports.MarksVersion
	var changed *time.Time
	err := m.db.Pool.QueryRow(ctx, `SELECT count(mark), max(changed_at) FROM map_marks`).Scan(&v.Marks, &changed)
	if err != nil {
		return v, fmt.Errorf("postgres: marks' version: %w", err)
	}
	if changed != nil {
		v.Changed = *changed
	}
	return v, nil
}
