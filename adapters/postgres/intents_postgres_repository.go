package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// IntentTopUpRepository keeps top-ups through NEAR Intents (intent_topups,
// migration 24) and writes their credit on the ledger's tables.
type IntentTopUpRepository struct {
	db *DB
}

var _ ports.IntentTopUps = (*IntentTopUpRepository)(nil)

// NewIntentTopUpRepository makes the store over db.
func NewIntentTopUpRepository(db *DB) *IntentTopUpRepository { return &IntentTopUpRepository{db: db} }

const intentColumns = `deposit_address, deposit_memo, person_id, usd_micros, origin_asset, refund_to, amount_in, amount_in_formatted,
amount_in_usd, amount_out, amount_out_usd, deadline, quote, status, origin_tx, destination_tx, credited_micros, fee_micros,
credited_at, checked_at, created_at`

func scanIntent(row pgx.Row) (credit.IntentTopUp, error) {
	var t credit.IntentTopUp
	var usd, credited, fee int64
	var status string
	err := row.Scan(&t.DepositAddress, &t.DepositMemo, &t.PersonID, &usd, &t.OriginAsset, &t.RefundTo, &t.AmountIn, &t.AmountInFormatted,
		&t.AmountInUSD, &t.AmountOut, &t.AmountOutUSD, &t.Deadline, &t.Quote, &status, &t.OriginTx, &t.DestinationTx, &credited, &fee,
		&t.CreditedAt, &t.CheckedAt, &t.CreatedAt)
	t.USD, t.Credited, t.Fee, t.Status = credit.Micros(usd), credit.Micros(credited), credit.Micros(fee), credit.SwapStatus(status)
	return t, err
}

