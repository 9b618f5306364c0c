package postgres_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports/porttest"
)

// eager takes blocks as soon as it can: up to half of what is left, 16 at
// most, so the tests meet blocks with a small limit.
var eager = postgres.LimiterOptions{MaxBlock: 16, LeftShare: 2, FastGap: time.Hour, IdleGiveBack: 500 * time.Millisecond,
	RefusalHold: time.Second, MaxKeys: 1000}

func windowCount(t *testing.T, db *pgtest.DB, key string) int {
	t.Helper()
	var n int
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT coalesce((SELECT count FROM rate_limits WHERE key = $1), 0)`, key).Scan(&n))
	return n
}

// Many callers on three limiters over one database, taking blocks ahead,
// never get more than the limit between them; once the blocks are given
// back, the window counts exactly the calls allowed.
func TestBlocksNeverAllowMoreThanTheLimitAcrossThreeLimiters(t *testing.T) {
	db := pgtest.New(t)
	clock := porttest.NewHandClock()
	var limiters []*postgres.RateLimiter
	for range 3 {
		limiters = append(limiters, postgres.NewRateLimiterWith(db.DB, clock, eager))
	}
	const limit = 500
	var allowed, refused atomic.Int64
	var wg sync.WaitGroup
	for w := range 24 {
		wg.Go(func() {
			l := limiters[w%3]
			for range 60 {
				ok, wait, err := l.Allow(context.Background(), "tools:busy", limit, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					allowed.Add(1)
				} else {
					refused.Add(1)
					if wait != time.Minute {
						t.Errorf("refused with %v to wait", wait)
					}
				}
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, allowed.Load(), int64(limit), "never more than the limit")
	assert.Positive(t, refused.Load(), "24 × 60 calls are more than the limit")
	held := windowCount(t, db, "tools:busy") - int(allowed.Load())
	assert.GreaterOrEqual(t, held, 0, "the window counts every call allowed")
	given := 0
	for _, l := range limiters {
		n, err := l.GiveBack(t.Context(), true)
		require.NoError(t, err)
		given += n
	}
	assert.Equal(t, held, given, "what was counted and not allowed was held, and is given back")
	assert.Equal(t, int(allowed.Load()), windowCount(t, db, "tools:busy"), "the window counts exactly the calls allowed")
	var ahead, spent int64
	for _, l := range limiters {
		ahead += l.LocalCalls().TakenAhead
		spent += l.LocalCalls().Spent
	}
	assert.Positive(t, ahead, "blocks were taken ahead")
	assert.Positive(t, spent, "and spent without a statement")
}

// Calls one limiter took ahead and didn't spend go back to the window when
// the key goes quiet there, and another limiter can take them.
func TestGivenBackBlocksAreUsableByAnotherLimiter(t *testing.T) {
	db := pgtest.New(t)
	clock := porttest.NewHandClock()
	a := postgres.NewRateLimiterWith(db.DB, clock, eager)
	b := postgres.NewRateLimiterWith(db.DB, clock, eager)
	const limit = 40
	allow := func(l *postgres.RateLimiter) bool {
		ok, _, err := l.Allow(t.Context(), "tools:a", limit, time.Minute)
		require.NoError(t, err)
		return ok
	}
	const spentByA = 5
	for range spentByA {
		require.True(t, allow(a))
	}
	took := windowCount(t, db, "tools:a")
	require.Greater(t, took, spentByA, "a took calls ahead: %d", took)
	spentByB := 0
	for allow(b) {
		spentByB++
	}
	assert.Equal(t, limit-took, spentByB, "b had what a had not taken")

	n, err := a.GiveBack(t.Context(), false)
	require.NoError(t, err)
	assert.Zero(t, n, "a's key is not idle yet")
	clock.Add(eager.IdleGiveBack)
	n, err = a.GiveBack(t.Context(), false)
	require.NoError(t, err)
	assert.Equal(t, took-spentByA, n, "a gives back what it didn't spend")

	assert.False(t, allow(b), "b repeats its refusal for a moment, from memory")
	clock.Add(eager.RefusalHold)
	for allow(b) {
		spentByB++
	}
	assert.Equal(t, limit-spentByA, spentByB, "b then takes the given-back calls: %d + %d = the limit", spentByA, spentByB)
	assert.Equal(t, limit, windowCount(t, db, "tools:a"))
}

// A refusal is repeated from memory for RefusalHold at most, and never past
// its window: then the database is asked again.
func TestRefusalsAreRememberedOnlyWithinTheirWindow(t *testing.T) {
	db := pgtest.New(t)
	clock := porttest.NewHandClock()
	opts := eager
	opts.RefusalHold = time.Hour // longer than the window
	l := postgres.NewRateLimiterWith(db.DB, clock, opts)
	allow := func() (bool, time.Duration) {
		ok, wait, err := l.Allow(t.Context(), "tools:r", 2, time.Minute)
		require.NoError(t, err)
		return ok, wait
	}
	for range 2 {
		ok, _ := allow()
		require.True(t, ok)
	}
	ok, wait := allow()
	require.False(t, ok)
	assert.Equal(t, time.Minute, wait)

	// With the window's row gone, only memory can still refuse.
	_, err := db.Pool.Exec(t.Context(), `DELETE FROM rate_limits`)
	require.NoError(t, err)
	clock.Add(30 * time.Second)
	ok, wait = allow()
	assert.False(t, ok, "refused from memory within the window")
	assert.Equal(t, 30*time.Second, wait, "the wait is the window's")
	clock.Add(30 * time.Second)
	ok, _ = allow()
	assert.True(t, ok, "the window ended: asked again, and a new window opened")
	assert.Equal(t, 1, windowCount(t, db, "tools:r"))
}

// A crash strands at most what was held: the calls taken ahead count until
// their window ends, and never more than the limit is allowed.
func TestACrashedLimitersBlockCountsUntilItsWindowEnds(t *testing.T) {
	db := pgtest.New(t)
	clock := porttest.NewHandClock()
	crashed := postgres.NewRateLimiterWith(db.DB, clock, eager)
	for range 3 {
		ok, _, err := crashed.Allow(t.Context(), "tools:c", 20, time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
	}
	stranded := windowCount(t, db, "tools:c") - 3
	require.Positive(t, stranded)
	other := postgres.NewRateLimiterWith(db.DB, clock, eager)
	n := 0
	for {
		ok, _, err := other.Allow(t.Context(), "tools:c", 20, time.Minute)
		require.NoError(t, err)
		if !ok {
			break
		}
		n++
	}
	assert.Equal(t, 20-3-stranded, n, "briefly fewer, never more")
	clock.Add(time.Minute)
	ok, _, err := other.Allow(t.Context(), "tools:c", 20, time.Minute)
	require.NoError(t, err)
	assert.True(t, ok, "a new window has the whole limit")
}
