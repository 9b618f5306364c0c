package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/petal-near/petal/ports"
)

// Even batched, a statement per check kept a busy key's calls at
// PostgreSQL's pace. A key calling this process fast takes a block of its
// window ahead in one statement and spends it here; the database counts the
// whole block at once, so every replica together still never allows more
// than the limit. The trade: calls held here and not yet spent are missing
// from the other replicas' allowance until they are given back (when the key
// goes quiet on this process, and at shutdown) or, after a crash, until the
// window ends: never more calls than the limit, briefly fewer. Blocks are at
// most a small share of what the window has left, so near the limit they are
// one call and the count is exact to the call.
//
// A key refused here (its window full) is refused from memory for a moment
// (RefusalHold, never past its window) rather than asking again on every
// call: a full window only empties by a replica giving calls back.

// LimiterOptions tunes how a shared limiter takes calls ahead.
type LimiterOptions struct {
	// MaxBlock caps the calls one statement takes for a key (1: none ahead).
	MaxBlock int
	// LeftShare: a block is at most 1/LeftShare of what the window had left.
	LeftShare int
	// FastGap: a key asking again within it doubles its next block; slower,
	// it goes back to one call.
	FastGap time.Duration
	// IdleGiveBack: held calls of a key unused for this long are given back.
	IdleGiveBack time.Duration
	// RefusalHold: how long a refusal is repeated from memory.
	RefusalHold time.Duration
	// MaxKeys bounds the keys remembered here; past it, new keys are checked
	// a statement per call.
	MaxKeys int
	// Metrics, when set, counts calls taken ahead, spent, given back, lapsed
	// and refused from memory.
	Metrics ports.Metrics
}

// DefaultLimiterOptions are what petal serve runs with.
var DefaultLimiterOptions = LimiterOptions{
	MaxBlock:     256,
	LeftShare:    64,
	FastGap:      50 * time.Millisecond,
	IdleGiveBack: 250 * time.Millisecond,
	RefusalHold:  time.Second,
	MaxKeys:      100_000,
}

// heldKey is what this process knows of one key's window.
type heldKey struct {
	limit        int
	per          time.Duration
	end          time.Time // the window held calls belong to
	held         int       // calls taken ahead, not spent yet
	left         int       // what the window had left after this process's last statement
	block        int       // the next statement's size
	lastTake     time.Time
	lastUse      time.Time
	refusedUntil time.Time
}

// leaseCounts are the local events since the last flush to the metrics.
type leaseCounts struct{ takenAhead, spent, givenBack, lapsed, refused int64 }

// LocalCalls counts, since the limiter was made, the calls its blocks took
// ahead, spent without a statement, gave back and let lapse, and the calls
// refused from memory (as of the last GiveBack).
type LocalCalls struct{ TakenAhead, Spent, GivenBack, Lapsed, RefusedFromMemory int64 }

