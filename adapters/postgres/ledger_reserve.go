package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/credit"
)

// Reserve implements ports.LedgerStore.
//
// The day's cap is kept in slices (ledger_daily_slices.go): a reservation
// first tries the one slice its id picks, locking only it and the other
// paying accounts; when that slice can't fit the call (or the cap changed,
// or the day has no slices yet) it starts again in a second transaction that
// locks every slice of the day, re-balances them and decides on the whole
// day's sum. The slices' limits add up to at most the cap, so the day's
// holds and charges never pass it.
func (r *LedgerRepository) Reserve(ctx context.Context, hold credit.Hold, specs []credit.AccountSpec,
	decide func([]credit.Account, credit.Micros) ([]credit.HoldLine, error)) (credit.Hold, error) {
	payer, err := json.Marshal(hold.Payer)
	if err != nil {
		return credit.Hold{}, err
	}
	// Accounts made on first use (the day's cap) are made before anything is
	// locked, each in its own statement: made inside the transaction, a
	// caller would hold one account's lock while waiting for another's out of
	// order, and deadlock with a settle.
	for _, sp := range specs {
		if !sp.Create {
			continue
		}
		if _, known := r.made.Load(sp.ID); known {
			continue
		}
		if err := r.openAccount(ctx, sp); err != nil {
			return credit.Hold{}, err
		}
		r.made.Store(sp.ID, true)
	}
	c := reserveCall{hold: hold, payer: payer, specs: specs, day: -1, decide: decide}
	if c.hold.ChatID == "" {
		c.hold.ChatID = hold.RunID
	}
	for i, s := range specs {
		if s.Kind == credit.KindDaily {
			c.day = i
		}
	}
	c.slice = pickSlice(hold.ID)
	lines, again, err := r.reserveOnSlice(ctx, &c)
	if errors.Is(err, errRebalance) {
		lines, err = r.reserveRebalancing(ctx, &c, again)
		outcome := "held"
		if err != nil {
			outcome = "refused"
		}
		r.rebalanced.Add(1, outcome)
	}
	if err != nil {
		return credit.Hold{}, err
	}
	c.hold.Lines = lines
	return c.hold, nil
}

// reserveCall is one Reserve's request.
type reserveCall struct {
	hold   credit.Hold
	payer  []byte
	specs  []credit.AccountSpec
	day    int   // the index in specs of the day's cap, -1 when none pays
	slice  int16 // the day's slice this reservation draws on
	decide func([]credit.Account, credit.Micros) ([]credit.HoldLine, error)
}

// errRebalance ends the one-slice transaction when the whole day must decide.
var errRebalance = errors.New("postgres: the day's slices need re-balancing")

// rebalance says why the one-slice try gave way to the whole day, and what
// the call needs on the day's cap when known.
type rebalance struct {
	missing bool  // the day has no slice of that number yet
	need    int64 // the call's hold on the day's cap; 0 when decide wasn't asked
}

