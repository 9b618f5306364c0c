package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// LedgerRepository keeps the ledger (migrations/000006_ledger). Every write locks the
// accounts it touches with SELECT … FOR NO KEY UPDATE in id order (then the
// day's slices in slice order), so two transactions never wait on each other
// in a circle; NO KEY, so a hold or an entry naming a locked account (its
// foreign key's share lock) never waits on that lock.
type LedgerRepository struct {
	db   *DB
	made sync.Map // accounts made on first use, known to exist

	charged    ports.Counter
	closed     ports.Counter
	rebalanced ports.Counter
	folds      ports.Counter
}

var _ ports.LedgerStore = (*LedgerRepository)(nil)

// NewLedgerRepository makes the ledger store over db.
func NewLedgerRepository(db *DB) *LedgerRepository {
	return (&LedgerRepository{db: db}).ObservedBy(ports.NoMetrics{})
}

// ObservedBy declares the ledger's metrics on m: what this process charged,
// and the holds it closed.
func (r *LedgerRepository) ObservedBy(m ports.Metrics) *LedgerRepository {
	r.charged = m.Counter("petal_ledger_charged_micros_total",
		"Micro-dollars this process charged when settling holds, by entry kind (call: the model's bill, fee, tip) and the kind of account paying (invite, person, daily).",
		"kind", "account")
	r.closed = m.Counter("petal_ledger_holds_closed_total",
		"Ledger holds this process closed, by how: settled (charged what the call cost) or released (given back, as a sweep does for a dead process).", "how")
	r.rebalanced = m.Counter("petal_ledger_day_rebalances_total",
		"Reservations on the day's cap that its one slice couldn't decide (the slice short, the cap changed, no slices yet), so the whole day's slices were locked and re-balanced, by outcome: held or refused.", "outcome")
	r.folds = m.Counter("petal_ledger_day_folds_total",
		"Past days whose slices the ledger_day_slices job looked at, by outcome: folded (into the day's row, the slices deleted) or held (a hold still open on a slice; left for a later run).", "outcome")
	return r
}

// lockAccounts locks the accounts named (in id order) and returns them by id.
func lockAccounts(ctx context.Context, tx pgx.Tx, ids []string) (map[string]credit.Account, error) {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	return accountsByID(tx.Query(ctx, `SELECT id, kind, limit_micros, spent_micros, held_micros, expires_at, revoked_at
FROM credit_accounts WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE`, sorted))
}

// accountsByID reads the accounts a lock statement returned, by id.
func accountsByID(rows pgx.Rows, err error) (map[string]credit.Account, error) {
	if err != nil {
		return nil, fmt.Errorf("postgres: lock accounts: %w", err)
	}
	defer rows.Close()
	out := map[string]credit.Account{}
	for rows.Next() {
		a, err := scanAccount(rows)
		if err != nil {
			return nil, err
		}
		out[a.ID] = a
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: lock accounts: %w", err)
	}
	return out, nil
}

func scanAccount(row pgx.Row) (credit.Account, error) {
	var a credit.Account
	var kind string
	var limit, spent, held int64
	err := row.Scan(&a.ID, &kind, &limit, &spent, &held, &a.ExpiresAt, &a.RevokedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return credit.Account{}, errs.New(errs.NotFound, "no such account")
	}
	if err != nil {
		return credit.Account{}, fmt.Errorf("postgres: read account: %w", err)
	}
	a.Kind, a.Limit, a.Spent, a.Held = credit.AccountKind(kind), credit.Micros(limit), credit.Micros(spent), credit.Micros(held)
	return a, nil
}

