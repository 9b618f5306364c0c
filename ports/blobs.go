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