// LocalCalls implements the totals above.
func (l *RateLimiter) LocalCalls() LocalCalls {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// allowLocal answers from what this process holds, when it can.
func (l *RateLimiter) allowLocal(key string, limit int, per time.Duration, now time.Time) (answered, ok bool, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.keys[key]
	if h == nil || h.limit != limit || h.per != per || !now.Before(h.end) {
		return false, false, 0
	}
	if h.held > 0 {
		h.held--
		h.lastUse = now
		l.counts.spent++
		return true, true, 0
	}
	if now.Before(h.refusedUntil) {
		l.counts.refused++
		return true, false, h.end.Sub(now)
	}
	return false, false, 0
}

// askFor is how many calls the next statement takes for key when calls of
// it are waiting: them, or the key's next block when that is larger.
func (l *RateLimiter) askFor(key string, limit int, per time.Duration, calls int, now time.Time) int {
	ask := calls
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.keys[key]
	if h != nil && h.limit == limit && h.per == per && h.block > calls {
		left := limit // a closed window opens afresh
		if now.Before(h.end) {
			left = h.left
		}
		ask = max(calls, min(h.block, left/max(l.opts.LeftShare, 1)))
	}
	return min(ask, max(limit, calls))
}

// settle records what a statement took for key (taken of the asked calls,
// leaving count in the window that ends at end) and says how many of the
// waiting calls it allows.
func (l *RateLimiter) settle(key string, limit int, per time.Duration, now time.Time, calls, taken int, count int64, end time.Time) int {
	allowed := min(taken, calls)
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.keys[key]
	if h == nil {
		if len(l.keys) >= l.opts.MaxKeys {
			return allowed
		}
		h = &heldKey{block: 1}
		l.keys[key] = h
	}
	if h.limit != limit || h.per != per {
		if h.held > 0 && now.Before(h.end) {
			// Another limit on one key (a test's): keep the state of the first.
			return allowed
		}
		l.counts.lapsed += int64(h.held)
		*h = heldKey{limit: limit, per: per, block: 1}
	}
	if !h.end.Equal(end) {
		l.counts.lapsed += int64(h.held)
		h.held = 0
	}
	h.end = end
	h.held += taken - allowed
	l.counts.takenAhead += int64(taken - allowed)
	if h.held > 0 {
		l.holding[key] = h
	}
	h.left = max(limit-int(count), 0)
	switch {
	case now.Sub(h.lastTake) < l.opts.FastGap:
		h.block = min(max(h.block*2, 2), max(l.opts.MaxBlock, 1))
	default:
		h.block = 1
	}
	h.lastTake, h.lastUse = now, now
	if h.held == 0 && h.left == 0 {
		h.refusedUntil = now.Add(l.opts.RefusalHold)
		if h.refusedUntil.After(end) {
			h.refusedUntil = end
		}
	}
	return allowed
}

// giveBackSQL returns unspent calls to their windows (only the windows they
// were taken from), locking rows in key order as the allow statement does.
const giveBackSQL = `WITH back AS (
	SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::int[]) AS b(key, window_end, n)
), locked AS (
	SELECT r.key FROM rate_limits r JOIN back USING (key) ORDER BY r.key FOR UPDATE OF r
)
UPDATE rate_limits r SET count = greatest(r.count - back.n, 0)
FROM back JOIN locked USING (key)
WHERE r.key = back.key AND r.window_end = back.window_end`

// GiveBack returns the calls held for keys unused for IdleGiveBack (all of
// them when all is set, as at shutdown) and forgets windows that have ended.
// It says how many calls it gave back.
func (l *RateLimiter) GiveBack(ctx context.Context, all bool) (int, error) {
	now := l.clock.Now()
	var keys []string
	var ends []time.Time
	var ns []int32
	l.mu.Lock()
	// Only keys that took a block are looked at every tick; the rest are
	// forgotten when their window has ended, looked for once a second.
	for k, h := range l.holding {
		switch {
		case h.held == 0:
			delete(l.holding, k)
		case !now.Before(h.end):
			l.counts.lapsed += int64(h.held)
			h.held = 0
			delete(l.holding, k)
		case all || now.Sub(h.lastUse) >= l.opts.IdleGiveBack:
			keys, ends, ns = append(keys, k), append(ends, h.end), append(ns, int32(h.held))
			l.counts.givenBack += int64(h.held)
			h.left += h.held
			h.held, h.block = 0, 1
			delete(l.holding, k)
		}
	}
	if all || now.Sub(l.swept) >= time.Second {
		l.swept = now
		for k, h := range l.keys {
			if !now.Before(h.end) && h.held == 0 {
				delete(l.keys, k)
			}
		}
	}
	counts := l.counts
	l.counts = leaseCounts{}
	l.total.TakenAhead += counts.takenAhead
	l.total.Spent += counts.spent
	l.total.GivenBack += counts.givenBack
	l.total.Lapsed += counts.lapsed
	l.total.RefusedFromMemory += counts.refused
	l.mu.Unlock()
	l.flushCounts(counts)
	return giveBackWindows(ctx, l.db, keys, ends, ns)
}

// giveBackWindows returns ns[i] calls to keys[i]'s window ending ends[i], at
// most maxAllowBatch keys a statement, each statement locking its rows in
// key order (giveBackSQL), so processes giving back overlapping keys at
// once never deadlock. It says how many calls went back.
func giveBackWindows(ctx context.Context, db *DB, keys []string, ends []time.Time, ns []int32) (int, error) {
	given := 0
	for start := 0; start < len(keys); start += maxAllowBatch {
		stop := min(start+maxAllowBatch, len(keys))
		if _, err := db.Pool.Exec(ctx, giveBackSQL, keys[start:stop], ends[start:stop], ns[start:stop]); err != nil {
			return given, fmt.Errorf("rate limit: give back: %w", err)
		}
		for _, n := range ns[start:stop] {
			given += int(n)
		}
	}
	return given, nil
}

// GiveBackIdle gives back idle keys' calls every tick until stop, which
// then gives back every call still held.
func (l *RateLimiter) GiveBackIdle(tick time.Duration, onError func(error)) (stop func(context.Context)) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), allowBatchTimeout)
			if _, err := l.GiveBack(ctx, false); err != nil && onError != nil {
				onError(err)
			}
			cancel()
		}
	})
	return func(ctx context.Context) {
		close(quit)
		wg.Wait()
		if _, err := l.GiveBack(ctx, true); err != nil && onError != nil {
			onError(err)
		}
	}
}

func (l *RateLimiter) flushCounts(c leaseCounts) {
	if l.events == nil {
		return
	}
	for _, e := range []struct {
		name string
		n    int64
	}{{"taken_ahead", c.takenAhead}, {"spent", c.spent}, {"given_back", c.givenBack}, {"lapsed", c.lapsed}, {"refused_from_memory", c.refused}} {
		if e.n > 0 {
			l.events.Add(float64(e.n), e.name)
		}
	}
}
