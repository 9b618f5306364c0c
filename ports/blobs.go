package ports

import (
	"context"
	"errors"
	"time"
)

// Blobs keeps content-addressed bodies (snapshot bodies, pictures) outside
// PostgreSQL: each is kept under the hex SHA-256 of its bytes, so a write is
// idempotent and a kept body is never rewritten.
type Blobs interface {
	// Put keeps body under key, which must be the hex SHA-256 of body (a
	// mismatch is refused, nothing kept). A key already kept is left as it is.
	Put(ctx context.Context, key string, body []byte) error
	// Get reads the body kept under key, at most limit bytes (a longer one
	// is refused, not cut): ErrNoBlob when none is.
	Get(ctx context.Context, key string, limit int64) ([]byte, error)
	// Has reports whether key is kept.
	Has(ctx context.Context, key string) (bool, error)
	// Delete forgets the body kept under key; a key nothing is kept under
	// is no error. Only BlobSweeps calls it: it alone knows no row names key.
	Delete(ctx context.Context, key string) error
}

// ErrNoBlob is Blobs.Get's answer for a key nothing is kept under.
var ErrNoBlob = errors.New("no blob under that key")

// What BodyMoves moves: the rows whose bytes may live in Blobs.
const (
	SnapshotBodies = "snapshots" // snapshots.body_gzip
	PictureBodies  = "pictures"  // media.bytes
)

// BodiesMoved is what one batch of BodyMoves.Move did.
type BodiesMoved struct {
	Rows, Bytes int64  // rows whose bytes now live only in Blobs, and those bytes
	Failed      int64  // rows tried and left as they were (their bytes still in the row)
	Last        string // the last row's name looked at: the next batch starts after it
	Done        bool   // no row after Last holds its bytes
}

// BodyMoves moves bytes still kept in PostgreSQL rows into Blobs, a batch at
// a time, each row by one update that empties its column only once its
// bytes are in the store and hash to its key: a move that stops anywhere
// loses nothing, and a second one starts where the rows say.
type BodyMoves interface {
	// Move moves up to batch rows of kind named after after ("" from the
	// start).
	Move(ctx context.Context, kind string, after string, batch int) (BodiesMoved, error)
}

// BlobsSwept is what one batch of BlobSweeps.Sweep did.
type BlobsSwept struct {
	Deleted map[string]int64 // blobs deleted, by kind (SnapshotBodies, PictureBodies)
	Failed  int64            // blobs the store refused to delete (tried again next time)
	Done    bool             // no orphan as old is left (but those that failed, which wait again)
}

// BlobSweeps deletes the blobs no row names any more: a row deleted while
// its bytes lived in Blobs leaves its key behind as an orphan, and a key
// orphaned before the cut is deleted unless a row names it again. A writer
// naming a key the sweep is deleting waits for it, then finds the blob gone
// and writes it again, so no row is left naming a missing blob.
type BlobSweeps interface {
	// Sweep deletes up to batch blobs orphaned longer than olderThan ago
	// (by the database's clock), oldest first. A blob the store refuses to
	// delete waits olderThan again.
	Sweep(ctx context.Context, olderThan time.Duration, batch int) (BlobsSwept, error)
}

// BlobLinks is a blob store that can hand out a time-limited URL reading a
// body straight from it (S3's presigned GET), served with the headers asked.
type BlobLinks interface {
	// SignedURL is such a URL for key, or ErrNoLinks when this store can't
	// make one that serves the headers asked.
	SignedURL(ctx context.Context, key string, as ServedAs, expiry time.Duration) (string, error)
}

// ServedAs is how the store must serve a body reached by a signed URL.
type ServedAs struct {
	ContentType, ContentEncoding, CacheControl string
}

// ErrNoLinks is BlobLinks.SignedURL's answer for a store that signs no URLs
// (a file:// folder, memory) or can't set the headers asked.
var ErrNoLinks = errors.New("this blob store signs no URLs")

// SnapshotLinks sends a snapshot body's reader to the blob store
// (PETAL_BLOB_REDIRECT).
type SnapshotLinks interface {
	// BodyLink is a signed URL serving the snapshot's stored gzip and the
	// snapshot's origin; link is "" when its body is still in its row.
	// errs.NotFound when no snapshot has the name.
	BodyLink(ctx context.Context, sha256 string) (link, origin string, err error)
}
