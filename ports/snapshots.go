package ports

import (
	"context"
	"time"

	"github.com/petal-near/petal/domain/snapshots"
)

// StoredSnapshot is a snapshot as kept: its name, canonical bytes (gzipped as
// stored) and where it came from.
type StoredSnapshot struct {
	SHA256    string
	Network   string
	TargetKey string
	Block     snapshots.Block
	Origin    string // this_site or their_machine
	Count     int
	Title     string
	About     string
	Gzipped   []byte // the canonical JSON, gzipped exactly once, served as is
	StoredAt  time.Time
}

// SnapshotStore keeps snapshots by their SHA-256. Writing the same snapshot
// twice stores it once.
type SnapshotStore interface {
	// Put stores a snapshot; stored is false when it was already there.
	Put(ctx context.Context, s StoredSnapshot) (stored bool, err error)
	// Get returns a stored snapshot, or errs.NotFound.
	Get(ctx context.Context, sha256 string) (StoredSnapshot, error)
	// Latest is the newest snapshot of a target, or errs.NotFound.
	Latest(ctx context.Context, targetKey string) (StoredSnapshot, error)
}
