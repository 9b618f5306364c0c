package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/petal-near/petal/domain/corrections"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// FlowerCorrectionRepository keeps corrections of published flowers
// (migrations/000047_flower_corrections).
type FlowerCorrectionRepository struct{ db *DB }

var _ ports.FlowerCorrections = (*FlowerCorrectionRepository)(nil)

// NewFlowerCorrectionRepository makes the store over db.
func NewFlowerCorrectionRepository(db *DB) *FlowerCorrectionRepository {
	return &FlowerCorrectionRepository{db: db}
}

const correctionColumns = `id, flower_id, network, maker, kind, record, made_at, kept_at, came`

func scanCorrection(row pgx.Row) (corrections.Kept, error) {
	var k corrections.Kept
	var record string
	err := row.Scan(&k.ID, &k.Flower, &k.Network, &k.Maker, &k.Kind, &record, &k.MadeAt, &k.KeptAt, &k.Came)
	k.Record = []byte(record)
	k.MadeAt, k.KeptAt = k.MadeAt.UTC(), k.KeptAt.UTC()
	return k, err
}

// Keep implements ports.FlowerCorrections.
func (r *FlowerCorrectionRepository) Keep(ctx context.Context, c corrections.Kept) (corrections.Kept, bool, error) {
	k, err := scanCorrection(r.db.Pool.QueryRow(ctx, `INSERT INTO flower_corrections (id, flower_id, network, maker, kind, record, made_at, came)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (id) DO NOTHING
RETURNING `+correctionColumns, c.ID, c.Flower, c.Network, c.Maker, c.Kind, string(c.Record), c.MadeAt, c.Came))
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return k, true, nil
	case errors.As(err, &pgErr) && pgErr.Code == "23503":
		return corrections.Kept{}, false, errs.Newf(errs.NotFound, "no published flower %s", c.Flower)
	case !errors.Is(err, pgx.ErrNoRows):
		return corrections.Kept{}, false, fmt.Errorf("postgres: keep correction: %w", err)
	}
	// It was there already (or a concurrent keep just put it there).
	existing, err := r.Get(ctx, c.ID)
	return existing, false, err
}

// Get implements ports.FlowerCorrections.
func (r *FlowerCorrectionRepository) Get(ctx context.Context, id string) (corrections.Kept, error) {
	k, err := scanCorrection(r.db.Pool.QueryRow(ctx, `SELECT `+correctionColumns+` FROM flower_corrections WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return corrections.Kept{}, errs.Newf(errs.NotFound, "no correction %s", id)
	}
	if err != nil {
		return corrections.Kept{}, fmt.Errorf("postgres: read correction: %w", err)
	}
	return k, nil
}

// OfFlowers implements ports.FlowerCorrections: for each flower, its newest
// rows read from the by-flower index (a LATERAL walk stops at limit).
func (r *FlowerCorrectionRepository) OfFlowers(ctx context.Context, flowers []string, limit int) (map[string][]corrections.Kept, error) {
	shown := map[string][]corrections.Kept{}
	if len(flowers) == 0 || limit <= 0 {
		return shown, nil
	}
	// Each flower's walk takes its newest; the join's rows come in no
	// promised order, so each flower's are sorted below.
	rows, err := r.db.Pool.Query(ctx, `SELECT c.id, c.flower_id, c.network, c.maker, c.kind, c.record, c.made_at, c.kept_at, c.came
FROM unnest($1::text[]) AS f(id)
CROSS JOIN LATERAL (SELECT * FROM flower_corrections WHERE flower_id = f.id ORDER BY kept_at DESC, id DESC LIMIT $2) c`, flowers, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: read corrections: %w", err)
	}
	kept, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (corrections.Kept, error) { return scanCorrection(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: read corrections: %w", err)
	}
	for _, k := range kept {
		shown[k.Flower] = append(shown[k.Flower], k)
	}
	for _, list := range shown {
		slices.SortFunc(list, func(a, b corrections.Kept) int {
			if c := b.KeptAt.Compare(a.KeptAt); c != 0 {
				return c
			}
			return strings.Compare(b.ID, a.ID)
		})
	}
	return shown, nil
}

// Count implements ports.FlowerCorrections, from the by-flower index.
func (r *FlowerCorrectionRepository) Count(ctx context.Context, flower string) (int, error) {
	var n int
	err := r.db.Pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM flower_corrections WHERE flower_id = $1 LIMIT $2) c`,
		flower, corrections.MaxCounted).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: count corrections: %w", err)
	}
	return n, nil
}
