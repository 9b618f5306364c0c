package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// Bytes a body read back from the blob store may come to: the app refuses a
// snapshot past 32 MiB inflated, whose gzip is at most a few hundred bytes
// more; media's CHECK keeps a picture to 2 MiB.
const (
	snapshotBlobLimit = 33 << 20
	pictureBlobLimit  = 2 << 20
)

// bodies is where a row's content-addressed bytes go: the blob store when
// one is set (the row keeps the key, the hex SHA-256 of those bytes), else
// the row's own bytea column, as before issue 31.
type bodies struct{ blobs ports.Blobs }

// keep writes b to the blob store and returns the key the row records, or,
// with no store, returns b for the row's column. The blob is written before
// the row, so a row never names a blob that isn't there; a row that then
// fails to insert leaves a blob nothing names (harmless: same key, same
// bytes the next time).
func (s bodies) keep(ctx context.Context, b []byte) (inRow []byte, key *string, err error) {
	if s.blobs == nil {
		return b, nil, nil
	}
	k := sha256Hex(b)
	if err := s.blobs.Put(ctx, k, b); err != nil {
		return nil, nil, fmt.Errorf("keep a body in the blob store: %w", err)
	}
	return nil, &k, nil
}

// named is called inside the transaction that has just named key in a row
// (an insert, or the move's update), before it commits: the delete_blobs
// sweep may have deleted that blob in between the keep before the
// transaction and the naming. Naming a key deletes its orphan line
// (migrations/000049), which waits for a sweep holding it; once that line
// is passed no sweep can touch the key until the row is gone, so the one
// check here, writing b again if the blob is missing, is enough.
func (s bodies) named(ctx context.Context, key *string, b []byte) error {
	if key == nil || s.blobs == nil {
		return nil
	}
	has, err := s.blobs.Has(ctx, *key)
	if err != nil {
		return fmt.Errorf("check a named body is in the blob store: %w", err)
	}
	if has {
		return nil
	}
	if err := s.blobs.Put(ctx, *key, b); err != nil {
		return fmt.Errorf("keep again a body the blob sweep deleted: %w", err)
	}
	return nil
}

// read is a row's bytes: its column's, or, when the column was emptied, the
// blob its key names.
func (s bodies) read(ctx context.Context, inRow []byte, key *string, limit int64) ([]byte, error) {
	if key == nil {
		return inRow, nil
	}
	if s.blobs == nil {
		return nil, fmt.Errorf("the body is in the blob store (key %s), and PETAL_BLOB_URL is off", *key)
	}
	b, err := s.blobs.Get(ctx, *key, limit)
	if errors.Is(err, ports.ErrNoBlob) {
		return nil, fmt.Errorf("the blob store has no body under %s, which a row names", *key)
	}
	if err != nil {
		return nil, fmt.Errorf("read a body from the blob store: %w", err)
	}
	return b, nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// keptBody is where one picture's bytes went: the row's column or a blob.
type keptBody struct {
	inRow []byte
	key   *string
}

// keepPictures keeps each picture's bytes (keep), by the picture's name.
func (s bodies) keepPictures(ctx context.Context, pictures map[string]ports.StoredPicture) (map[string]keptBody, error) {
	out := make(map[string]keptBody, len(pictures))
	for name, p := range pictures {
		inRow, key, err := s.keep(ctx, p.Bytes)
		if err != nil {
			return nil, fmt.Errorf("picture %s: %w", name, err)
		}
		out[name] = keptBody{inRow: inRow, key: key}
	}
	return out, nil
}

// insertPicture keeps picture p in media inside tx, its bytes where keep
// put them (k), made at at (the zero time: the database's now). A picture
// kept already keeps its row; one being deleted meanwhile is waited for,
// then inserted again. The blob named is checked before tx commits
// (named).
func (s bodies) insertPicture(ctx context.Context, tx pgx.Tx, p ports.StoredPicture, k keptBody, at time.Time) error {
	var madeAt any
	if !at.IsZero() {
		madeAt = at
	}
	if _, err := tx.Exec(ctx, `INSERT INTO media (sha256, media_type, bytes, bytes_blob, width, height, created_at)
VALUES ($1, $2, $3, $4, $5, $6, coalesce($7::timestamptz, now())) ON CONFLICT (sha256) DO UPDATE SET created_at = media.created_at`,
		p.SHA256, p.MediaType, k.inRow, k.key, p.Width, p.Height, madeAt); err != nil {
		return err
	}
	return s.named(ctx, k.key, p.Bytes)
}
