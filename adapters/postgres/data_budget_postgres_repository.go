package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// DataBudgetRepository counts the bytes strangers store a day in one row per
// UTC day (migration 15), so every replica spends from the same count.
type DataBudgetRepository struct{ db *DB }

var _ ports.DataBudget = (*DataBudgetRepository)(nil)

// NewDataBudgetRepository makes the data budget's store over db.
func NewDataBudgetRepository(db *DB) *DataBudgetRepository { return &DataBudgetRepository{db: db} }

// budgetKeptDays is how long a day's count is kept after it ends.
const budgetKeptDays = 31

// Spend implements ports.DataBudget: one statement adds n when the sum stays
// within limit, so concurrent spends never pass it together.
func (r *DataBudgetRepository) Spend(ctx context.Context, day time.Time, n, limit int64) (bool, error) {
	var total int64
	err := r.db.Pool.QueryRow(ctx, `INSERT INTO data_budget_days AS d (day, bytes) SELECT $1::date, $2::bigint WHERE $2::bigint <= $3::bigint
ON CONFLICT (day) DO UPDATE SET bytes = d.bytes + EXCLUDED.bytes WHERE d.bytes + EXCLUDED.bytes <= $3::bigint
RETURNING bytes`, day.UTC().Format(time.DateOnly), n, limit).Scan(&total)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("postgres: spend the data budget: %w", err)
	}
	if total == n {
		// The day's first write: forget the counts of long-gone days.
		if _, err := r.db.Pool.Exec(ctx, `DELETE FROM data_budget_days WHERE day < $1::date - $2::int`,
			day.UTC().Format(time.DateOnly), budgetKeptDays); err != nil {
			return true, fmt.Errorf("postgres: forget old data budget days: %w", err)
		}
	}
	return true, nil
}

// Refund implements ports.DataBudget.
func (r *DataBudgetRepository) Refund(ctx context.Context, day time.Time, n int64) error {
	if _, err := r.db.Pool.Exec(ctx, `UPDATE data_budget_days SET bytes = greatest(bytes - $2, 0) WHERE day = $1::date`,
		day.UTC().Format(time.DateOnly), n); err != nil {
		return fmt.Errorf("postgres: refund the data budget: %w", err)
	}
	return nil
}

// Spent implements ports.DataBudget.
func (r *DataBudgetRepository) Spent(ctx context.Context, day time.Time) (int64, error) {
	var n int64
	err := r.db.Pool.QueryRow(ctx, `SELECT bytes FROM data_budget_days WHERE day = $1::date`, day.UTC().Format(time.DateOnly)).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: read the data budget: %w", err)
	}
	return n, nil
}
