package ports

import (
	"context"
	"errors"
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
