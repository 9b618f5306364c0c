package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestRateLimiterContract(t *testing.T) {
	porttest.RateLimiterContract(t, func(t *testing.T, clock ports.Clock) ports.RateLimiter {
		return postgres.NewRateLimiter(pgtest.New(t).DB, clock)
	})
}

func TestSemaphoreContract(t *testing.T) {
	porttest.SemaphoreContract(t, func(t *testing.T, clock ports.Clock) ports.Semaphore {
		return postgres.NewSemaphore(pgtest.New(t).DB, clock)
	})
}

// Two limiters on one database are one allowance: what one process took,
// another can't take again.
func TestRateLimiterIsSharedByEveryProcessOnTheDatabase(t *testing.T) {
	db := pgtest.New(t)
	clock := porttest.NewHandClock()
	a := postgres.NewRateLimiter(db.DB, clock)
	b := postgres.NewRateLimiter(db.DB, clock)
	for i := range 6 {
		l := a
		if i%2 == 1 {
			l = b
		}
		ok, _, err := l.Allow(t.Context(), "tools:198.51.100.1", 6, time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "call %d", i+1)
	}
	ok, wait, err := b.Allow(t.Context(), "tools:198.51.100.1", 6, time.Minute)
	require.NoError(t, err)
	assert.False(t, ok, "the 7th call, whichever process takes it")
	assert.Equal(t, time.Minute, wait)
}

func TestRateLimiterSweepDeletesOnlyClosedWindows(t *testing.T) {
	db := pgtest.New(t)
	clock := porttest.NewHandClock()
	l := postgres.NewRateLimiter(db.DB, clock)
	for i := range 12 {
		_, _, err := l.Allow(t.Context(), "short:"+string(rune('a'+i)), 5, time.Minute)
		require.NoError(t, err)
	}
	_, _, err := l.Allow(t.Context(), "long", 5, time.Hour)
	require.NoError(t, err)
	gone, err := l.SweepClosed(t.Context(), clock.Now().Add(2*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, int64(12), gone)
	var left int
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM rate_limits`).Scan(&left))
	assert.Equal(t, 1, left, "the hour's window is still open")
}

// Two semaphores on one database hand out one set of slots.
func TestSemaphoreIsSharedByEveryProcessOnTheDatabase(t *testing.T) {
	db := pgtest.New(t)
	clock := porttest.NewHandClock()
	a := postgres.NewSemaphore(db.DB, clock)
	b := postgres.NewSemaphore(db.DB, clock)
	_, err := a.Acquire(t.Context(), "fresh_read", "198.51.100.1", 2, time.Minute)
	require.NoError(t, err)
	_, err = b.Acquire(t.Context(), "fresh_read", "198.51.100.1", 2, time.Minute)
	assert.ErrorIs(t, err, ports.ErrKeyBusy, "one address, two processes")
	release, err := b.Acquire(t.Context(), "fresh_read", "198.51.100.2", 2, time.Minute)
	require.NoError(t, err)
	_, err = a.Acquire(t.Context(), "fresh_read", "198.51.100.3", 2, time.Minute)
	assert.ErrorIs(t, err, ports.ErrSlotsTaken)
	require.NoError(t, release(t.Context()))
	_, err = a.Acquire(t.Context(), "fresh_read", "198.51.100.3", 2, time.Minute)
	assert.NoError(t, err, "released by the other process")
}

// Checks racing on two processes, over many keys and two limits on one key,
// share statements (limits_batch.go) and still allow exactly each limit.
func TestRacingChecksOnTwoProcessesAllowExactlyEachLimit(t *testing.T) {
	db := pgtest.New(t)
	clock := porttest.NewHandClock()
	limiters := []*postgres.RateLimiter{postgres.NewRateLimiter(db.DB, clock), postgres.NewRateLimiter(db.DB, clock)}
	keys := []string{"tools:a", "tools:b", "tools:c", "chats:a"}
	limits := map[string]int{"tools:a": 40, "tools:b": 7, "tools:c": 1, "chats:a": 3}
	var mu sync.Mutex
	allowed := map[string]int{}
	var wg sync.WaitGroup
	for w := range 24 {
		wg.Go(func() {
			l := limiters[w%2]
			for i := range 30 {
				key := keys[(w+i)%len(keys)]
				ok, wait, err := l.Allow(context.Background(), key, limits[key], time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if !ok && wait != time.Minute {
					t.Errorf("%s refused with %v to wait", key, wait)
				}
				if ok {
					mu.Lock()
					allowed[key]++
					mu.Unlock()
				}
			}
		})
	}
	// The same key checked under another limit at the same time waits for
	// its own statement (one statement can't change a row twice), in the
	// same window: its calls count against tools:c's limit of 1 too.
	var extra int
	wg.Go(func() {
		for range 10 {
			ok, _, err := limiters[0].Allow(context.Background(), "tools:c", 1000, time.Minute)
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				extra++
				mu.Unlock()
			}
		}
	})
	wg.Wait()
	assert.Equal(t, 10, extra, "under a limit of 1000, all ten")
	for _, k := range []string{"tools:a", "tools:b", "chats:a"} {
		assert.Equal(t, limits[k], allowed[k], "%s: every call of the limit allowed, none more", k)
	}
	assert.LessOrEqual(t, allowed["tools:c"], 1, "tools:c: at most its one call, and none once the others took the window")
}
