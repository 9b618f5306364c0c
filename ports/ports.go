// Package ports holds the interfaces the application needs from the world, in the
// domain's words. Adapters implement them; app depends only on them.
package ports

import (
	"context"
	"errors"
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

// RateLimiter counts calls per key in fixed windows: a key's window starts at
// its first call and lasts window; a call past limit in it is refused until
// the window ends. The memory adapter counts in one process; the postgres one
// counts for every process on the database.
type RateLimiter interface {
	// Allow takes one call for key under limit per window. When refused it says
	// how long until the key may call again.
	Allow(ctx context.Context, key string, limit int, window time.Duration) (ok bool, retryAfter time.Duration, err error)
}

// Semaphore hands out leased slots by name: at most limit held at once among
// every holder, and at most one per key (an address), so one key can't hold
// them all. A slot ends when its holder releases it or when its lease runs
// out, so a holder that dies without releasing can't keep it.
type Semaphore interface {
	// Acquire takes a slot of name for key for at most lease, or refuses with
	// ErrKeyBusy (key holds one already) or ErrSlotsTaken (limit are held).
	// release gives the slot back; it is safe to call more than once.
	Acquire(ctx context.Context, name, key string, limit int, lease time.Duration) (release func(context.Context) error, err error)
}

// Semaphore refusals.
var (
	ErrKeyBusy    = errors.New("this key holds a slot already")
	ErrSlotsTaken = errors.New("every slot is taken")
)
