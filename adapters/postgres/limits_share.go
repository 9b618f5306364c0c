package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// ShareLimiter is the shared limiter that doesn't ask the database for every
// new key. Each live replica holds a lease (a heartbeat row) and counts a key
// in its own memory up to its share of the limit, limit ÷ share_of (floor),
// asking the database only for a key that needs more. The guarantee, every
// replica together never allows more than the limit, rests on claims: a
// replica publishes the share it counts with for each window length
// (rate_limit_claims), and takes a bigger share only under the claims lock
// when its claim and every other replica's still-open claims sum to at most
// one whole limit. A claim stays published until every window counted under
// it has closed, so a replica that dies keeps its calls counted, and a
// replica joining waits for the others' bigger shares to close before it
// counts locally (meanwhile it asks the database for every call).
//
// A key that needs more than its share moves to rate_limits for the rest of
// its window: the asking replica's statement counts every other claimant's
// share as taken (rate_limit_reserved), each of which gives back what it did
// not use, and counts the key in the database from then on, at its next
// heartbeat. So a busy key gets the whole limit, briefly less (a heartbeat)
// while the others' unused shares come back; never more.
//
// A replica whose lease is lost (its heartbeat failed for Lease) stops
// counting locally at once and asks the database for every call.
// Windows are each replica's own, from the key's first call there: in one
// window's time the replicas allow at most the limit, and over any span of
// one window's length at most twice it, as one fixed window does.
// Timestamps come from the replicas' clocks, which must agree to well within
// a lease.
type ShareLimiter struct {
	db     *DB
	clock  ports.Clock
	id     string
	opts   ShareOptions
	checks ports.Counter

	mu         sync.Mutex
	leaseUntil time.Time // no local calls at or after it
	beatStart  time.Time // when the last heartbeat that landed began
	live       int       // replicas holding a lease at the last heartbeat
	reload     bool      // the open windows in rate_limits must be read before counting locally
	pers       map[time.Duration]*perShare
	keys       map[string]*shareKey
	swept      time.Time
	counts     ShareCounts
	flushed    ShareCounts
}

var _ ports.RateLimiter = (*ShareLimiter)(nil)

// ShareOptions tune a ShareLimiter.
type ShareOptions struct {
	// Lease is how long a heartbeat lets this replica count locally; beat
	// at most a third of it apart.
	Lease time.Duration
	// RefusalHold: how long a refusal from the database is repeated from
	// memory (never past its window).
	RefusalHold time.Duration
	// MaxKeys bounds the keys counted in memory; past it, a new key asks the
	// database.
	MaxKeys int
	// Windows are the window lengths claimed from the first heartbeat; any
	// other is claimed at the heartbeat after its first call.
	Windows []time.Duration
	// WaitForGiveBack: a call refused while other replicas' shares of its
	// key are reserved waits this long (a heartbeat) and asks once more; 0:
	// refused at once.
	WaitForGiveBack time.Duration
	// Metrics, when set, counts local calls against database asks.
	Metrics ports.Metrics
}

// DefaultShareOptions are what petal serve runs with: a beat every second.
// A key counted here costs about 100 bytes, so MaxKeys is about 100 MB.
var DefaultShareOptions = ShareOptions{Lease: 3 * time.Second, RefusalHold: time.Second, MaxKeys: 1_000_000, WaitForGiveBack: 1200 * time.Millisecond,
	Windows: []time.Duration{time.Minute, time.Hour}}

// perShare is this replica's share for windows of one length.
type perShare struct {
	shareOf int // a key counts up to limit/shareOf here; 0: nothing locally
	// earlier shares and when each was last in use: a window opened under
	// one may stay open for a window's length after.
	earlier []shareUse
}

type shareUse struct {
	shareOf int
	last    time.Time
}

// claim is the smallest share_of any window still open may have counted
// under (0: none).
func (p *perShare) claim(now time.Time, per time.Duration) int {
	c := p.shareOf
	for _, e := range p.earlier {
		if now.Sub(e.last) < per && (c == 0 || e.shareOf < c) {
			c = e.shareOf
		}
	}
	return c
}

// shareKey is one key's local window, kept small (many new addresses).
type shareKey struct {
	limit   int32
	used    int32 // counted here in the window and not yet reported to the database
	per     int64 // µs
	end     int64 // the local window's end, µs
	dbUntil int64 // counted in the database until then, µs
	refused int64 // refused from memory until then, µs
}

// ShareCounts counts, since the limiter was made, the calls allowed from
// memory, the checks that asked the database, and the refusals repeated from
// memory.
type ShareCounts struct{ Local, Database, RefusedFromMemory int64 }