// lockedIDs are the paying accounts locked in credit_accounts (in id order):
// every one but the day's, whose slices are locked instead.
func (c *reserveCall) lockedIDs() []string {
	ids := make([]string, 0, len(c.specs))
	for i, s := range c.specs {
		if i != c.day {
			ids = append(ids, s.ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// queueLocks queues the lock of the accounts other than the day's (first, as
// the ledger's lock order has it) and the read of what the chat has taken
// from the first account.
func (c *reserveCall) queueLocks(batch *pgx.Batch) {
	batch.Queue(`SELECT id, kind, limit_micros, spent_micros, held_micros, expires_at, revoked_at
FROM credit_accounts WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE`, c.lockedIDs())
}

func (c *reserveCall) queueChatTaken(batch *pgx.Batch) {
	first := ""
	if len(c.specs) > 0 {
		first = c.specs[0].ID
	}
	batch.Queue(`SELECT coalesce(sum(CASE status WHEN 'held' THEN amount_micros ELSE charged_micros END), 0)
FROM credit_holds WHERE chat_id = $1 AND account_id = $2 AND status <> 'released'`, c.hold.ChatID, first)
}

func readLocked(br pgx.BatchResults) (map[string]credit.Account, error) {
	return accountsByID(br.Query())
}

func readChatTaken(br pgx.BatchResults) (credit.Micros, error) {
	var taken int64
	if err := br.QueryRow().Scan(&taken); err != nil {
		return 0, fmt.Errorf("postgres: read the chat's spend: %w", err)
	}
	return credit.Micros(taken), nil
}

// accounts are the paying accounts in spec order (a missing one left out),
// the day's cap shown as day.
func (c *reserveCall) accounts(locked map[string]credit.Account, day credit.Account) []credit.Account {
	out := make([]credit.Account, 0, len(c.specs))
	for i, s := range c.specs {
		if i == c.day {
			out = append(out, day)
		} else if a, ok := locked[s.ID]; ok {
			out = append(out, a)
		}
	}
	return out
}

// dayLine is what lines hold on the day's cap.
func (c *reserveCall) dayLine(lines []credit.HoldLine) int64 {
	if c.day < 0 {
		return 0
	}
	for _, l := range lines {
		if l.Account == c.specs[c.day].ID {
			return int64(l.Amount)
		}
	}
	return 0
}

// reserveOnSlice is the common case, one transaction: the other accounts and
// the day's one slice locked, the chat's spend read, in one round trip. decide
// sees the slice as the day's cap; if the call doesn't fit the slice (and
// nothing else refuses it), the whole day decides instead (errRebalance).
func (r *LedgerRepository) reserveOnSlice(ctx context.Context, c *reserveCall) ([]credit.HoldLine, rebalance, error) {
	var lines []credit.HoldLine
	var again rebalance
	var first pgx.Batch
	c.queueLocks(&first)
	if c.day >= 0 {
		first.Queue(`SELECT cap_micros, limit_micros, spent_micros, held_micros FROM credit_daily_slices
WHERE account_id = $1 AND slice = $2 FOR NO KEY UPDATE`, c.specs[c.day].ID, c.slice)
	}
	c.queueChatTaken(&first)
	err := pipelined(ctx, r.db.Pool, &first, func(br pgx.BatchResults) (*pgx.Batch, error) {
		locked, err := readLocked(br)
		if err != nil {
			return nil, err
		}
		var slice daySlice
		if c.day >= 0 {
			err := br.QueryRow().Scan(&slice.cap, &slice.limit, &slice.spent, &slice.held)
			if errors.Is(err, pgx.ErrNoRows) {
				again.missing = true
				return nil, errRebalance
			}
			if err != nil {
				return nil, fmt.Errorf("postgres: lock the day's slice: %w", err)
			}
			if slice.cap != int64(c.specs[c.day].Limit) {
				return nil, errRebalance // a changed cap applies at once
			}
		}
		taken, err := readChatTaken(br)
		if err != nil {
			return nil, err
		}
		if c.day < 0 {
			if lines, err = c.decide(c.accounts(locked, credit.Account{}), taken); err != nil {
				return nil, err
			}
			return c.queueHold(lines), nil
		}
		// The slice shown as the day: what fits the slice fits the day.
		dayID := c.specs[c.day].ID
		lines, err = c.decide(c.accounts(locked, credit.Account{ID: dayID, Kind: credit.KindDaily,
			Limit: credit.Micros(slice.limit), Spent: credit.Micros(slice.spent), Held: credit.Micros(slice.held)}), taken)
		if err == nil && c.dayLine(lines) <= slice.room() {
			return c.queueHold(lines), nil
		}
		if err != nil {
			// Refused: by the slice, or by something else (the invite, the
			// chat's cap)? With the day unbounded, a refusal that stays the
			// same is not the day's, and stands; any other is for the whole
			// day to decide.
			unbounded, err2 := c.decide(c.accounts(locked, credit.Account{ID: dayID, Kind: credit.KindDaily, Limit: unboundedRoom}), taken)
			if err2 != nil && err2.Error() == err.Error() {
				return nil, err
			}
			lines = unbounded
		}
		again.need = c.dayLine(lines)
		return nil, errRebalance
	})
	return lines, again, err
}

// reserveRebalancing decides on the whole day: every slice of the day locked
// in slice order (after the other accounts), the day's sum shown to decide,
// and the slices' limits re-balanced (ledger_daily_slices.go: balance) so the
// call's slice has room for it. The re-balancing is kept even when decide
// refuses: a changed cap then still applies to the next calls' slices.
func (r *LedgerRepository) reserveRebalancing(ctx context.Context, c *reserveCall, again rebalance) ([]credit.HoldLine, error) {
	var lines []credit.HoldLine
	var refusal error
	dayID := c.specs[c.day].ID
	capMicros := int64(c.specs[c.day].Limit)
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		var batch pgx.Batch
		c.queueLocks(&batch)
		if again.missing {
			batch.Queue(`INSERT INTO credit_daily_slices (account_id, slice, cap_micros)
SELECT $1, g, -1 FROM generate_series(0, $2::int - 1) AS g ON CONFLICT DO NOTHING`, dayID, dailySlices)
		}
		batch.Queue(`SELECT slice, cap_micros, limit_micros, spent_micros, held_micros FROM credit_daily_slices
WHERE account_id = $1 ORDER BY slice FOR NO KEY UPDATE`, dayID)
		// What the day's own row holds and spent (holds made before slices):
		// it only shrinks, so a read without its lock is safe to count.
		batch.Queue(`SELECT spent_micros, held_micros FROM credit_accounts WHERE id = $1`, dayID)
		c.queueChatTaken(&batch)
		br := tx.SendBatch(ctx, &batch)
		defer func() { _ = br.Close() }()
		locked, err := readLocked(br)
		if err != nil {
			return err
		}
		if again.missing {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("postgres: make the day's slices: %w", err)
			}
		}
		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("postgres: lock the day's slices: %w", err)
		}
		parts, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (daySlice, error) {
			var s daySlice
			return s, row.Scan(&s.n, &s.cap, &s.limit, &s.spent, &s.held)
		})
		if err != nil {
			return fmt.Errorf("postgres: lock the day's slices: %w", err)
		}
		if len(parts) == 0 {
			return fmt.Errorf("postgres: the day %s has no slices", dayID)
		}
		var before daySlice
		if err := br.QueryRow().Scan(&before.spent, &before.held); err != nil {
			return fmt.Errorf("postgres: read the day's account: %w", err)
		}
		taken, err := readChatTaken(br)
		if err != nil {
			return err
		}
		if err := br.Close(); err != nil {
			return err
		}
		whole := credit.Account{ID: dayID, Kind: credit.KindDaily, Limit: credit.Micros(capMicros),
			Spent: credit.Micros(before.spent), Held: credit.Micros(before.held)}
		onto := 0
		for i, s := range parts {
			whole.Spent += credit.Micros(s.spent)
			whole.Held += credit.Micros(s.held)
			if s.n == c.slice {
				onto = i
			}
		}
		lines, refusal = c.decide(c.accounts(locked, whole), taken)
		need := int64(0)
		if refusal == nil {
			need = c.dayLine(lines)
			if need > int64(whole.Left()) {
				return fmt.Errorf("postgres: a hold of %d on %s, which has %s left", need, dayID, whole.Left())
			}
		}
		if err := balanceSlices(ctx, tx, dayID, capMicros, parts, before.spent+before.held, onto, need); err != nil {
			return err
		}
		if refusal != nil {
			return nil
		}
		c.slice = parts[onto].n
		return r.writeHold(ctx, tx, c, lines)
	})
	if err != nil {
		return nil, err
	}
	return lines, refusal
}

