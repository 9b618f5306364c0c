package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

var shareOpts = postgres.ShareOptions{Lease: 3 * time.Second, RefusalHold: time.Second, MaxKeys: 10_000,
	Windows: []time.Duration{time.Minute}}

// One replica alone holds the whole limit, counted in memory: the port's
// contract holds (a lease longer than the contract's clock moves).
func TestShareLimiterContract(t *testing.T) {
	porttest.RateLimiterContract(t, func(t *testing.T, clock ports.Clock) ports.RateLimiter {
		opts := shareOpts
		opts.Lease = 24 * time.Hour
		l := postgres.NewShareLimiter(pgtest.New(t).DB, clock, opts)
		require.NoError(t, l.Heartbeat(t.Context()))
		return l
	})
}

// beatFor moves the clock on by d a second at a time, every replica in
// beating beating each second, as Beat would.
func beatFor(t *testing.T, clock *porttest.HandClock, d time.Duration, beating ...*postgres.ShareLimiter) {
	t.Helper()
	for range int(d / time.Second) {
		clock.Add(time.Second)
		for _, l := range beating {
			require.NoError(t, l.Heartbeat(context.Background()))
		}
	}
}

// A replica alone counts half of a limit in memory (a share is kept spare
// for a replica joining) and the rest in the database. One joining takes the
// spare third at its first beat: together they allow exactly the limit, the
// window the first moved to the database counted there by both.
func TestAJoiningReplicaTakesTheSpareShare(t *testing.T) {
	db := pgtest.New(t)
	clock := porttest.NewHandClock()
	a := postgres.NewShareLimiter(db.DB, clock, shareOpts)
	require.NoError(t, a.Heartbeat(t.Context()))
	allow := func(l *postgres.ShareLimiter, key string) bool {
		ok, _, err := l.Allow(t.Context(), key, 10, time.Minute)
		require.NoError(t, err)
		return ok
	}
	for i := range 10 {
		require.True(t, allow(a, "tools:busy"), "call %d", i+1)
	}
	assert.False(t, allow(a, "tools:busy"), "the 11th")
	assert.Equal(t, int64(5), a.Counts().Local, "half in memory")
	assert.Equal(t, int64(6), a.Counts().Database, "the rest, and the refusal, asked the database")
	for range 5 {
		require.True(t, allow(a, "tools:half"))
	}

	b := postgres.NewShareLimiter(db.DB, clock, shareOpts)
	require.NoError(t, b.Heartbeat(t.Context()))
	clock.Add(time.Second) // past a's refusal held in memory
	assert.False(t, allow(b, "tools:busy"), "b counts a window moved to the database there")
	n := 0
	for allow(b, "tools:half") {
		n++
	}
	assert.Equal(t, 5, n, "b takes what a left of the limit")
	assert.Equal(t, int64(3), b.Counts().Local, "its third in memory, the rest in the database")
	require.NoError(t, a.Heartbeat(t.Context()))
	assert.Equal(t, 10, windowCount(t, db, "tools:half"), "a gave back nothing: it used its whole half")
}

// A replica whose lease lapses stops counting in memory at once; its calls
// go to the database, where its earlier ones are reported.
func TestALostLeaseStopsLocalCounting(t *testing.T) {
	db := pgtest.New(t)
	clock := porttest.NewHandClock()
	l := postgres.NewShareLimiter(db.DB, clock, shareOpts)
	ok, _, err := l.Allow(t.Context(), "tools:x", 4, time.Minute)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, int64(1), l.Counts().Database, "no lease before the first heartbeat")
	require.NoError(t, l.Heartbeat(t.Context()))
	for range 2 {
		ok, _, err := l.Allow(t.Context(), "tools:y", 4, time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
	}
	assert.Equal(t, int64(2), l.Counts().Local)
	clock.Add(shareOpts.Lease)
	for range 3 {
		ok, _, err = l.Allow(t.Context(), "tools:y", 4, time.Minute)
		require.NoError(t, err)
	}
	assert.False(t, ok, "2 in memory, 2 in the database, the 5th refused")
	assert.Equal(t, int64(2), l.Counts().Local, "nothing more counted in memory")
	assert.Equal(t, 4, windowCount(t, db, "tools:y"), "the database counts the ones made in memory too")
}