// Counts says what ShareCounts counts.
func (l *ShareLimiter) Counts() ShareCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts
}

// NewShareLimiter makes a replica's share limiter over db; it counts nothing
// locally until its first Heartbeat.
func NewShareLimiter(db *DB, clock ports.Clock, opts ShareOptions) *ShareLimiter {
	var b [8]byte
	_, _ = rand.Read(b[:])
	l := &ShareLimiter{db: db, clock: clock, id: hex.EncodeToString(b[:]), opts: opts, reload: true,
		pers: map[time.Duration]*perShare{}, keys: map[string]*shareKey{}}
	for _, per := range opts.Windows {
		l.pers[per] = &perShare{}
	}
	if opts.Metrics != nil {
		l.checks = opts.Metrics.Counter("petal_rate_limit_share_checks_total",
			"Checks of shared limits by where they were answered: local (counted in this replica's share, no statement), database (the key needed more than its share, or no share is held), refused_from_memory.",
			"answered")
	}
	return l
}

func micros(t time.Time) int64 { return t.UnixMicro() }

// Allow implements ports.RateLimiter.
func (l *ShareLimiter) Allow(ctx context.Context, key string, limit int, per time.Duration) (bool, time.Duration, error) {
	now := l.clock.Now().Truncate(time.Microsecond)
	at := micros(now)
	l.mu.Lock()
	ps := l.pers[per]
	if ps == nil {
		ps = &perShare{} // claimed at the next heartbeat
		l.pers[per] = ps
	}
	k := l.keys[key]
	if k != nil && k.limit == 0 { // known only as counted in the database
		k.limit, k.per = int32(min(limit, 1<<31-1)), per.Microseconds()
	}
	if k != nil && (int(k.limit) != limit || k.per != per.Microseconds()) {
		// Another limit on one key (a test's): the database counts it.
		l.mu.Unlock()
		return l.ask(ctx, key, limit, per, now, nil, false, false)
	}
	if k != nil && at >= k.end && at >= k.dbUntil {
		if k.used > 0 && k.end > micros(l.beatStart) {
			// The window counted here closed since the last heartbeat: a
			// move of the key to the database may not have been seen yet,
			// so its calls are reported there rather than counted afresh.
			l.mu.Unlock()
			return l.ask(ctx, key, limit, per, now, k, false, false)
		}
		*k = shareKey{limit: k.limit, per: k.per, end: at + per.Microseconds()}
	}
	switch {
	case k != nil && at < k.refused:
		l.counts.RefusedFromMemory++
		wait := time.Duration(k.dbUntil-at) * time.Microsecond
		l.mu.Unlock()
		return false, wait, nil
	case k != nil && at < k.dbUntil:
		l.mu.Unlock()
		return l.ask(ctx, key, limit, per, now, k, false, false)
	}
	share := 0
	if ps.shareOf > 0 && !l.reload && now.Before(l.leaseUntil) {
		share = limit / ps.shareOf
	}
	if k == nil {
		if share == 0 || len(l.keys) >= l.opts.MaxKeys {
			l.mu.Unlock()
			return l.ask(ctx, key, limit, per, now, nil, true, false)
		}
		k = &shareKey{limit: int32(min(limit, 1<<31-1)), per: per.Microseconds(), end: at + per.Microseconds()}
		l.keys[key] = k
	}
	if int(k.used) < share {
		k.used++
		l.counts.Local++
		l.mu.Unlock()
		return true, 0, nil
	}
	l.mu.Unlock()
	return l.ask(ctx, key, limit, per, now, k, false, false)
}

// claimsLock is the advisory lock under which claims grow (exclusive) and
// other replicas' shares are reserved (shared).
const claimsLock = `hashtext('petal.rate_limit_claims'), 0`