// CreateIntentTopUp implements ports.IntentTopUps.
func (r *IntentTopUpRepository) CreateIntentTopUp(ctx context.Context, t credit.IntentTopUp) error {
	_, err := r.db.Pool.Exec(ctx, `INSERT INTO intent_topups (deposit_address, deposit_memo, person_id, usd_micros, origin_asset, refund_to,
amount_in, amount_in_formatted, amount_in_usd, amount_out, amount_out_usd, deadline, quote, status, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		t.DepositAddress, t.DepositMemo, t.PersonID, int64(t.USD), t.OriginAsset, t.RefundTo, t.AmountIn, t.AmountInFormatted,
		t.AmountInUSD, t.AmountOut, t.AmountOutUSD, t.Deadline, t.Quote, string(t.Status), t.CreatedAt)
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == pgerrcode.UniqueViolation {
		return errs.New(errs.Conflict, "this deposit address is already a top-up").WithCause(err)
	}
	if err != nil {
		return fmt.Errorf("postgres: store top-up: %w", err)
	}
	return nil
}

// IntentTopUp implements ports.IntentTopUps.
func (r *IntentTopUpRepository) IntentTopUp(ctx context.Context, depositAddress string) (credit.IntentTopUp, error) {
	t, err := scanIntent(r.db.Pool.QueryRow(ctx, `SELECT `+intentColumns+` FROM intent_topups WHERE deposit_address = $1`, depositAddress))
	if errors.Is(err, pgx.ErrNoRows) {
		return t, errs.Newf(errs.NotFound, "no top-up at %s", depositAddress)
	}
	return t, err
}

// ObserveIntentTopUp implements ports.IntentTopUps. The top-up's row is
// locked first, then the person's account, so two observers of one SUCCESS
// (a GET and the follow job) take turns and the second finds it credited.
func (r *IntentTopUpRepository) ObserveIntentTopUp(ctx context.Context, depositAddress string, obs credit.SwapObservation, at time.Time,
	plan func(t credit.IntentTopUp) (added, fee credit.Micros, err error)) (credit.IntentTopUp, bool, error) {
	var out credit.IntentTopUp
	credited := false
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		t, err := scanIntent(tx.QueryRow(ctx, `SELECT `+intentColumns+` FROM intent_topups WHERE deposit_address = $1 FOR UPDATE`, depositAddress))
		if errors.Is(err, pgx.ErrNoRows) {
			return errs.Newf(errs.NotFound, "no top-up at %s", depositAddress)
		}
		if err != nil {
			return fmt.Errorf("postgres: lock top-up: %w", err)
		}
		if t.Status.Final() {
			// Over: what 1Click says now changes nothing, not even a status
			// that flips back.
			_, err := tx.Exec(ctx, `UPDATE intent_topups SET checked_at = $2 WHERE deposit_address = $1`, depositAddress, at)
			t.CheckedAt = &at
			out = t
			return err
		}
		t.Status, t.CheckedAt = obs.Status, &at
		if obs.OriginTx != "" {
			t.OriginTx = obs.OriginTx
		}
		if obs.DestinationTx != "" {
			t.DestinationTx = obs.DestinationTx
		}
		if obs.Status == credit.SwapSuccess {
			added, fee, err := plan(t)
			if err != nil {
				return err
			}
			if err := creditIntent(ctx, tx, t, added, fee); err != nil {
				return err
			}
			t.Credited, t.Fee, t.CreditedAt = added, fee, &at
			credited = true
		}
		_, err = tx.Exec(ctx, `UPDATE intent_topups SET status = $2, origin_tx = $3, destination_tx = $4, credited_micros = $5,
fee_micros = $6, credited_at = $7, checked_at = $8 WHERE deposit_address = $1`,
			depositAddress, string(t.Status), t.OriginTx, t.DestinationTx, int64(t.Credited), int64(t.Fee), t.CreditedAt, at)
		if err != nil {
			return fmt.Errorf("postgres: record top-up status: %w", err)
		}
		out = t
		return nil
	})
	if err != nil {
		return credit.IntentTopUp{}, false, err
	}
	return out, credited, nil
}

// creditIntent puts a top-up's dollars on the person's credit as its own
// entry, and switch B's fee as another.
func creditIntent(ctx context.Context, tx pgx.Tx, t credit.IntentTopUp, added, fee credit.Micros) error {
	if added <= 0 {
		return nil
	}
	account := credit.PersonAccount(t.PersonID)
	if _, err := tx.Exec(ctx, `INSERT INTO credit_accounts (id, kind, limit_micros) VALUES ($1, 'person', 0) ON CONFLICT (id) DO NOTHING`, account); err != nil {
		return fmt.Errorf("postgres: open credit: %w", err)
	}
	if _, err := lockAccounts(ctx, tx, []string{account}); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO credit_entries (account_id, kind, amount_micros, note) VALUES ($1, 'top_up', $2, $3)`,
		account, int64(added), "NEAR Intents top-up "+t.DepositAddress); err != nil {
		return fmt.Errorf("postgres: write top-up: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE credit_accounts SET limit_micros = limit_micros + $2 WHERE id = $1`, account, int64(added)); err != nil {
		return fmt.Errorf("postgres: add credit: %w", err)
	}
	if fee > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO credit_entries (account_id, kind, amount_micros, note) VALUES ($1, 'fee', $2, 'Petals base fee (top-up)')`,
			account, int64(fee)); err != nil {
			return fmt.Errorf("postgres: write top-up fee: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE credit_accounts SET spent_micros = spent_micros + $2 WHERE id = $1`, account, int64(fee)); err != nil {
			return fmt.Errorf("postgres: charge top-up fee: %w", err)
		}
	}
	return nil
}

// FollowedIntentTopUps implements ports.IntentTopUps.
func (r *IntentTopUpRepository) FollowedIntentTopUps(ctx context.Context, now time.Time, limit int) ([]credit.IntentTopUp, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT `+intentColumns+` FROM intent_topups
WHERE status NOT IN ('SUCCESS', 'REFUNDED', 'FAILED') AND deadline > $1
ORDER BY checked_at NULLS FIRST LIMIT $2`, now.Add(-credit.IntentGrace), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: followed top-ups: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (credit.IntentTopUp, error) { return scanIntent(row) })
}
