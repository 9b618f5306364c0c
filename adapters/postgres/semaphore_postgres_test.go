package postgres_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestSemaphoreContract(t *testing.T) {
	porttest.SemaphoreContract(t, func(t *testing.T, clock ports.Clock) ports.Semaphore {
		return postgres.NewSemaphore(pgtest.New(t).DB, clock)
	})
}

// The rate_limit_windows job deletes the windows that have closed, and only
// those, in batches.
func TestSweepClosedWindowsDeletesOnlyClosedWindows(t *testing.T) {
	db := pgtest.New(t)
	now := time.Now().UTC().Truncate(time.Microsecond)
	_, err := db.Pool.Exec(t.Context(), `INSERT INTO rate_limits (key, window_end, count, lim, taken)
SELECT 'short:' || i, $1::timestamptz, 1, 5, 0 FROM generate_series(1, 5012) i`, now.Add(time.Minute))
	require.NoError(t, err)
	_, err = db.Pool.Exec(t.Context(), `INSERT INTO rate_limits (key, window_end, count, lim, taken) VALUES ('long', $1, 1, 5, 0)`, now.Add(time.Hour))
	require.NoError(t, err)
	gone, err := postgres.SweepClosedWindows(t.Context(), db.DB, now.Add(2*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, int64(5012), gone, "past one batch of 5,000")
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