// ask counts one call of key in rate_limits, moving the key's window there
// if it isn't yet (reserving every other claimant's share) and reporting
// what this replica counted of it locally.
//
// k is the key's local state; nil with bind makes it, so calls of the key
// arriving meanwhile ask too. Without one (a key under two limits, or no room
// for more keys) the ask leaves this replica's reservation to the heartbeat.
func (l *ShareLimiter) ask(ctx context.Context, key string, limit int, per time.Duration, now time.Time, k *shareKey, bind, waited bool) (bool, time.Duration, error) {
	// A window moved here keeps the end it has on this replica.
	end, fresh := now.Add(per), now.Add(per)
	l.mu.Lock()
	if k == nil && bind {
		k = l.keys[key]
		switch {
		case k == nil && len(l.keys) < l.opts.MaxKeys:
			k = &shareKey{limit: int32(min(limit, 1<<31-1)), per: per.Microseconds(), end: micros(now.Add(per))}
			l.keys[key] = k
		case k != nil && k.limit == 0:
			k.limit, k.per = int32(min(limit, 1<<31-1)), per.Microseconds()
		case k != nil && (int(k.limit) != limit || k.per != per.Microseconds()):
			k = nil
		}
	}
	unreported := 0
	if k != nil && k.end > micros(now) {
		fresh = time.UnixMicro(k.end)
	}
	if k != nil {
		// Counted in the database from now: calls arriving meanwhile ask too.
		k.dbUntil = max(k.dbUntil, micros(now.Add(per)))
	}
	l.counts.Database++
	l.mu.Unlock()
	var took bool
	outstanding := 0
	err := pgx.BeginFunc(ctx, l.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared(`+claimsLock+`), pg_advisory_xact_lock(hashtext('petal.rate_limits'), hashtext($1))`, key); err != nil {
			return err
		}
		// Under the key's lock, so the first of this replica's asks of the
		// key to get there reports every call counted here.
		if k != nil {
			l.mu.Lock()
			unreported = int(k.used)
			k.used = 0
			l.mu.Unlock()
		}
		var count int
		err := tx.QueryRow(ctx, `SELECT window_end, count FROM rate_limits WHERE key = $1 FOR UPDATE`, key).Scan(&end, &count)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err != nil || !end.After(now) {
			end = fresh
			if _, err := tx.Exec(ctx, `DELETE FROM rate_limit_reserved WHERE key = $1`, key); err != nil {
				return err
			}
			var reserved int
			if err := tx.QueryRow(ctx, `WITH r AS (
	INSERT INTO rate_limit_reserved (key, replica, window_end, reserved)
	SELECT $1, replica, $2, $3 / share_of FROM rate_limit_claims
	WHERE per_us = $4 AND until > $5 AND replica <> $6
	RETURNING reserved)
SELECT coalesce(sum(reserved), 0) FROM r`, key, end, limit, per.Microseconds(), now, l.id).Scan(&reserved); err != nil {
				return err
			}
			count = reserved + unreported
		} else if k != nil {
			var mine int
			if err := tx.QueryRow(ctx, `WITH d AS (DELETE FROM rate_limit_reserved WHERE replica = $1 AND key = $2 RETURNING reserved)
SELECT coalesce(sum(reserved), 0) FROM d`, l.id, key).Scan(&mine); err != nil {
				return err
			}
			count = max(count+unreported-mine, 0)
		}
		if took = count < limit; took {
			count++
		} else if l.opts.WaitForGiveBack > 0 {
			// Refused while other replicas' shares are still reserved: some
			// may come back at their next heartbeat.
			if err := tx.QueryRow(ctx, `SELECT coalesce(sum(reserved), 0) FROM rate_limit_reserved WHERE key = $1 AND replica <> $2`,
				key, l.id).Scan(&outstanding); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO rate_limits (key, window_end, count, lim, taken) VALUES ($1, $2, $3, $4, 0)
ON CONFLICT (key) DO UPDATE SET window_end = excluded.window_end, count = excluded.count, lim = excluded.lim, taken = 0`,
			key, end, count, min(limit, 1<<31-1))
		return err
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		if k != nil {
			k.used += int32(unreported) // not reported: still counted here
		}
		return false, 0, fmt.Errorf("rate limit: %w", err)
	}
	if k != nil {
		k.dbUntil = micros(end)
		if !took && outstanding == 0 {
			k.refused = min(micros(now.Add(l.opts.RefusalHold)), k.dbUntil)
		}
	}
	if took {
		return true, 0, nil
	}
	if outstanding > 0 && !waited {
		// Briefly slower rather than refused for a share unused elsewhere.
		l.mu.Unlock()
		t := time.NewTimer(l.opts.WaitForGiveBack)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			l.mu.Lock()
			return false, 0, ctx.Err()
		}
		ok, wait, err := l.ask(ctx, key, limit, per, l.clock.Now().Truncate(time.Microsecond), k, bind, true)
		l.mu.Lock()
		return ok, wait, err
	}
	return false, end.Sub(now), nil
}

