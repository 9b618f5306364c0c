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
	Origin    string // this_site, their_machine or demo
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
	// Storing again changes nothing, but for one thing: a reading stored
	// with origin this_site (this site read it itself) makes a held one of
	// another origin this site's.
	Put(ctx context.Context, s StoredSnapshot) (stored bool, err error)
	// Get returns a stored snapshot, or errs.NotFound.
	Get(ctx context.Context, sha256 string) (StoredSnapshot, error)
	// Latest is the newest of this site's own snapshots of a target
	// (origin this_site), or errs.NotFound. A posted reading or the demo is
	// never a target's stored reading, whatever its block.
	Latest(ctx context.Context, targetKey string) (StoredSnapshot, error)
}
