package memory

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type handClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *handClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *handClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestRateLimiterFixedWindow(t *testing.T) {
	clock := &handClock{now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	l := NewRateLimiter(clock)
	for i := range 3 {
		ok, _, err := l.Allow(t.Context(), "a", 3, time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "call %d", i+1)
	}
	ok, wait, err := l.Allow(t.Context(), "a", 3, time.Minute)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, time.Minute, wait)

	ok, _, _ = l.Allow(t.Context(), "b", 3, time.Minute)
	assert.True(t, ok, "keys are counted apart")

	clock.add(45 * time.Second)
	ok, wait, _ = l.Allow(t.Context(), "a", 3, time.Minute)
	assert.False(t, ok)
	assert.Equal(t, 15*time.Second, wait)
	clock.add(15 * time.Second)
	ok, _, _ = l.Allow(t.Context(), "a", 3, time.Minute)
	assert.True(t, ok, "a new window")
}

func TestRateLimiterForgetsFinishedWindows(t *testing.T) {
	clock := &handClock{now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	l := NewRateLimiter(clock)
	for i := range 1000 {
		_, _, _ = l.Allow(t.Context(), fmt.Sprintf("one-off-%d", i), 60, time.Minute)
	}
	assert.Len(t, l.hits, 1000)
	clock.add(2 * time.Minute)
	_, _, _ = l.Allow(t.Context(), "later", 60, time.Minute)
	assert.Len(t, l.hits, 1, "one-off addresses do not pile up")
}

func TestRateLimiterUnderConcurrency(t *testing.T) {
	l := NewRateLimiter(&handClock{now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)})
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 20 {
		wg.Go(func() {
			for range 10 {
				ok, _, _ := l.Allow(t.Context(), "shared", 60, time.Minute)
				if ok {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 60, allowed, "exactly the limit, however the calls interleave")
}