// Four replicas' limiters on one database race over a busy key and a crowd
// of new keys while a fourth replica joins and one dies: together they never
// allow more than any key's limit. Once the live ones have given back the
// shares reserved for them, the busy key's whole limit is usable but for
// what the dead replica counted or held.
func TestSharesNeverAllowMoreThanTheLimitAsReplicasJoinAndDie(t *testing.T) {
	db := pgtest.New(t)
	clock := porttest.NewHandClock()
	var replicas []*postgres.ShareLimiter
	for range 4 {
		replicas = append(replicas, postgres.NewShareLimiter(db.DB, clock, shareOpts))
	}
	a, b, c, joiner := replicas[0], replicas[1], replicas[2], replicas[3]
	for _, l := range replicas[:3] {
		require.NoError(t, l.Heartbeat(t.Context()))
	}
	// Settle on thirds: the first to beat took the whole limit and keeps it
	// claimed for a window and a lease.
	beatFor(t, clock, time.Minute+shareOpts.Lease+time.Second, a, b, c)

	const busyLimit, crowdLimit = 600, 3
	var mu sync.Mutex
	allowed := map[string]int{}
	var wg sync.WaitGroup
	var stop atomic.Bool
	callers := []*postgres.ShareLimiter{a, b, c, joiner}
	for w := range 24 {
		wg.Go(func() {
			l := callers[w%len(callers)]
			for i := 0; i < 200 && !stop.Load(); i++ {
				key, limit := "tools:busy", busyLimit
				if i%3 == 0 {
					key, limit = fmt.Sprintf("tools:crowd-%d", (w*200+i)%150), crowdLimit
				}
				ok, _, err := l.Allow(context.Background(), key, limit, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					mu.Lock()
					allowed[key]++
					mu.Unlock()
				}
			}
		})
	}
	// Meanwhile the fourth replica joins and c dies (its calls go on, with
	// no heartbeat: its lease runs out and it counts only in the database).
	wg.Go(func() {
		for i := range 12 {
			clock.Add(500 * time.Millisecond)
			for _, l := range []*postgres.ShareLimiter{a, b, c, joiner} {
				if l == c && i >= 4 {
					continue
				}
				if err := l.Heartbeat(context.Background()); err != nil {
					t.Error(err)
				}
			}
		}
	})
	wg.Wait()
	stop.Store(true)
	assert.LessOrEqual(t, allowed["tools:busy"], busyLimit, "never more than the limit")
	for key, n := range allowed {
		if key != "tools:busy" {
			assert.LessOrEqual(t, n, crowdLimit, key)
		}
	}
	// The live ones give back what was reserved for them; then the busy key
	// takes what is left, from one replica.
	for _, l := range []*postgres.ShareLimiter{a, b, joiner} {
		require.NoError(t, l.Heartbeat(t.Context()))
	}
	clock.Add(time.Second) // past any refusal held in memory
	for _, l := range []*postgres.ShareLimiter{a, b, joiner} {
		require.NoError(t, l.Heartbeat(t.Context()))
	}
	for {
		ok, _, err := a.Allow(t.Context(), "tools:busy", busyLimit, time.Minute)
		require.NoError(t, err)
		if !ok {
			break
		}
		allowed["tools:busy"]++
	}
	assert.LessOrEqual(t, allowed["tools:busy"], busyLimit, "never more than the limit")
	assert.GreaterOrEqual(t, allowed["tools:busy"], busyLimit-busyLimit/3, "all but at most the dead replica's share")
	var local, asked int64
	for _, l := range replicas {
		local += l.Counts().Local
		asked += l.Counts().Database
	}
	assert.Positive(t, local, "calls were counted in memory")
	assert.Positive(t, asked, "and the database asked for keys past their share")
	t.Logf("busy key: %d of %d allowed; %d calls counted in memory, %d asked the database", allowed["tools:busy"], busyLimit, local, asked)
}

// A replica whose first beat finds more open windows in the database than
// it may hold (MaxKeys) keeps those ending last: a key it left out must not
// be counted in memory from zero once a kept key's window has ended and
// made room, while the database still counts it.
func TestAReplicaThatCannotReadEveryOpenWindowKeepsThoseEndingLast(t *testing.T) {
	db := pgtest.New(t)
	clock := porttest.NewHandClock()
	opts := shareOpts
	opts.MaxKeys = 2
	now := clock.Now()
	// Written in this order, the early ones first: a read in the table's
	// order would keep them.
	for i, end := range []time.Duration{time.Minute, time.Minute, 10 * time.Minute, 10 * time.Minute} {
		_, err := db.Pool.Exec(t.Context(), `INSERT INTO rate_limits (key, window_end, count) VALUES ($1, $2, 10)`,
			fmt.Sprintf("tools:k%d", i), now.Add(end))
		require.NoError(t, err)
	}
	b := postgres.NewShareLimiter(db.DB, clock, opts)
	require.NoError(t, b.Heartbeat(t.Context()))
	beatFor(t, clock, 2*time.Minute, b) // the early windows end and are swept
	ok, _, err := b.Allow(t.Context(), "tools:k2", 10, time.Minute)
	require.NoError(t, err)
	assert.False(t, ok, "tools:k2 spent its 10 in the database, still open there")
	assert.Zero(t, b.Counts().Local, "nothing of it counted in memory")
}

// windowCount is the count of key's window in rate_limits (0 without one).
func windowCount(t *testing.T, db *pgtest.DB, key string) int {
	t.Helper()
	var n int
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT coalesce((SELECT count FROM rate_limits WHERE key = $1), 0)`, key).Scan(&n))
	return n
}