// writeHold writes lines as c's hold, in one round trip.
func (r *LedgerRepository) writeHold(ctx context.Context, tx pgx.Tx, c *reserveCall, lines []credit.HoldLine) error {
	if err := tx.SendBatch(ctx, c.queueHold(lines)).Close(); err != nil {
		return fmt.Errorf("postgres: write hold: %w", err)
	}
	return nil
}

// queueHold queues the writes of lines as c's hold: a line on the day's cap
// is on c's slice.
func (c *reserveCall) queueHold(lines []credit.HoldLine) *pgx.Batch {
	var batch pgx.Batch
	for _, l := range lines {
		var slice *int16
		if c.day >= 0 && l.Account == c.specs[c.day].ID {
			slice = &c.slice
			batch.Queue(`UPDATE credit_daily_slices SET held_micros = held_micros + $3 WHERE account_id = $1 AND slice = $2`,
				l.Account, c.slice, int64(l.Amount))
		} else {
			batch.Queue(`UPDATE credit_accounts SET held_micros = held_micros + $2 WHERE id = $1`, l.Account, int64(l.Amount))
		}
		batch.Queue(`INSERT INTO credit_holds (reservation_id, account_id, run_id, chat_id, process_id, payer, amount_micros, slice)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, c.hold.ID, l.Account, c.hold.RunID, c.hold.ChatID, c.hold.ProcessID, c.payer, int64(l.Amount), slice)
	}
	return &batch
}
