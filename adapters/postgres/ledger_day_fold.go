package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/credit"
)

// foldDaysAtOnce is how many past days one statement lists for folding; a
// run goes on until none is left.
const foldDaysAtOnce = 100

// FoldPastDays folds the slices of every day before before's into that day's
// own row and deletes them (migration 39, docs/money.md): the row then counts
// what the slices spent, its limit is the cap they were last balanced for, and
// the day's closed holds are on the row (slice NULL), as a day from before
// slices is. Reading the day (Account) answers the same before and after. A
// day with a hold still open on a slice is left for a later run: its settle
// or the sweep still needs the slice. Each day is its own short transaction,
// locking the day's row and then its slices, the ledger's lock order. It says
// how many slice rows went.
func (r *LedgerRepository) FoldPastDays(ctx context.Context, before time.Time) (int64, error) {
	until := credit.DailyAccount(before)
	var total int64
	after := ""
	for {
		rows, err := r.db.Pool.Query(ctx, `SELECT DISTINCT account_id FROM credit_daily_slices
WHERE account_id < $1 AND account_id > $2 ORDER BY account_id LIMIT $3`, until, after, foldDaysAtOnce)
		if err != nil {
			return total, fmt.Errorf("postgres: list past days: %w", err)
		}
		days, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return total, fmt.Errorf("postgres: list past days: %w", err)
		}
		for _, day := range days {
			n, held, err := r.foldDay(ctx, day)
			if err != nil {
				return total, err
			}
			total += n
			outcome := "folded"
			if held {
				outcome = "held"
			}
			r.folds.Add(1, outcome)
		}
		if len(days) < foldDaysAtOnce {
			return total, nil
		}
		after = days[len(days)-1]
	}
}

// errDayHeld: a day still has a hold open on a slice.
var errDayHeld = errors.New("a hold is open on the day's slices")

// foldDay folds one day's slices into its row; held when a hold is still
// open on one. It locks the day's holds on slices, then its row, then its
// slices: a late settle locks its hold before its accounts, so the two never
// wait on each other in a circle.
func (r *LedgerRepository) foldDay(ctx context.Context, day string) (deleted int64, held bool, err error) {
	err = pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		var open int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status = 'held') FROM (
    SELECT status FROM credit_holds WHERE account_id = $1 AND slice IS NOT NULL ORDER BY reservation_id FOR UPDATE) h`,
			day).Scan(&open); err != nil {
			return fmt.Errorf("postgres: lock the day's holds: %w", err)
		}
		if open > 0 {
			return errDayHeld
		}
		if _, err := lockAccounts(ctx, tx, []string{day}); err != nil {
			return err
		}
		var spent, heldMicros int64
		var capMicros *int64
		if err := tx.QueryRow(ctx, `SELECT coalesce(sum(spent_micros), 0)::bigint, coalesce(sum(held_micros), 0)::bigint,
    max(cap_micros) FILTER (WHERE cap_micros >= 0)
FROM (SELECT spent_micros, held_micros, cap_micros FROM credit_daily_slices WHERE account_id = $1 ORDER BY slice FOR UPDATE) s`,
			day).Scan(&spent, &heldMicros, &capMicros); err != nil {
			return fmt.Errorf("postgres: lock the day's slices: %w", err)
		}
		if heldMicros > 0 {
			return errDayHeld
		}
		if _, err := tx.Exec(ctx, `UPDATE credit_accounts SET spent_micros = spent_micros + $2, limit_micros = coalesce($3, limit_micros)
WHERE id = $1`, day, spent, capMicros); err != nil {
			return fmt.Errorf("postgres: fold the day's slices: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE credit_holds SET slice = NULL WHERE account_id = $1 AND slice IS NOT NULL`, day); err != nil {
			return fmt.Errorf("postgres: move the day's holds onto its row: %w", err)
		}
		tag, err := tx.Exec(ctx, `DELETE FROM credit_daily_slices WHERE account_id = $1`, day)
		if err != nil {
			return fmt.Errorf("postgres: delete the day's slices: %w", err)
		}
		deleted = tag.RowsAffected()
		return nil
	})
	if errors.Is(err, errDayHeld) {
		return 0, true, nil
	}
	return deleted, false, err
}
