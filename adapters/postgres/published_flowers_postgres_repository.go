package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/ports"
)

// PublishedFlowerRepository keeps published flowers and prepared records
// (migrations/000021_published_flowers).
type PublishedFlowerRepository struct{ db *DB }

var _ ports.PublishedFlowers = (*PublishedFlowerRepository)(nil)

// NewPublishedFlowerRepository makes the store over db.
func NewPublishedFlowerRepository(db *DB) *PublishedFlowerRepository {
	return &PublishedFlowerRepository{db: db}
}

const keptColumns = `id, network, maker, map, snapshot_sha256, record, coalesce(name, ''), made_at, published_at, status, came`

func scanKept(row pgx.Row) (published.Kept, error) {
	var k published.Kept
	var record string
	err := row.Scan(&k.ID, &k.Network, &k.Maker, &k.Map, &k.Snapshot, &record, &k.Name, &k.MadeAt, &k.PublishedAt, &k.Status, &k.Came)
	k.Record = []byte(record)
	k.MadeAt, k.PublishedAt = k.MadeAt.UTC(), k.PublishedAt.UTC()
	return k, err
}

// Keep implements ports.PublishedFlowers. The insert and its NOTIFY are one
// statement, so the notification goes out with the commit and only for a
// row this call inserted.
func (r *PublishedFlowerRepository) Keep(ctx context.Context, f published.Kept) (published.Kept, bool, error) {
	var name *string
	if f.Name != "" {
		name = &f.Name
	}
	row := r.db.Pool.QueryRow(ctx, `WITH ins AS (
  INSERT INTO published_flowers (id, network, maker, map, snapshot_sha256, record, name, made_at, status, came)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
  ON CONFLICT (id) DO NOTHING
  RETURNING *
), told AS (
  SELECT pg_notify($11, id || ' ' || map) FROM ins
)
SELECT `+keptColumns+`, (SELECT count(*) FROM told) FROM ins`,
		f.ID, f.Network, f.Maker, f.Map, f.Snapshot, string(f.Record), name, f.MadeAt, f.Status, f.Came, ports.FlowersChannel)
	var k published.Kept
	var record string
	var told int64
	err := row.Scan(&k.ID, &k.Network, &k.Maker, &k.Map, &k.Snapshot, &record, &k.Name, &k.MadeAt, &k.PublishedAt, &k.Status, &k.Came, &told)
	if err == nil {
		k.Record = []byte(record)
		k.MadeAt, k.PublishedAt = k.MadeAt.UTC(), k.PublishedAt.UTC()
		return k, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return published.Kept{}, false, fmt.Errorf("postgres: keep published flower: %w", err)
	}
	// It was there already (or a concurrent keep just put it there).
	existing, err := r.Get(ctx, f.ID)
	if err != nil {
		return published.Kept{}, false, err
	}
	return existing, false, nil
}

