package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// A check of a shared limit is a statement, and a cheap tool call is a few
// microseconds of petal's own work, so one statement per check made the
// shared limiter most of a cheap call's cost. The batcher keeps the count
// exact while sharing statements: while one check's statement runs, the
// checks that arrive on this process wait together and go as the next single
// statement, which takes n calls from each key's window at once and tells
// how many of them fit (and, for a key calling fast, a block ahead:
// limits_lease.go).

// allowBatchTimeout bounds a statement carrying other callers' checks, which
// runs on a context detached from the leader's own cancellation.
const allowBatchTimeout = 10 * time.Second

// maxAllowBatch caps the checks in one statement.
const maxAllowBatch = 1000

// allowBatchSQL takes, for each key, up to n calls from its window under the
// key's limit (opening a new window when the old has closed), keys in sorted
// order so two processes' batches lock rows in one order and never wait on
// each other in a circle. count stops at the limit (refused calls don't
// count, so calls given back can be taken again); taken says how many of the
// n this statement took (migration 40).
const allowBatchSQL = `INSERT INTO rate_limits AS r (key, window_end, count, lim, taken)
SELECT k, e, least(n, l), l, least(n, l) FROM unnest($1::text[], $2::timestamptz[], $3::int[], $5::int[]) AS t(k, e, n, l)
ON CONFLICT (key) DO UPDATE SET
	taken = CASE WHEN r.window_end <= $4 THEN excluded.count ELSE least(excluded.count, greatest(excluded.lim - r.count, 0)) END,
	count = CASE WHEN r.window_end <= $4 THEN excluded.count ELSE r.count + least(excluded.count, greatest(excluded.lim - r.count, 0)) END,
	lim = excluded.lim,
	window_end = CASE WHEN r.window_end <= $4 THEN excluded.window_end ELSE r.window_end END
RETURNING key, taken, count, window_end`

type allowCall struct {
	ctx   context.Context
	key   string
	limit int
	per   time.Duration

	allowed bool
	wait    time.Duration
	err     error
	done    chan struct{}
	lead    chan []*allowCall
}

type allowBatcher struct {
	mu      sync.Mutex
	busy    bool
	pending []*allowCall
	l       *RateLimiter
}

func (b *allowBatcher) allow(ctx context.Context, key string, limit int, per time.Duration) (bool, time.Duration, error) {
	c := &allowCall{ctx: ctx, key: key, limit: limit, per: per, done: make(chan struct{}), lead: make(chan []*allowCall, 1)}
	b.mu.Lock()
	if !b.busy {
		b.busy = true
		b.mu.Unlock()
		b.leadBatch([]*allowCall{c})
		return c.allowed, c.wait, c.err
	}
	b.pending = append(b.pending, c)
	b.mu.Unlock()
	select {
	case batch := <-c.lead:
		b.leadBatch(batch)
	case <-c.done:
	case <-ctx.Done():
		if b.withdraw(c) {
			return false, 0, ctx.Err()
		}
		select {
		case batch := <-c.lead:
			b.leadBatch(batch)
		case <-c.done:
		}
	}
	<-c.done
	return c.allowed, c.wait, c.err
}

func (b *allowBatcher) withdraw(c *allowCall) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.Index(b.pending, c)
	if i < 0 {
		return false
	}
	b.pending = slices.Delete(b.pending, i, i+1)
	return true
}

// leadBatch checks batch, hands what waits to its first member, and settles
// batch's callers.
func (b *allowBatcher) leadBatch(batch []*allowCall) {
	b.check(batch)
	b.mu.Lock()
	next := b.pending
	if len(next) > maxAllowBatch {
		next, b.pending = next[:maxAllowBatch], next[maxAllowBatch:]
	} else {
		b.pending = nil
	}
	if len(next) == 0 {
		b.busy = false
	}
	b.mu.Unlock()
	if len(next) > 0 {
		next[0].lead <- next
	}
	for _, c := range batch {
		close(c.done)
	}
}

// check runs batch's checks: one statement per round, a key once in each
// (the same key under two limits waits for the next round).
func (b *allowBatcher) check(batch []*allowCall) {
	ctx := batch[0].ctx
	if len(batch) > 1 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), allowBatchTimeout)
		defer cancel()
	}
	for len(batch) > 0 {
		type group struct {
			limit int
			per   time.Duration
			calls []*allowCall
		}
		groups := map[string]*group{}
		var later []*allowCall
		for _, c := range batch {
			g := groups[c.key]
			switch {
			case g == nil:
				groups[c.key] = &group{limit: c.limit, per: c.per, calls: []*allowCall{c}}
			case g.limit == c.limit && g.per == c.per:
				g.calls = append(g.calls, c)
			default:
				later = append(later, c)
			}
		}
		keys := make([]string, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		// PostgreSQL keeps microseconds; so do we, or a wait would be off by a few ns.
		now := b.l.clock.Now().Truncate(time.Microsecond)
		ends := make([]time.Time, len(keys))
		asks := make([]int32, len(keys))
		limits := make([]int32, len(keys))
		for i, k := range keys {
			g := groups[k]
			ends[i] = now.Add(g.per)
			asks[i] = int32(b.l.askFor(k, g.limit, g.per, len(g.calls), now))
			limits[i] = int32(min(g.limit, math.MaxInt32))
		}
		err := b.run(ctx, keys, ends, asks, limits, now, func(key string, taken int, count int64, end time.Time) {
			g := groups[key]
			fit := b.l.settle(key, g.limit, g.per, now, len(g.calls), taken, count, end)
			for i, c := range g.calls {
				c.allowed = i < fit
				if !c.allowed {
					c.wait = end.Sub(now)
				}
			}
		})
		if err != nil {
			for _, c := range batch {
				c.allowed, c.wait, c.err = false, 0, err
			}
			return
		}
		batch = later
	}
}

func (b *allowBatcher) run(ctx context.Context, keys []string, ends []time.Time, asks, limits []int32, now time.Time,
	each func(key string, taken int, count int64, end time.Time)) error {
	rows, err := b.l.db.Pool.Query(ctx, allowBatchSQL, keys, ends, asks, now, limits)
	if err != nil {
		return fmt.Errorf("rate limit: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var taken int
		var count int64
		var end time.Time
		if err := rows.Scan(&key, &taken, &count, &end); err != nil {
			return fmt.Errorf("rate limit: %w", err)
		}
		each(key, taken, count, end)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("rate limit: %w", err)
	}
	return nil
}