// queueLockReservation queues the lock of a reservation's hold rows, then of
// its accounts (a line on a day's slice: that slice), in the ledger's lock
// order, and with readBilled the read, under the person's account lock, of
// the model call entries on it (the free allowance, switch E, counts them).
func queueLockReservation(batch *pgx.Batch, reservationID string, readBilled bool) {
	batch.Queue(`SELECT h.account_id, a.kind, h.amount_micros, h.run_id, h.process_id, h.payer, h.slice,
    CASE WHEN h.status = 'released' AND h.swept_at IS NOT NULL THEN 'swept' ELSE h.status END
FROM credit_holds h JOIN credit_accounts a ON a.id = h.account_id
WHERE h.reservation_id = $1 ORDER BY h.account_id FOR UPDATE OF h`, reservationID)
	batch.Queue(`SELECT 1 FROM credit_accounts WHERE id IN (
    SELECT account_id FROM credit_holds WHERE reservation_id = $1 AND slice IS NULL) ORDER BY id FOR NO KEY UPDATE`, reservationID)
	batch.Queue(`SELECT 1 FROM credit_daily_slices s JOIN credit_holds h ON h.account_id = s.account_id AND h.slice = s.slice
WHERE h.reservation_id = $1 ORDER BY s.account_id, s.slice FOR NO KEY UPDATE OF s`, reservationID)
	if readBilled {
		batch.Queue(`SELECT coalesce(sum(e.amount_micros), 0) FROM credit_entries e WHERE e.kind = 'call' AND e.account_id IN (
    SELECT h.account_id FROM credit_holds h JOIN credit_accounts a ON a.id = h.account_id WHERE h.reservation_id = $1 AND a.kind = 'person')`,
			reservationID)
	}
}

