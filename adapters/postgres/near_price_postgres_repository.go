package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/ports"
)

// NearPriceRepository keeps the NEAR price history (near_prices).
type NearPriceRepository struct{ db *DB }

var _ ports.NearPriceHistory = (*NearPriceRepository)(nil)

// NewNearPriceRepository makes the price history over db.
func NewNearPriceRepository(db *DB) *NearPriceRepository { return &NearPriceRepository{db: db} }

// RecordNearPrice implements ports.NearPriceHistory.
func (r *NearPriceRepository) RecordNearPrice(ctx context.Context, q credit.NearQuote) error {
	if _, err := r.db.Pool.Exec(ctx, `INSERT INTO near_prices (read_at, usd_micros, source) VALUES ($1, $2, $3)`,
		q.At, int64(q.USD), q.Source); err != nil {
		return fmt.Errorf("postgres: record the NEAR price: %w", err)
	}
	return nil
}

// NearPricesAround implements ports.NearPriceHistory: two index range reads
// in one round trip.
func (r *NearPriceRepository) NearPricesAround(ctx context.Context, at time.Time, before, after time.Duration) (*credit.NearQuote, *credit.NearQuote, error) {
	var batch pgx.Batch
	batch.Queue(`SELECT read_at, usd_micros, source FROM near_prices WHERE read_at <= $1 AND read_at >= $2 ORDER BY read_at DESC, id DESC LIMIT 1`,
		at, at.Add(-before))
	batch.Queue(`SELECT read_at, usd_micros, source FROM near_prices WHERE read_at > $1 AND read_at <= $2 ORDER BY read_at, id LIMIT 1`,
		at, at.Add(after))
	br := r.db.Pool.SendBatch(ctx, &batch)
	defer func() { _ = br.Close() }()
	read := func() (*credit.NearQuote, error) {
		var q credit.NearQuote
		var usd int64
		err := br.QueryRow().Scan(&q.At, &usd, &q.Source)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("postgres: read the NEAR price history: %w", err)
		}
		q.USD = credit.Micros(usd)
		return &q, nil
	}
	prev, err := read()
	if err != nil {
		return nil, nil, err
	}
	next, err := read()
	if err != nil {
		return nil, nil, err
	}
	return prev, next, br.Close()
}

// PruneNearPrices implements ports.NearPriceHistory.
func (r *NearPriceRepository) PruneNearPrices(ctx context.Context, olderThan time.Time) (int64, error) {
	tag, err := r.db.Pool.Exec(ctx, `DELETE FROM near_prices WHERE read_at < $1`, olderThan)
	if err != nil {
		return 0, fmt.Errorf("postgres: prune the NEAR price history: %w", err)
	}
	return tag.RowsAffected(), nil
}
