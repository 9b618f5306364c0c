package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// BodyMover is ports.BodyMoves over the snapshots and media tables
// (migrations/000045).
type BodyMover struct {
	db    *DB
	blobs ports.Blobs
}

var _ ports.BodyMoves = (*BodyMover)(nil)

// NewBodyMover moves rows' bytes on db into blobs.
func NewBodyMover(db *DB, blobs ports.Blobs) *BodyMover { return &BodyMover{db: db, blobs: blobs} }

// movedTable names, per kind, the table, its bytes column, its key column
// and the most a row's bytes may be.
var movedTable = map[string]struct {
	table, bytes, key string
	limit             int64
}{
	ports.SnapshotBodies: {"snapshots", "body_gzip", "body_blob", snapshotBlobLimit},
	ports.PictureBodies:  {"media", "bytes", "bytes_blob", pictureBlobLimit},
}

// Move implements ports.BodyMoves. Rows are read one at a time (one body in
// memory, up to 33 MiB for a snapshot), and no lock is held while the store
// is written: the update's own WHERE re-checks that the column still holds
// the bytes that were written and hashed.
func (m *BodyMover) Move(ctx context.Context, kind, after string, batch int) (ports.BodiesMoved, error) {
	t, ok := movedTable[kind]
	if !ok {
		return ports.BodiesMoved{}, fmt.Errorf("move bodies: nothing called %q", kind)
	}
	out := ports.BodiesMoved{Last: after}
	rows, err := m.db.Pool.Query(ctx, `SELECT sha256 FROM `+t.table+` WHERE `+t.bytes+` IS NOT NULL AND sha256 > $1 ORDER BY sha256 LIMIT $2`, after, batch)
	if err != nil {
		return out, fmt.Errorf("move bodies: find %s: %w", kind, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return out, fmt.Errorf("move bodies: find %s: %w", kind, err)
	}
	var failed error
	for _, name := range names {
		n, err := m.moveOne(ctx, t.table, t.bytes, t.key, t.limit, name)
		if err != nil {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			out.Failed++
			failed = errors.Join(failed, fmt.Errorf("%s %s: %w", kind, name, err))
		} else if n > 0 {
			out.Rows++
			out.Bytes += n
		}
		out.Last = name
	}
	out.Done = len(names) < batch
	return out, failed
}

// moveOne moves one row's bytes, returning how many it moved (0: another
// move or a rewrite got there first).
func (m *BodyMover) moveOne(ctx context.Context, table, bytesCol, keyCol string, limit int64, name string) (int64, error) {
	var body []byte
	err := m.db.Pool.QueryRow(ctx, `SELECT `+bytesCol+` FROM `+table+` WHERE sha256 = $1 AND `+bytesCol+` IS NOT NULL`, name).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read: %w", err)
	}
	key := sha256Hex(body)
	if err := m.blobs.Put(ctx, key, body); err != nil {
		return 0, fmt.Errorf("write the blob: %w", err)
	}
	// The store is asked again, by a fresh read: the column is emptied only
	// for bytes the store gives back whole (one it doesn't show answers
	// ErrNoBlob).
	back, err := m.blobs.Get(ctx, key, max(limit, int64(len(body))))
	if err != nil {
		return 0, fmt.Errorf("read the blob back: %w", err)
	}
	if !bytes.Equal(back, body) {
		return 0, fmt.Errorf("the blob store gave back other bytes under %s", key)
	}
	// sha256() in the WHERE: the column is emptied only if it still holds
	// exactly the bytes kept under key.
	// The key named, the blob is checked again before the update commits:
	// a sweep of an orphan of the same bytes may have deleted it meanwhile.
	var moved int64
	err = pgx.BeginFunc(ctx, m.db.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE `+table+` SET `+bytesCol+` = NULL, `+keyCol+` = $2
WHERE sha256 = $1 AND `+bytesCol+` IS NOT NULL AND sha256(`+bytesCol+`) = decode($2, 'hex')`, name, key)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		moved = int64(len(body))
		return bodies{blobs: m.blobs}.named(ctx, &key, body)
	})
	if err != nil {
		return 0, fmt.Errorf("note the move: %w", err)
	}
	return moved, nil
}