// readReservation reads what queueLockReservation queued: the hold, its
// status (the hold's, or "swept" for one a sweep released), and the slice of
// each line on one.
func readReservation(br pgx.BatchResults, reservationID string, readBilled bool) (h credit.Hold, status string, onSlice map[string]*int16, err error) {
	rows, err := br.Query()
	if err != nil {
		return credit.Hold{}, "", nil, fmt.Errorf("postgres: lock hold: %w", err)
	}
	defer rows.Close()
	h = credit.Hold{ID: reservationID}
	onSlice = map[string]*int16{}
	for rows.Next() {
		var l credit.HoldLine
		var kind string
		var amount int64
		var payer []byte
		var slice *int16
		if err := rows.Scan(&l.Account, &kind, &amount, &h.RunID, &h.ProcessID, &payer, &slice, &status); err != nil {
			return credit.Hold{}, "", nil, fmt.Errorf("postgres: read hold: %w", err)
		}
		l.Kind, l.Amount = credit.AccountKind(kind), credit.Micros(amount)
		if err := json.Unmarshal(payer, &h.Payer); err != nil {
			return credit.Hold{}, "", nil, fmt.Errorf("postgres: read hold's payer: %w", err)
		}
		h.Lines = append(h.Lines, l)
		onSlice[l.Account] = slice
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return credit.Hold{}, "", nil, err
	}
	for range 2 { // the accounts' and the slices' locks
		if _, err := br.Exec(); err != nil {
			return credit.Hold{}, "", nil, fmt.Errorf("postgres: lock accounts: %w", err)
		}
	}
	if readBilled {
		var billed int64
		if err := br.QueryRow().Scan(&billed); err != nil {
			return credit.Hold{}, "", nil, fmt.Errorf("postgres: read the bill so far: %w", err)
		}
		h.BilledBefore = credit.Micros(billed)
	}
	if len(h.Lines) == 0 {
		return credit.Hold{}, "", nil, errs.Newf(errs.NotFound, "no hold %s", reservationID)
	}
	// The first line is the one the per-chat cap counts on, as Payer.Accounts
	// orders them: the daily cap always comes last.
	slices.SortStableFunc(h.Lines, func(a, b credit.HoldLine) int {
		return boolRank(a.Kind == credit.KindDaily) - boolRank(b.Kind == credit.KindDaily)
	})
	return h, status, onSlice, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Settle implements ports.LedgerStore.
func (r *LedgerRepository) Settle(ctx context.Context, reservationID string, readBilled bool, decide func(credit.Hold) (credit.Settlement, error)) (bool, error) {
	done := false
	var settled credit.Settlement
	// One transaction in two round trips (pipelined): the locks and reads,
	// then every write with the commit, so the accounts stay locked the less.
	var first pgx.Batch
	queueLockReservation(&first, reservationID, readBilled)
	err := pipelined(ctx, r.db.Pool, &first, func(br pgx.BatchResults) (*pgx.Batch, error) {
		h, status, onSlice, err := readReservation(br, reservationID, readBilled)
		if err != nil || (status != "held" && status != "swept") {
			return &pgx.Batch{}, err
		}
		// A hold a sweep released (a peer took its process for dead while
		// the call went on) is still charged what the call cost: the ledger
		// never loses a charge. Its amount left held_micros then. One its
		// own process released (the call failed) is never charged.
		stillHeld := status == "held"
		settlement, err := decide(h)
		if err != nil {
			return nil, err
		}
		var batch pgx.Batch
		perAccount := map[string]int64{}
		for _, c := range settlement.Charges {
			if c.Amount < 0 {
				return nil, fmt.Errorf("postgres: a charge is never negative (%s on %s)", c.Amount, c.Account)
			}
			if !slices.ContainsFunc(h.Lines, func(l credit.HoldLine) bool { return l.Account == c.Account }) {
				return nil, fmt.Errorf("postgres: charge on %s, which the hold is not on", c.Account)
			}
			batch.Queue(`INSERT INTO credit_entries (account_id, kind, amount_micros, reservation_id, run_id, note)
VALUES ($1, $2, $3, $4, $5, $6)`, c.Account, string(c.Kind), int64(c.Amount), reservationID, h.RunID, c.Note)
			perAccount[c.Account] += int64(c.Amount)
		}
		for _, l := range h.Lines {
			charged := perAccount[l.Account]
			unheld := int64(l.Amount)
			if !stillHeld {
				unheld = 0
			}
			queueUnhold(&batch, l.Account, onSlice[l.Account], unheld, charged)
			batch.Queue(`UPDATE credit_holds SET status = 'settled', charged_micros = $3, closed_at = now()
WHERE reservation_id = $1 AND account_id = $2`, reservationID, l.Account, charged)
		}
		if u := settlement.Usage; u != nil {
			batch.Queue(`INSERT INTO credit_usage (reservation_id, account_id, run_id, inference_id, model,
tokens_in, tokens_cached, tokens_out, list_micros, charged_micros, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, reservationID, u.Account, h.RunID, u.InferenceID, u.Model,
				u.TokensIn, u.TokensCached, u.TokensOut, int64(u.List), int64(u.Charged), u.At)
		}
		done = true
		settled = settlement
		return &batch, nil
	})
	if err != nil {
		done = false
	}
	if done && err == nil {
		r.closed.Add(1, "settled")
		for _, c := range settled.Charges {
			kind, _, _ := strings.Cut(c.Account, ":")
			r.charged.Add(float64(c.Amount), string(c.Kind), kind)
		}
	}
	return done, err
}

// Release implements ports.LedgerStore.
func (r *LedgerRepository) Release(ctx context.Context, reservationID string) (bool, error) {
	done := false
	var first pgx.Batch
	queueLockReservation(&first, reservationID, false)
	err := pipelined(ctx, r.db.Pool, &first, func(br pgx.BatchResults) (*pgx.Batch, error) {
		h, status, onSlice, err := readReservation(br, reservationID, false)
		if err != nil || status != "held" {
			return &pgx.Batch{}, err
		}
		var batch pgx.Batch
		for _, l := range h.Lines {
			queueUnhold(&batch, l.Account, onSlice[l.Account], int64(l.Amount), 0)
		}
		batch.Queue(`UPDATE credit_holds SET status = 'released', closed_at = now() WHERE reservation_id = $1`, reservationID)
		done = true
		return &batch, nil
	})
	if err != nil {
		done = false
	}
	if done && err == nil {
		r.closed.Add(1, "released")
	}
	return done, err
}

// ReleaseOrphans implements ports.LedgerStore. Lock order as everywhere in
// the ledger: the hold rows first (skipping any another transaction holds),
// then their accounts sorted by id, so it can't deadlock with a Reserve or a
// Settle. A reservation is released only whole: one whose lines were not all
// locked here is left for the next call.
func (r *LedgerRepository) ReleaseOrphans(ctx context.Context, staleAfter time.Duration, limit int) (int, error) {
	return r.releaseSwept(ctx, `NOT EXISTS (
    SELECT 1 FROM processes p WHERE p.id = h.process_id AND p.heartbeat_at > now() - make_interval(secs => $1))`, staleAfter, limit)
}

// ReleaseStuck implements ports.LedgerStore, as ReleaseOrphans does.
func (r *LedgerRepository) ReleaseStuck(ctx context.Context, heldFor time.Duration, limit int) (int, error) {
	return r.releaseSwept(ctx, `h.created_at < now() - make_interval(secs => $1)`, heldFor, limit)
}

// releaseSwept releases up to limit whole held reservations whose lines
// meet victim (SQL over h, credit_holds, with $1 the seconds of after).
func (r *LedgerRepository) releaseSwept(ctx context.Context, victim string, after time.Duration, limit int) (int, error) {
	released := 0
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT h.reservation_id, h.account_id, h.slice, h.amount_micros FROM credit_holds h
WHERE h.status = 'held' AND `+victim+`
ORDER BY h.reservation_id, h.account_id LIMIT $2 FOR UPDATE OF h SKIP LOCKED`, after.Seconds(), limit)
		if err != nil {
			return fmt.Errorf("postgres: find orphan holds: %w", err)
		}
		type line struct {
			reservation, account string
			slice                *int16
			amount               int64
		}
		lines, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (line, error) {
			var l line
			return l, r.Scan(&l.reservation, &l.account, &l.slice, &l.amount)
		})
		if err != nil || len(lines) == 0 {
			return err
		}
		locked := map[string]int{}
		for _, l := range lines {
			locked[l.reservation]++
		}
		ids := make([]string, 0, len(locked))
		for id := range locked {
			ids = append(ids, id)
		}
		// Keep only the reservations whose every held line is locked here.
		whole := map[string]bool{}
		rows, err = tx.Query(ctx, `SELECT reservation_id, count(*) FROM credit_holds WHERE reservation_id = ANY($1) AND status = 'held' GROUP BY reservation_id`, ids)
		if err != nil {
			return fmt.Errorf("postgres: count orphan holds: %w", err)
		}
		var id string
		var n int
		if _, err := pgx.ForEachRow(rows, []any{&id, &n}, func() error {
			whole[id] = n == locked[id]
			return nil
		}); err != nil {
			return fmt.Errorf("postgres: count orphan holds: %w", err)
		}
		perAccount := map[string]int64{}
		perSlice := map[sliceKey]int64{}
		var accounts, reservations []string
		for _, l := range lines {
			switch {
			case !whole[l.reservation]:
			case l.slice != nil:
				perSlice[sliceKey{l.account, *l.slice}] += l.amount
			default:
				perAccount[l.account] += l.amount
			}
		}
		for a := range perAccount {
			accounts = append(accounts, a)
		}
		for id, ok := range whole {
			if ok {
				reservations = append(reservations, id)
			}
		}
		if len(reservations) == 0 {
			return nil
		}
		if _, err := lockAccounts(ctx, tx, accounts); err != nil {
			return err
		}
		if err := releaseOnSlices(ctx, tx, perSlice); err != nil {
			return err
		}
		amounts := make([]int64, len(accounts))
		for i, a := range accounts {
			amounts[i] = perAccount[a]
		}
		if _, err := tx.Exec(ctx, `UPDATE credit_accounts a SET held_micros = a.held_micros - u.amount
FROM unnest($1::text[], $2::bigint[]) AS u(id, amount) WHERE a.id = u.id`, accounts, amounts); err != nil {
			return fmt.Errorf("postgres: release on accounts: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE credit_holds SET status = 'released', closed_at = now(), swept_at = now()
WHERE reservation_id = ANY($1) AND status = 'held'`, reservations); err != nil {
			return fmt.Errorf("postgres: release holds: %w", err)
		}
		released = len(reservations)
		return nil
	})
	return released, err
}
