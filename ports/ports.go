// Package ports holds the interfaces the application needs from the world, in the
// domain's words. Adapters implement them; app depends only on them.
package ports

import (
	"context"
	"time"
)

// Clock tells the time. The domain never calls time.Now itself.
type Clock interface {
	Now() time.Time
}

// Database is the health view of the store: does it answer?
type Database interface {
	Ping(ctx context.Context) error
}

// RateLimiter counts calls per key in fixed windows.
type RateLimiter interface {
	// Allow takes one call for key under limit per window. When refused it says
	// how long until the key may call again.
	Allow(ctx context.Context, key string, limit int, window time.Duration) (ok bool, retryAfter time.Duration, err error)
}
