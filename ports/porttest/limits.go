package porttest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petal-near/petal/ports"
)

// HandClock is a clock a test moves by hand.
type HandClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewHandClock makes a clock standing at a fixed instant.
func NewHandClock() *HandClock {
	return &HandClock{now: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
}

// Now implements ports.Clock.
func (c *HandClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// Add moves the clock on by d.
func (c *HandClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

// RateLimiterContract runs the RateLimiter contract against the limiters
// newLimiter makes (a fresh, empty one per call, reading time from clock).
func RateLimiterContract(t *testing.T, newLimiter func(t *testing.T, clock ports.Clock) ports.RateLimiter) {
	allow := func(t *testing.T, l ports.RateLimiter, key string, limit int, per time.Duration) (bool, time.Duration) {
		t.Helper()
		ok, wait, err := l.Allow(t.Context(), key, limit, per)
		if err != nil {
			t.Fatalf("allow %s: %v", key, err)
		}
		return ok, wait
	}

	t.Run("a fixed window from the key's first call", func(t *testing.T) {
		clock := NewHandClock()
		l := newLimiter(t, clock)
		for i := range 3 {
			if ok, _ := allow(t, l, "a", 3, time.Minute); !ok {
				t.Fatalf("call %d refused", i+1)
			}
		}
		if ok, wait := allow(t, l, "a", 3, time.Minute); ok || wait != time.Minute {
			t.Fatalf("the 4th call: ok=%v wait=%v, want refused with a minute to wait", ok, wait)
		}
		if ok, _ := allow(t, l, "b", 3, time.Minute); !ok {
			t.Fatal("keys are counted apart")
		}
		clock.Add(45 * time.Second)
		if ok, wait := allow(t, l, "a", 3, time.Minute); ok || wait != 15*time.Second {
			t.Fatalf("45 s on: ok=%v wait=%v, want refused with 15 s to wait", ok, wait)
		}
		clock.Add(15 * time.Second)
		for i := range 3 {
			if ok, _ := allow(t, l, "a", 3, time.Minute); !ok {
				t.Fatalf("a new window: call %d refused", i+1)
			}
		}
		if ok, _ := allow(t, l, "a", 3, time.Minute); ok {
			t.Fatal("the new window has the same limit")
		}
	})

	t.Run("refused calls do not push the window on", func(t *testing.T) {
		clock := NewHandClock()
		l := newLimiter(t, clock)
		allow(t, l, "k", 1, time.Hour)
		for range 5 {
			clock.Add(10 * time.Minute)
			allow(t, l, "k", 1, time.Hour)
		}
		clock.Add(10 * time.Minute)
		if ok, _ := allow(t, l, "k", 1, time.Hour); !ok {
			t.Fatal("an hour after the first call the window is new, however many calls were refused")
		}
	})

	t.Run("exactly the limit under concurrency", func(t *testing.T) {
		l := newLimiter(t, NewHandClock())
		var allowed atomic.Int64
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				for range 10 {
					ok, _, err := l.Allow(t.Context(), "shared", 60, time.Minute)
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						allowed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if n := allowed.Load(); n != 60 {
			t.Fatalf("%d calls allowed, want exactly 60", n)
		}
	})
}

// SemaphoreContract runs the Semaphore contract against the semaphores
// newSemaphore makes (a fresh, empty one per call, reading time from clock).
func SemaphoreContract(t *testing.T, newSemaphore func(t *testing.T, clock ports.Clock) ports.Semaphore) {
	take := func(t *testing.T, s ports.Semaphore, name, key string, limit int, lease time.Duration) (func(), error) {
		t.Helper()
		release, err := s.Acquire(t.Context(), name, key, limit, lease)
		if err != nil {
			if !errors.Is(err, ports.ErrKeyBusy) && !errors.Is(err, ports.ErrSlotsTaken) {
				t.Fatalf("acquire %s/%s: %v", name, key, err)
			}
			return nil, err
		}
		return func() {
			if err := release(t.Context()); err != nil {
				t.Fatalf("release %s/%s: %v", name, key, err)
			}
		}, nil
	}
	const lease = time.Minute

	t.Run("at most limit slots, at most one per key", func(t *testing.T) {
		s := newSemaphore(t, NewHandClock())
		releaseA, err := take(t, s, "fresh", "a", 2, lease)
		if err != nil {
			t.Fatalf("first slot: %v", err)
		}
		if _, err := take(t, s, "fresh", "a", 2, lease); !errors.Is(err, ports.ErrKeyBusy) {
			t.Fatalf("a second slot for one key: %v, want ErrKeyBusy", err)
		}
		if _, err := take(t, s, "fresh", "b", 2, lease); err != nil {
			t.Fatalf("another key's slot: %v", err)
		}
		if _, err := take(t, s, "fresh", "c", 2, lease); !errors.Is(err, ports.ErrSlotsTaken) {
			t.Fatalf("past the limit: %v, want ErrSlotsTaken", err)
		}
		releaseA()
		releaseA() // twice changes nothing
		if _, err := take(t, s, "fresh", "c", 2, lease); err != nil {
			t.Fatalf("a released slot is free again: %v", err)
		}
		if _, err := take(t, s, "fresh", "d", 2, lease); !errors.Is(err, ports.ErrSlotsTaken) {
			t.Fatalf("a second release freed a slot it did not hold: %v", err)
		}
	})

	t.Run("names are counted apart", func(t *testing.T) {
		s := newSemaphore(t, NewHandClock())
		if _, err := take(t, s, "one", "a", 1, lease); err != nil {
			t.Fatal(err)
		}
		if _, err := take(t, s, "two", "a", 1, lease); err != nil {
			t.Fatalf("the same key under another name: %v", err)
		}
	})

	t.Run("a lapsed lease frees its slot, and its late release frees nobody else's", func(t *testing.T) {
		clock := NewHandClock()
		s := newSemaphore(t, clock)
		releaseDead, err := take(t, s, "fresh", "dead", 1, lease)
		if err != nil {
			t.Fatal(err)
		}
		clock.Add(lease - time.Second)
		if _, err := take(t, s, "fresh", "b", 1, lease); !errors.Is(err, ports.ErrSlotsTaken) {
			t.Fatalf("inside the lease: %v, want ErrSlotsTaken", err)
		}
		clock.Add(time.Second)
		if _, err := take(t, s, "fresh", "b", 1, lease); err != nil {
			t.Fatalf("the lease has run out: %v", err)
		}
		releaseDead()
		if _, err := take(t, s, "fresh", "c", 1, lease); !errors.Is(err, ports.ErrSlotsTaken) {
			t.Fatalf("a lapsed holder's release freed b's slot: %v", err)
		}
		if _, err := take(t, s, "fresh", "dead", 1, lease); !errors.Is(err, ports.ErrSlotsTaken) {
			t.Fatalf("the lapsed key: %v, want ErrSlotsTaken", err)
		}
	})

	t.Run("exactly the limit under concurrency", func(t *testing.T) {
		s := newSemaphore(t, NewHandClock())
		var granted, busy atomic.Int64
		var wg sync.WaitGroup
		for i := range 24 {
			wg.Go(func() {
				// Every key asks twice at once: one of the two may win.
				key := fmt.Sprintf("k%d", i%12)
				_, err := s.Acquire(t.Context(), "fresh", key, 3, lease)
				switch {
				case err == nil:
					granted.Add(1)
				case errors.Is(err, ports.ErrKeyBusy), errors.Is(err, ports.ErrSlotsTaken):
					busy.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n := granted.Load(); n != 3 {
			t.Fatalf("%d slots granted, want exactly 3", n)
		}
		if n := busy.Load(); n != 21 {
			t.Fatalf("%d refused, want 21", n)
		}
	})
}