// Heartbeat renews this replica's lease, takes the share it may count with
// for each window length (limit ÷ the replicas holding a lease, once the
// claims allow it), and gives back what it didn't use of the keys moved to
// the database since the last beat. Run it every Lease/3 (Beat does).
func (l *ShareLimiter) Heartbeat(ctx context.Context) error {
	start := l.clock.Now().Truncate(time.Microsecond)
	l.mu.Lock()
	if !start.Before(l.leaseUntil) {
		// The lease lapsed (or was never held): others may have counted
		// this replica out. Start again from no share, and read the windows
		// moved to the database meanwhile.
		for _, p := range l.pers {
			if p.shareOf > 0 {
				p.earlier = append(p.earlier, shareUse{p.shareOf, start})
			}
			p.shareOf = 0
		}
		l.reload = true
	}
	type perPlan struct {
		per              time.Duration
		shareOf, claimOf int
	}
	var plans []perPlan
	for per := range l.pers {
		plans = append(plans, perPlan{per: per})
	}
	reload := l.reload
	l.mu.Unlock()

	type back struct {
		key      string
		end      time.Time
		reserved int
	}
	var backs []back
	var open []back
	var live int
	err := pgx.BeginFunc(ctx, l.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+claimsLock+`)`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO rate_limit_replicas (id, lease_until) VALUES ($1, $2)
ON CONFLICT (id) DO UPDATE SET lease_until = excluded.lease_until`, l.id, start.Add(l.opts.Lease)); err != nil {
			return err
		}
		// Forget what can no longer count: closed claims and reservations,
		// leases gone an hour.
		if _, err := tx.Exec(ctx, `DELETE FROM rate_limit_claims WHERE until <= $1`, start); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM rate_limit_replicas WHERE lease_until <= $1`, start.Add(-time.Hour)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM rate_limit_reserved WHERE window_end <= $1`, start); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `DELETE FROM rate_limit_reserved WHERE replica = $1 RETURNING key, window_end, reserved`, l.id)
		if err != nil {
			return err
		}
		for rows.Next() {
			var b back
			if err := rows.Scan(&b.key, &b.end, &b.reserved); err != nil {
				return err
			}
			backs = append(backs, b)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		// Who may be counting: every replica holding a lease, and, for each
		// window length, every one whose claim is still open (a dead
		// replica's calls count until its windows close).
		liveIDs := map[string]bool{}
		rows, err = tx.Query(ctx, `SELECT id FROM rate_limit_replicas WHERE lease_until > $1`, start)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			liveIDs[id] = true
		}
		if err := rows.Err(); err != nil {
			return err
		}
		live = len(liveIDs)
		liveIDs[l.id] = true
		others := map[int64][]int{}
		claimants := map[int64]map[string]bool{}
		rows, err = tx.Query(ctx, `SELECT replica, per_us, share_of FROM rate_limit_claims WHERE replica <> $1 AND until > $2`, l.id, start)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id string
			var per int64
			var of int
			if err := rows.Scan(&id, &per, &of); err != nil {
				return err
			}
			others[per] = append(others[per], of)
			if claimants[per] == nil {
				claimants[per] = map[string]bool{}
			}
			claimants[per][id] = true
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if reload {
			// Windows moved to the database before this replica's claims
			// were seen reserved nothing for it: count them there. Past
			// MaxKeys, the ones ending last: they fill the keys held here,
			// so a key left out finds no room to be counted locally from
			// zero until every kept one has ended, and with them every
			// window left out (each ends sooner).
			rows, err := tx.Query(ctx, `SELECT key, window_end FROM rate_limits WHERE window_end > $1 ORDER BY window_end DESC LIMIT $2`, start, l.opts.MaxKeys)
			if err != nil {
				return err
			}
			for rows.Next() {
				var b back
				if err := rows.Scan(&b.key, &b.end); err != nil {
					return err
				}
				open = append(open, b)
			}
			if err := rows.Err(); err != nil {
				return err
			}
		}
		l.mu.Lock()
		for i := range plans {
			p := l.pers[plans[i].per]
			cur := p.shareOf
			// One share more than who may be counting: a replica joining
			// takes the spare at its first beat instead of waiting for the
			// others' bigger shares to close.
			want := len(liveIDs) + 1
			for id := range claimants[plans[i].per.Microseconds()] {
				if !liveIDs[id] {
					want++
				}
			}
			next := cur
			switch {
			case cur != 0 && want >= cur:
				next = want // a smaller share is always safe
			case len(open) < l.opts.MaxKeys:
				// A bigger share only if every claim still open fits in one limit with it.
				c := want
				if e := p.claim(start, plans[i].per); e != 0 && e < c {
					c = e
				}
				if fits(others[plans[i].per.Microseconds()], c) {
					next = want
				}
			}
			claimOf := next
			if e := p.claim(start, plans[i].per); e != 0 && (claimOf == 0 || e < claimOf) {
				claimOf = e
			}
			plans[i].shareOf, plans[i].claimOf = next, claimOf
		}
		l.mu.Unlock()
		for _, p := range plans {
			if p.claimOf == 0 {
				continue
			}
			if _, err := tx.Exec(ctx, `INSERT INTO rate_limit_claims (replica, per_us, share_of, until) VALUES ($1, $2, $3, $4)
ON CONFLICT (replica, per_us) DO UPDATE SET share_of = excluded.share_of, until = excluded.until`,
				l.id, p.per.Microseconds(), p.claimOf, start.Add(p.per+l.opts.Lease)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rate limit: heartbeat: %w", err)
	}

	l.mu.Lock()
	var keys []string
	var ends []time.Time
	var ns []int32
	for _, b := range backs {
		k := l.keys[b.key]
		used := 0
		if k != nil {
			used = int(k.used)
			k.used = 0
			k.dbUntil = max(k.dbUntil, micros(b.end))
		} else if len(l.keys) < l.opts.MaxKeys {
			l.keys[b.key] = &shareKey{dbUntil: micros(b.end)}
		}
		if n := b.reserved - used; n != 0 {
			keys, ends, ns = append(keys, b.key), append(ends, b.end), append(ns, int32(n))
		}
	}
	for _, b := range open {
		k := l.keys[b.key]
		switch {
		case k == nil && len(l.keys) < l.opts.MaxKeys:
			l.keys[b.key] = &shareKey{dbUntil: micros(b.end)}
		case k != nil && k.used == 0:
			k.dbUntil = max(k.dbUntil, micros(b.end))
		}
	}
	for _, p := range plans {
		ps := l.pers[p.per]
		if ps.shareOf != p.shareOf && ps.shareOf != 0 {
			ps.earlier = append(ps.earlier, shareUse{ps.shareOf, start})
		}
		ps.shareOf = p.shareOf
		kept := ps.earlier[:0]
		for _, e := range ps.earlier {
			if start.Sub(e.last) < p.per+l.opts.Lease {
				kept = append(kept, e)
			}
		}
		ps.earlier = kept
	}
	l.leaseUntil = start.Add(l.opts.Lease)
	l.beatStart = start
	l.live = live
	l.reload = false
	if start.Sub(l.swept) >= 5*time.Second {
		l.swept = start
		at := micros(start)
		for key, k := range l.keys {
			if at >= k.end && at >= k.dbUntil {
				delete(l.keys, key)
			}
		}
	}
	counts := l.counts
	delta := ShareCounts{counts.Local - l.flushed.Local, counts.Database - l.flushed.Database, counts.RefusedFromMemory - l.flushed.RefusedFromMemory}
	l.flushed = counts
	l.mu.Unlock()
	if l.checks != nil {
		l.checks.Add(float64(delta.Local), "local")
		l.checks.Add(float64(delta.Database), "database")
		l.checks.Add(float64(delta.RefusedFromMemory), "refused_from_memory")
	}
	// What was reserved and not used goes back to its window (a key counted
	// here past what was reserved makes n negative and counts it).
	if _, err := giveBackWindows(ctx, l.db, keys, ends, ns); err != nil {
		return fmt.Errorf("rate limit: give back reserved shares: %w", err)
	}
	return nil
}

// fits says whether claims of limit ÷ mine and ÷ each of others sum to at
// most one limit (exact: shares are floors of these fractions).
func fits(others []int, mine int) bool {
	sum := big.NewRat(1, int64(mine))
	for _, o := range others {
		sum.Add(sum, big.NewRat(1, int64(o)))
	}
	return sum.Cmp(big.NewRat(1, 1)) <= 0
}

// Beat runs Heartbeat every Lease/3 until stop, which then gives up the
// lease (its claims stay until their windows close).
func (l *ShareLimiter) Beat(onError func(error)) (stop func(context.Context)) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(l.opts.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), l.opts.Lease/3)
			if err := l.Heartbeat(ctx); err != nil && onError != nil {
				onError(err)
			}
			cancel()
		}
	})
	return func(ctx context.Context) {
		close(quit)
		wg.Wait()
		l.mu.Lock()
		l.leaseUntil = time.Time{}
		l.mu.Unlock()
		if _, err := l.db.Pool.Exec(ctx, `DELETE FROM rate_limit_replicas WHERE id = $1`, l.id); err != nil && onError != nil {
			onError(err)
		}
	}
}