// Get implements ports.PublishedFlowers.
func (r *PublishedFlowerRepository) Get(ctx context.Context, id string) (published.Kept, error) {
	k, err := scanKept(r.db.Pool.QueryRow(ctx, `SELECT `+keptColumns+` FROM published_flowers WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return published.Kept{}, errs.Newf(errs.NotFound, "no published flower %s", id)
	}
	if err != nil {
		return published.Kept{}, fmt.Errorf("postgres: read published flower: %w", err)
	}
	return k, nil
}

// List implements ports.PublishedFlowers. Each filter has an index led by
// its column and ordered as the list is, so a page reads only its rows.
func (r *PublishedFlowerRepository) List(ctx context.Context, q ports.FlowerQuery) (ports.FlowerPage, error) {
	limit, err := published.PageSize(q.Limit)
	if err != nil {
		return ports.FlowerPage{}, err
	}
	var where []string
	var args []any
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	for col, v := range map[string]string{"network": q.Network, "maker": q.Maker, "map": q.Map, "snapshot_sha256": q.Snapshot} {
		if v != "" {
			where = append(where, col+" = "+arg(v))
		}
	}
	if len(q.NotMaps) > 0 {
		where = append(where, "map <> ALL("+arg(q.NotMaps)+"::text[])")
	}
	if !q.After.IsStart() {
		where = append(where, fmt.Sprintf("(published_at, id) < (%s, %s)", arg(q.After.At), arg(q.After.Key)))
	}
	sql := `SELECT ` + keptColumns + ` FROM published_flowers`
	if len(where) > 0 {
		sql += ` WHERE ` + strings.Join(where, " AND ")
	}
	sql += ` ORDER BY published_at DESC, id DESC LIMIT ` + arg(limit+1)
	rows, err := r.db.Pool.Query(ctx, sql, args...)
	if err != nil {
		return ports.FlowerPage{}, fmt.Errorf("postgres: list published flowers: %w", err)
	}
	flowers, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (published.Kept, error) { return scanKept(row) })
	if err != nil {
		return ports.FlowerPage{}, fmt.Errorf("postgres: list published flowers: %w", err)
	}
	page := ports.FlowerPage{Flowers: flowers}
	if len(flowers) > limit {
		page.Flowers = flowers[:limit]
		last := page.Flowers[limit-1]
		page.Next = published.Cursor{At: last.PublishedAt, Key: last.ID}
	}
	return page, nil
}

// Maps implements ports.PublishedFlowers: each map's newest flower (DISTINCT
// ON over the by-map index), then the maps ordered by it.
func (r *PublishedFlowerRepository) Maps(ctx context.Context, q ports.MapQuery) (ports.MapPage, error) {
	limit, err := published.PageSize(q.Limit)
	if err != nil {
		return ports.MapPage{}, err
	}
	args := []any{q.Network, limit + 1}
	after := ``
	if !q.After.IsStart() {
		args = append(args, q.After.At, q.After.Key)
		after = `WHERE (published_at, map) < ($3, $4)`
	}
	rows, err := r.db.Pool.Query(ctx, `SELECT `+keptColumns+`, n FROM (
  SELECT DISTINCT ON (map) *, count(*) OVER (PARTITION BY map) AS n
  FROM published_flowers WHERE $1 = '' OR network = $1
  ORDER BY map, published_at DESC, id DESC
) newest `+after+`
ORDER BY published_at DESC, map DESC LIMIT $2`, args...)
	if err != nil {
		return ports.MapPage{}, fmt.Errorf("postgres: list maps: %w", err)
	}
	maps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.MapSummary, error) {
		var m ports.MapSummary
		var record string
		k := &m.Newest
		err := row.Scan(&k.ID, &k.Network, &k.Maker, &k.Map, &k.Snapshot, &record, &k.Name, &k.MadeAt, &k.PublishedAt, &k.Status, &k.Came, &m.Flowers)
		k.Record = []byte(record)
		k.MadeAt, k.PublishedAt = k.MadeAt.UTC(), k.PublishedAt.UTC()
		m.Map = k.Map
		return m, err
	})
	if err != nil {
		return ports.MapPage{}, fmt.Errorf("postgres: list maps: %w", err)
	}
	page := ports.MapPage{Maps: maps}
	if len(maps) > limit {
		page.Maps = maps[:limit]
		last := page.Maps[limit-1]
		page.Next = published.Cursor{At: last.Newest.PublishedAt, Key: last.Map}
	}
	return page, nil
}

// SetStatus implements ports.PublishedFlowers.
func (r *PublishedFlowerRepository) SetStatus(ctx context.Context, snapshot, status string) (int64, error) {
	tag, err := r.db.Pool.Exec(ctx, `UPDATE published_flowers SET status = $2 WHERE snapshot_sha256 = $1 AND status <> $2`, snapshot, status)
	if err != nil {
		return 0, fmt.Errorf("postgres: set published flowers' status: %w", err)
	}
	return tag.RowsAffected(), nil
}

// Prepare implements ports.PublishedFlowers.
func (r *PublishedFlowerRepository) Prepare(ctx context.Context, p published.Prepared) error {
	_, err := r.db.Pool.Exec(ctx, `INSERT INTO publish_prepared (id, account, network, record, expires_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (id, account, network) DO UPDATE SET expires_at = greatest(publish_prepared.expires_at, EXCLUDED.expires_at)`,
		p.ID, p.Account, p.Network, string(p.Record), p.ExpiresAt)
	if err != nil {
		return fmt.Errorf("postgres: keep prepared flower: %w", err)
	}
	return nil
}

// Prepared implements ports.PublishedFlowers.
func (r *PublishedFlowerRepository) Prepared(ctx context.Context, id, account, network string, now time.Time) (published.Prepared, error) {
	p := published.Prepared{ID: id, Account: account, Network: network}
	var record string
	err := r.db.Pool.QueryRow(ctx, `SELECT record, expires_at FROM publish_prepared
WHERE id = $1 AND account = $2 AND network = $3 AND expires_at > $4`, id, account, network, now).Scan(&record, &p.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return published.Prepared{}, errs.New(errs.NotFound, "nothing was prepared under that id for that account")
	}
	if err != nil {
		return published.Prepared{}, fmt.Errorf("postgres: read prepared flower: %w", err)
	}
	p.Record, p.ExpiresAt = []byte(record), p.ExpiresAt.UTC()
	return p, nil
}
