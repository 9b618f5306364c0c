package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// RateLimiter counts calls per key in fixed windows kept in PostgreSQL
// (migration 14's UNLOGGED rate_limits), so every process on the database
// counts against one allowance. Checks made at once on a process share one
// statement (limits_batch.go); a key calling fast takes blocks of its window
// ahead, and a full window is refused from memory for a moment
// (limits_lease.go). Closed windows are deleted by SweepClosed, a scheduled
// job.
type RateLimiter struct {
	db      *DB
	clock   ports.Clock
	batcher *allowBatcher
	opts    LimiterOptions
	events  ports.Counter

	mu      sync.Mutex
	keys    map[string]*heldKey
	holding map[string]*heldKey // the keys of keys holding calls ahead
	swept   time.Time
	counts  leaseCounts
	total   LocalCalls
}

var _ ports.RateLimiter = (*RateLimiter)(nil)

// NewRateLimiter makes the shared limiter over db, reading time from clock,
// with DefaultLimiterOptions.
func NewRateLimiter(db *DB, clock ports.Clock) *RateLimiter {
	return NewRateLimiterWith(db, clock, DefaultLimiterOptions)
}

// NewRateLimiterWith makes the shared limiter with opts.
func NewRateLimiterWith(db *DB, clock ports.Clock, opts LimiterOptions) *RateLimiter {
	l := &RateLimiter{db: db, clock: clock, opts: opts, keys: map[string]*heldKey{}, holding: map[string]*heldKey{}}
	if opts.Metrics != nil {
		l.events = opts.Metrics.Counter("petal_rate_limit_local_calls_total",
			"Calls of shared limits handled by this process's blocks: taken_ahead (taken from a window before they were needed), spent (allowed from a held block, no statement), given_back (returned unspent to their window), lapsed (unspent when their window ended), refused_from_memory (a full window refused without a statement).",
			"event")
	}
	l.batcher = &allowBatcher{l: l}
	return l
}

// Allow implements ports.RateLimiter.
func (l *RateLimiter) Allow(ctx context.Context, key string, limit int, per time.Duration) (bool, time.Duration, error) {
	if answered, ok, wait := l.allowLocal(key, limit, per, l.clock.Now().Truncate(time.Microsecond)); answered {
		return ok, wait, nil
	}
	return l.batcher.allow(ctx, key, limit, per)
}

// SweepClosed deletes windows that closed before now, 5,000 rows per
// statement so no lock is held long, and says how many went.
func (l *RateLimiter) SweepClosed(ctx context.Context, now time.Time) (int64, error) {
	var total int64
	for {
		tag, err := l.db.Pool.Exec(ctx, `DELETE FROM rate_limits WHERE ctid = ANY (ARRAY(
			SELECT ctid FROM rate_limits WHERE window_end <= $1 LIMIT 5000))`, now)
		if err != nil {
			return total, err
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < 5000 {
			return total, nil
		}
	}
}

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
