package ports

import (
	"context"
	"time"
)

// RefreshedPayload starts the NOTIFY on FlowersChannel that tells every
// replica's map a refreshed reading was kept ("refreshed <map>"; a flower's
// payload starts with its 64-hex id, so the two never meet): each reads
// the refreshed readings again.
const RefreshedPayload = "refreshed"

// RefreshState is what the map_refresh job knows of one target (a map's
// reader and params, by snapshots.TargetKey) between runs.
type RefreshState struct {
	TargetKey string
	// Mark is what the cheap check of the chain saw at the target's last
	// reading ("" when it has none or wasn't read by the job).
	Mark string
	// Failures in a row; the target isn't tried before NextTry.
	Failures int
	NextTry  time.Time
}

// RefreshedReading is a reading the map_refresh job kept of a map.
type RefreshedReading struct {
	Map      string
	Snapshot string // sha256
	KeptAt   time.Time
}

// MapRefresh is the map_refresh job's shared state in the database, so every
// replica counts one budget and one back-off: the maps' views, the readings
// the job kept, each target's state and each day's reads.
type MapRefresh interface {
	// Viewed counts one look at a map.
	Viewed(ctx context.Context, mapID string, at time.Time) error
	// MostViewed is which of ids were looked at most, the most first, at
	// most limit; a map never looked at is not among them.
	MostViewed(ctx context.Context, ids []string, limit int) ([]string, error)
	// States are the kept states of the targets named (a target never
	// tried has none).
	States(ctx context.Context, keys []string) (map[string]RefreshState, error)
	// Spend takes one read from day's budget of perDay, shared by every
	// replica; false when the day's reads are spent (nothing taken).
	Spend(ctx context.Context, day time.Time, perDay int) (bool, error)
	// Spent is how many reads day has spent.
	Spent(ctx context.Context, day time.Time) (int, error)
	// Kept keeps a reading made of a map, clears its target's failures and
	// notes mark, all at once, and tells every replica (RefreshedPayload).
	Kept(ctx context.Context, r RefreshedReading, state RefreshState) error
	// Skipped notes a target found unchanged: not tried again before next.
	Skipped(ctx context.Context, key, mapID string, next time.Time) error
	// Failed notes a read that failed: the target's failures go up by one
	// and it isn't tried before next.
	Failed(ctx context.Context, key, mapID, reason string, next time.Time) error
	// Readings is every reading the job kept, the oldest first, at most
	// limit (the newest kept when there are more).
	Readings(ctx context.Context, limit int) ([]RefreshedReading, error)
	// ForgetDays deletes the budget's days before day (retention).
	ForgetDays(ctx context.Context, before time.Time) (int64, error)
}
