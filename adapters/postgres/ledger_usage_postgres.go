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
)

// The ledger's reading side and what comes from outside a chat: an account,
// its usage and pending bills, reconciling a call with the provider's bill,
// and top-ups (the holds and settles are in ledger_postgres_repository.go).

// Account implements ports.LedgerStore.
func (r *LedgerRepository) Account(ctx context.Context, id string) (credit.Account, error) {
	return scanAccount(r.db.Pool.QueryRow(ctx, accountQuery, id))
}

// Usage implements ports.LedgerStore.
func (r *LedgerRepository) Usage(ctx context.Context, account string, limit int) ([]credit.UsageRecord, error) {
	return r.usage(ctx, `WHERE account_id = $1 ORDER BY created_at DESC, reservation_id DESC LIMIT $2`, account, limit)
}

// PendingBills implements ports.LedgerStore.
func (r *LedgerRepository) PendingBills(ctx context.Context, account string, limit int) ([]credit.UsageRecord, error) {
	return r.usage(ctx, `WHERE account_id = $1 AND billed_micros IS NULL AND inference_id <> '' ORDER BY created_at, reservation_id LIMIT $2`, account, limit)
}

func (r *LedgerRepository) usage(ctx context.Context, where string, args ...any) ([]credit.UsageRecord, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT reservation_id, account_id, run_id, inference_id, model, tokens_in, tokens_cached, tokens_out,
list_micros, charged_micros, billed_micros, reconciled_micros, created_at
FROM credit_usage `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: read usage: %w", err)
	}
	defer rows.Close()
	var out []credit.UsageRecord
	for rows.Next() {
		var u credit.UsageRecord
		var list, charged, reconciled int64
		var billed *int64
		if err := rows.Scan(&u.ReservationID, &u.Account, &u.RunID, &u.InferenceID, &u.Model, &u.TokensIn, &u.TokensCached, &u.TokensOut,
			&list, &charged, &billed, &reconciled, &u.At); err != nil {
			return nil, fmt.Errorf("postgres: read usage: %w", err)
		}
		u.List, u.Charged, u.Reconciled = credit.Micros(list), credit.Micros(charged), credit.Micros(reconciled)
		if billed != nil {
			b := credit.Micros(*billed)
			u.Billed = &b
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// Reconcile implements ports.LedgerStore.
func (r *LedgerRepository) Reconcile(ctx context.Context, reservationID string, billed credit.Micros) error {
	if billed < 0 {
		return fmt.Errorf("postgres: a bill is never negative")
	}
	return pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		var account, runID string
		var list int64
		var known *int64
		err := tx.QueryRow(ctx, `SELECT account_id, run_id, list_micros, billed_micros FROM credit_usage WHERE reservation_id = $1 FOR UPDATE`, reservationID).
			Scan(&account, &runID, &list, &known)
		if errors.Is(err, pgx.ErrNoRows) {
			return errs.Newf(errs.NotFound, "no usage record %s", reservationID)
		}
		if err != nil {
			return fmt.Errorf("postgres: read usage: %w", err)
		}
		if known != nil {
			return nil // reconciled once already
		}
		if _, err := lockAccounts(ctx, tx, []string{account}); err != nil {
			return err
		}
		diff := int64(credit.PlanReconcile(credit.UsageRecord{List: credit.Micros(list)}, billed))
		if diff != 0 {
			if _, err := tx.Exec(ctx, `INSERT INTO credit_entries (account_id, kind, amount_micros, reservation_id, run_id, note)
VALUES ($1, 'reconcile', $2, $3, $4, 'reconciled with NEAR AI''s bill')`, account, diff, reservationID, runID); err != nil {
				return fmt.Errorf("postgres: write reconciliation: %w", err)
			}
			if _, err := tx.Exec(ctx, `UPDATE credit_accounts SET spent_micros = spent_micros + $2 WHERE id = $1`, account, diff); err != nil {
				return fmt.Errorf("postgres: reconcile account: %w", err)
			}
		}
		_, err = tx.Exec(ctx, `UPDATE credit_usage SET billed_micros = $2, reconciled_micros = $3, charged_micros = charged_micros + $3 WHERE reservation_id = $1`,
			reservationID, int64(billed), diff)
		if err != nil {
			return fmt.Errorf("postgres: record the bill: %w", err)
		}
		return nil
	})
}

// TopUp implements ports.LedgerStore.
func (r *LedgerRepository) TopUp(ctx context.Context, t credit.TopUp) (bool, error) {
	added := false
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		account := credit.PersonAccount(t.PersonID)
		if _, err := tx.Exec(ctx, `INSERT INTO credit_accounts (id, kind, limit_micros) VALUES ($1, 'person', 0) ON CONFLICT (id) DO NOTHING`, account); err != nil {
			return fmt.Errorf("postgres: open credit: %w", err)
		}
		if _, err := lockAccounts(ctx, tx, []string{account}); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO credit_topups (tx_hash, network, person_id, wallet_id, account_id, yocto, near_usd_micros, added_micros, fee_micros,
block_at, price_at, price_source)
VALUES ($1, $2, $3, $4, $5, $6::numeric, $7, $8, $9, $10, $11, $12) ON CONFLICT (tx_hash) DO NOTHING`,
			t.TxHash, t.Network, t.PersonID, t.WalletID, account, t.Yocto, int64(t.NearUSD), int64(t.Added), int64(t.Fee),
			nullTime(t.BlockAt), nullTime(t.PriceAt), nullString(t.PriceSource))
		if err != nil {
			return fmt.Errorf("postgres: record top-up: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return nil // this transfer was counted before
		}
		// Credit from testnet NEAR (free) is marked as such.
		if _, err := tx.Exec(ctx, `INSERT INTO credit_entries (account_id, kind, amount_micros, note, testnet) VALUES ($1, 'top_up', $2, $3, $4)`,
			account, int64(t.Added), "NEAR transfer "+t.TxHash, t.Network == "testnet"); err != nil {
			return fmt.Errorf("postgres: write top-up: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE credit_accounts SET limit_micros = limit_micros + $2 WHERE id = $1`, account, int64(t.Added)); err != nil {
			return fmt.Errorf("postgres: add credit: %w", err)
		}
		if t.Fee > 0 {
			// Switch B: its own entry, charged on the credit the top-up added.
			if _, err := tx.Exec(ctx, `INSERT INTO credit_entries (account_id, kind, amount_micros, note) VALUES ($1, 'fee', $2, 'Petals base fee (top-up)')`,
				account, int64(t.Fee)); err != nil {
				return fmt.Errorf("postgres: write top-up fee: %w", err)
			}
			if _, err := tx.Exec(ctx, `UPDATE credit_accounts SET spent_micros = spent_micros + $2 WHERE id = $1`, account, int64(t.Fee)); err != nil {
				return fmt.Errorf("postgres: charge top-up fee: %w", err)
			}
		}
		added = true
		return nil
	})
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == pgerrcode.NumericValueOutOfRange {
		// A credit past what bigint holds: refused whole, nothing counted.
		return false, errs.New(errs.BadInput, "this top-up would take the credit past what the ledger can count",
			"send a smaller transfer").WithCause(err)
	}
	return added, err
}

// nullTime is t, or NULL when it is the zero time.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// nullString is s, or NULL when it is empty.
func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
