// Package memory holds in-process adapters: state that lives and dies with one
// process. Limits that must hold across replicas belong in PostgreSQL instead.
package memory

import (
	"context"
	"sync"
	"time"

	"github.com/petal-near/petal/ports"
)

// RateLimiter is a fixed-window counter per key, in memory.
type RateLimiter struct {
	clock ports.Clock
	mu    sync.Mutex
	hits  map[string]*window
	sweep time.Time
}

type window struct {
	start time.Time
	per   time.Duration
	count int
}

var _ ports.RateLimiter = (*RateLimiter)(nil)

// NewRateLimiter makes an empty limiter reading time from clock.
func NewRateLimiter(clock ports.Clock) *RateLimiter {
	return &RateLimiter{clock: clock, hits: map[string]*window{}}
}

// Allow implements ports.RateLimiter.
func (l *RateLimiter) Allow(_ context.Context, key string, limit int, per time.Duration) (bool, time.Duration, error) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	// Forget finished windows now and then, so one-off addresses don't pile up.
	if now.Sub(l.sweep) > time.Minute {
		for k, w := range l.hits {
			if now.Sub(w.start) >= w.per {
				delete(l.hits, k)
			}
		}
		l.sweep = now
	}
	w, ok := l.hits[key]
	if !ok || now.Sub(w.start) >= per {
		w = &window{start: now, per: per}
		l.hits[key] = w
	}
	if w.count >= limit {
		return false, w.start.Add(per).Sub(now), nil
	}
	w.count++
	return true, 0, nil
}
