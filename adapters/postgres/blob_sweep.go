package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// BlobSweeper is ports.BlobSweeps over blob_orphans, the keys rows left
// behind when they were deleted (migrations/000049's triggers).
type BlobSweeper struct {
	db    *DB
	blobs ports.Blobs
}

var _ ports.BlobSweeps = (*BlobSweeper)(nil)

// NewBlobSweeper deletes from blobs what no row on db names.
func NewBlobSweeper(db *DB, blobs ports.Blobs) *BlobSweeper {
	return &BlobSweeper{db: db, blobs: blobs}
}

// Sweep implements ports.BlobSweeps. The orphans' lines stay locked while
// their blobs are deleted: a writer naming one of those keys meanwhile
// waits on its line (its trigger deletes it), then finds the blob gone and
// writes it again (bodies.named). A key identifies one row (a picture's
// key is its name; a snapshot's, the hash of its gzip, follows from its
// name), so a line exists only while no row names its key, and the lines
// alone say what may go: no table is searched for the key.
func (s *BlobSweeper) Sweep(ctx context.Context, olderThan time.Duration, batch int) (ports.BlobsSwept, error) {
	out := ports.BlobsSwept{Deleted: map[string]int64{}}
	var failed error
	err := pgx.BeginFunc(ctx, s.db.Pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT key, kind FROM blob_orphans
WHERE orphaned_at < now() - make_interval(secs => $1)
ORDER BY orphaned_at, key LIMIT $2 FOR UPDATE SKIP LOCKED`, olderThan.Seconds(), batch)
		if err != nil {
			return err
		}
		type orphan struct{ Key, Kind string }
		orphans, err := pgx.CollectRows(rows, pgx.RowToStructByPos[orphan])
		if err != nil {
			return err
		}
		out.Done = len(orphans) < batch
		var gone, kept []string
		for _, o := range orphans {
			if err := s.blobs.Delete(ctx, o.Key); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				out.Failed++
				failed = errors.Join(failed, fmt.Errorf("%s %s: %w", o.Kind, o.Key, err))
				kept = append(kept, o.Key)
				continue
			}
			out.Deleted[o.Kind]++
			gone = append(gone, o.Key)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM blob_orphans WHERE key = ANY($1)`, gone); err != nil {
			return err
		}
		// Tried again after olderThan, behind the rest.
		_, err = tx.Exec(ctx, `UPDATE blob_orphans SET orphaned_at = now() WHERE key = ANY($1)`, kept)
		return err
	})
	if err != nil {
		return ports.BlobsSwept{Deleted: map[string]int64{}}, fmt.Errorf("postgres: sweep blobs: %w", err)
	}
	return out, failed
}
