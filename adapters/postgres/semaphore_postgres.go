package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// Semaphore hands out leased slots kept in PostgreSQL (migration 14's
// UNLOGGED semaphore_slots), so the limit holds across every process on the
// database, and a process that dies holding a slot loses it when its lease
// runs out.
type Semaphore struct {
	db    *DB
	clock ports.Clock
}

var _ ports.Semaphore = (*Semaphore)(nil)

// NewSemaphore makes the shared semaphore over db, reading time from clock.
func NewSemaphore(db *DB, clock ports.Clock) *Semaphore {
	return &Semaphore{db: db, clock: clock}
}

// acquireSQL, run under the name's lock, forgets lapsed slots, counts the
// live ones and takes one when key holds none and one is free.
const acquireSQL = `WITH gone AS (
	DELETE FROM semaphore_slots WHERE name = $1 AND lease_until <= $3
), live AS (
	SELECT count(*) AS n, coalesce(bool_or(key = $2), false) AS mine
	FROM semaphore_slots WHERE name = $1 AND lease_until > $3
), taken AS (
	INSERT INTO semaphore_slots (name, token, key, lease_until)
	SELECT $1, $4, $2, $5 FROM live WHERE NOT mine AND n < $6
	RETURNING 1
)
SELECT mine, EXISTS (SELECT 1 FROM taken) FROM live`

// Acquire implements ports.Semaphore. Takers of one name queue on a
// transaction-scoped advisory lock for the few statements it takes, so the
// count and the insert can't interleave with another taker's.
func (s *Semaphore) Acquire(ctx context.Context, name, key string, limit int, lease time.Duration) (func(context.Context) error, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	now := s.clock.Now().Truncate(time.Microsecond)
	var mine, taken bool
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('petal.semaphore'), hashtext($1))`, name); err != nil {
			return err
		}
		return tx.QueryRow(ctx, acquireSQL, name, key, now, token, now.Add(lease), limit).Scan(&mine, &taken)
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("semaphore %s: %w", name, err)
	case mine:
		return nil, ports.ErrKeyBusy
	case !taken:
		return nil, ports.ErrSlotsTaken
	}
	return func(ctx context.Context) error {
		if _, err := s.db.Pool.Exec(ctx, `DELETE FROM semaphore_slots WHERE name = $1 AND token = $2`, name, token); err != nil {
			return fmt.Errorf("semaphore %s: release: %w", name, err)
		}
		return nil
	}, nil
}
