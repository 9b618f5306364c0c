package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// SnapshotRepository keeps snapshots in the snapshots table (migrations/000002_snapshots),
// their bodies in the blob store when one is set (KeepingBodiesIn,
// migrations/000045).
type SnapshotRepository struct {
	db     *DB
	bodies bodies
}

var _ ports.SnapshotStore = (*SnapshotRepository)(nil)

// NewSnapshotRepository makes the snapshot store over db, its bodies in the
// rows.
func NewSnapshotRepository(db *DB) *SnapshotRepository { return &SnapshotRepository{db: db} }

// KeepingBodiesIn has new bodies written to blobs (nil: the rows), keyed by
// the SHA-256 of the gzip as stored; a row whose body is still in
// body_gzip is read from there until the move job moves it.
func (r *SnapshotRepository) KeepingBodiesIn(blobs ports.Blobs) *SnapshotRepository {
	r.bodies = bodies{blobs: blobs}
	return r
}

// Put implements ports.SnapshotStore. The name is the primary key, so a
// second write of the same snapshot, even a concurrent one, stores nothing
// again.
func (r *SnapshotRepository) Put(ctx context.Context, s ports.StoredSnapshot) (bool, error) {
	blockTime, err := time.Parse(time.RFC3339Nano, s.Block.Time)
	if err != nil {
		return false, errs.New(errs.BadInput, "block time is not an RFC 3339 time").WithCause(err)
	}
	var storedAt any
	if !s.StoredAt.IsZero() {
		storedAt = s.StoredAt
	}
	// A reading this site made itself is this site's, whoever stored the
	// same bytes first (a posted reading, the demo): only the origin moves,
	// and only up to this_site. xmax = 0 tells an insert from that update.
	inRow, key, err := r.bodies.keep(ctx, s.Gzipped)
	if err != nil {
		return false, fmt.Errorf("postgres: put snapshot: %w", err)
	}
	var inserted bool
	insert := func(q interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}) error {
		return q.QueryRow(ctx, `INSERT INTO snapshots
  (sha256, network, target_key, block_height, block_hash, block_time, origin, account_count, title, about, body_gzip, body_blob, stored_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, coalesce($13::timestamptz, now()))
ON CONFLICT (sha256) DO UPDATE SET origin = 'this_site'
WHERE EXCLUDED.origin = 'this_site' AND snapshots.origin <> 'this_site'
RETURNING xmax = 0`,
			s.SHA256, s.Network, s.TargetKey, int64(s.Block.Height), s.Block.Hash, blockTime, s.Origin, s.Count,
			s.Title, s.About, inRow, key, storedAt).Scan(&inserted)
	}
	if key == nil {
		err = insert(r.db.Pool) // bytes in the row: one statement
	} else {
		// A body in the store: checked again once named (bodies.named).
		err = pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
			if err := insert(tx); err != nil || !inserted {
				return err
			}
			return r.bodies.named(ctx, key, s.Gzipped)
		})
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil // held already, origin unchanged
	}
	if err != nil {
		return false, fmt.Errorf("postgres: put snapshot: %w", err)
	}
	return inserted, nil
}

const snapshotColumns = `sha256, network, target_key, block_height, block_hash, block_time, origin, account_count, title, about, body_gzip, body_blob, stored_at`

// Get implements ports.SnapshotStore.
func (r *SnapshotRepository) Get(ctx context.Context, sha256 string) (ports.StoredSnapshot, error) {
	return r.scanSnapshot(ctx, r.db.Pool.QueryRow(ctx, `SELECT `+snapshotColumns+` FROM snapshots WHERE sha256 = $1`, sha256))
}

// Latest implements ports.SnapshotStore: of this site's own readings, the
// one at the highest block, the latest stored among equals.
func (r *SnapshotRepository) Latest(ctx context.Context, targetKey string) (ports.StoredSnapshot, error) {
	return r.scanSnapshot(ctx, r.db.Pool.QueryRow(ctx, `SELECT `+snapshotColumns+` FROM snapshots
WHERE target_key = $1 AND origin = 'this_site' ORDER BY block_height DESC, stored_at DESC LIMIT 1`, targetKey))
}

func (r *SnapshotRepository) scanSnapshot(ctx context.Context, row pgx.Row) (ports.StoredSnapshot, error) {
	var s ports.StoredSnapshot
	var height int64
	var blockTime time.Time
	var key *string
	err := row.Scan(&s.SHA256, &s.Network, &s.TargetKey, &height, &s.Block.Hash, &blockTime, &s.Origin, &s.Count,
		&s.Title, &s.About, &s.Gzipped, &key, &s.StoredAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return ports.StoredSnapshot{}, errs.New(errs.NotFound, "no such snapshot")
	}
	if err != nil {
		return ports.StoredSnapshot{}, fmt.Errorf("postgres: read snapshot: %w", err)
	}
	s.Block.Height = uint64(height)
	s.Block.Time = blockTime.UTC().Format(time.RFC3339Nano)
	if s.Gzipped, err = r.bodies.read(ctx, s.Gzipped, key, snapshotBlobLimit); err != nil {
		return ports.StoredSnapshot{}, fmt.Errorf("postgres: read snapshot %s: %w", s.SHA256, err)
	}
	return s, nil
}

// Signed links to snapshot bodies: valid a quarter of an hour, while the
// redirect to one may be cached five minutes (the HTTP door's), so a cached
// redirect never points at a link that has run out.
const snapshotLinkExpiry = 15 * time.Minute

// BodyLink implements ports.SnapshotLinks when the blob store signs URLs
// (ports.BlobLinks): a body still in its row has none.
func (r *SnapshotRepository) BodyLink(ctx context.Context, sha256 string) (string, string, error) {
	var key *string
	var origin string
	err := r.db.Pool.QueryRow(ctx, `SELECT body_blob, origin FROM snapshots WHERE sha256 = $1`, sha256).Scan(&key, &origin)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", errs.New(errs.NotFound, "no such snapshot")
	}
	if err != nil {
		return "", "", fmt.Errorf("postgres: find a snapshot's body: %w", err)
	}
	links, ok := r.bodies.blobs.(ports.BlobLinks)
	if key == nil || !ok {
		return "", origin, nil
	}
	link, err := links.SignedURL(ctx, *key, ports.ServedAs{ContentType: "application/json", ContentEncoding: "gzip",
		CacheControl: "public, max-age=31536000, immutable"}, snapshotLinkExpiry)
	if err != nil {
		return "", origin, fmt.Errorf("postgres: sign a snapshot body's link: %w", err)
	}
	return link, origin, nil
}
