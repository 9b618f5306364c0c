package postgres

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/credit"
)

// The day's cap in slices (migrations/000031_daily_slices, docs/money.md).
// Every invite and open-server chat pays on the day's cap, so one row for it
// would make every reservation and settlement queue on that row's lock. The
// cap is spread over dailySlices rows instead; a reservation draws on one.
// What keeps the day under its cap:
//
//   - the slices' limits add up to at most the cap less what the day's own
//     row still counts (holds from before slices), whenever they are set;
//   - a reservation goes ahead on a slice only when its hold fits what that
//     slice has left (limit − spent − held), under the slice's lock;
//   - limits are set only by balanceSlices, under the lock of every slice of
//     the day, from the sums it reads there: each slice gets what it already
//     uses plus a share of what the whole day has left (so no slice is over
//     its limit), or, when the day is past its cap (a lowered cap), nothing
//     (so no slice has room).
//
// So the sum of every slice's spent and held stays within the sum of their
// limits, within the cap, as long as no call costs more than its worst case
// (the ledger's rule for one row too).

// dailySlices is how many slices a day's cap is spread over: with 16 callers
// at once, few pick the same slice.
const dailySlices = 32

// unboundedRoom is the day's cap shown to decide, when a one-slice
// reservation was refused, to learn whether the slice was why.
const unboundedRoom = credit.Micros(math.MaxInt64 / 4)

// daySlice is one slice of a day's cap.
type daySlice struct {
	n                       int16
	cap, limit, spent, held int64
}

func (s daySlice) room() int64 { return s.limit - s.spent - s.held }

// pickSlice is the slice a reservation draws on first: its id is random, so
// reservations spread evenly.
func pickSlice(reservationID string) int16 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(reservationID))
	return int16(h.Sum32() % dailySlices)
}

// openAccount makes an account made on first use (the day's cap) if it is
// missing. A day's account is made with its slices, in one statement, the
// cap spread evenly: two processes making it at once make one set.
func (r *LedgerRepository) openAccount(ctx context.Context, sp credit.AccountSpec) error {
	var err error
	if sp.Kind == credit.KindDaily {
		_, err = r.db.Pool.Exec(ctx, `WITH day AS (
    INSERT INTO credit_accounts (id, kind, limit_micros) VALUES ($1, 'daily', $2) ON CONFLICT (id) DO NOTHING RETURNING id)
INSERT INTO credit_daily_slices (account_id, slice, cap_micros, limit_micros)
SELECT day.id, g, $2, $2 / $3 + CASE WHEN g < $2 % $3 THEN 1 ELSE 0 END FROM day, generate_series(0, $3 - 1) AS g`,
			sp.ID, int64(sp.Limit), int64(dailySlices))
	} else {
		_, err = r.db.Pool.Exec(ctx, `INSERT INTO credit_accounts (id, kind, limit_micros) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`,
			sp.ID, string(sp.Kind), int64(sp.Limit))
	}
	if err != nil {
		return fmt.Errorf("postgres: open account %s: %w", sp.ID, err)
	}
	return nil
}

// balance is the slices' new limits for a day whose cap is capMicros and
// whose own row still counts usedBefore: each slice keeps what it uses
// (spent and held) plus a share of what the day has left, slice onto getting
// need first, the rest evenly. When the day has nothing left every limit is
// zero, so no slice has room until holds and charges fall under the cap.
func balance(parts []daySlice, capMicros, usedBefore int64, onto int, need int64) []int64 {
	limits := make([]int64, len(parts))
	left := capMicros - usedBefore
	for _, s := range parts {
		left -= s.spent + s.held
	}
	if left < 0 {
		return limits
	}
	for i, s := range parts {
		limits[i] = s.spent + s.held
	}
	if need > 0 && need <= left {
		limits[onto] += need
		left -= need
	}
	n := int64(len(parts))
	for i := range limits {
		limits[i] += left / n
		if int64(i) < left%n {
			limits[i]++
		}
	}
	return limits
}

// balanceSlices sets the day's slices (all locked by the caller) to balance's
// limits, balanced for capMicros.
func balanceSlices(ctx context.Context, tx pgx.Tx, dayID string, capMicros int64, parts []daySlice, usedBefore int64, onto int, need int64) error {
	limits := balance(parts, capMicros, usedBefore, onto, need)
	same := true
	for i, s := range parts {
		same = same && s.cap == capMicros && s.limit == limits[i]
	}
	if same {
		return nil // a refusal on a day already balanced writes nothing
	}
	ns := make([]int16, len(parts))
	for i, s := range parts {
		ns[i] = s.n
	}
	if _, err := tx.Exec(ctx, `UPDATE credit_daily_slices s SET limit_micros = u.limit_micros, cap_micros = $2
FROM unnest($3::smallint[], $4::bigint[]) AS u(slice, limit_micros) WHERE s.account_id = $1 AND s.slice = u.slice`,
		dayID, capMicros, ns, limits); err != nil {
		return fmt.Errorf("postgres: balance the day's slices: %w", err)
	}
	return nil
}

// sliceKey names one slice of a day's account.
type sliceKey struct {
	account string
	slice   int16
}

// lockSlices locks the slices named, in (account, slice) order: after the
// accounts, as the ledger's lock order has it.
func lockSlices(ctx context.Context, tx pgx.Tx, keys []sliceKey) error {
	var batch pgx.Batch
	queueLockSlices(&batch, keys)
	if err := tx.SendBatch(ctx, &batch).Close(); err != nil {
		return fmt.Errorf("postgres: lock the day's slices: %w", err)
	}
	return nil
}

func queueLockSlices(batch *pgx.Batch, keys []sliceKey) {
	if len(keys) == 0 {
		return
	}
	keys = slices.Clone(keys)
	slices.SortFunc(keys, func(a, b sliceKey) int {
		return cmp.Or(cmp.Compare(a.account, b.account), cmp.Compare(a.slice, b.slice))
	})
	keys = slices.Compact(keys)
	accounts := make([]string, len(keys))
	ns := make([]int16, len(keys))
	for i, k := range keys {
		accounts[i], ns[i] = k.account, k.slice
	}
	batch.Queue(`SELECT 1 FROM credit_daily_slices s JOIN unnest($1::text[], $2::smallint[]) AS u(account_id, slice)
ON s.account_id = u.account_id AND s.slice = u.slice ORDER BY s.account_id, s.slice FOR NO KEY UPDATE OF s`, accounts, ns)
}

// queueUnhold queues what closing a hold's line does to its account: held
// less by unheld, spent more by charged, on its slice when it has one.
func queueUnhold(batch *pgx.Batch, account string, slice *int16, unheld, charged int64) {
	if slice != nil {
		batch.Queue(`UPDATE credit_daily_slices SET held_micros = held_micros - $3, spent_micros = spent_micros + $4
WHERE account_id = $1 AND slice = $2`, account, *slice, unheld, charged)
		return
	}
	batch.Queue(`UPDATE credit_accounts SET held_micros = held_micros - $2, spent_micros = spent_micros + $3 WHERE id = $1`,
		account, unheld, charged)
}

// accountQuery reads an account; a day's account answers for the whole day:
// its own row (holds from before slices) and its slices summed, its limit
// the cap its slices were last balanced for.
const accountQuery = `SELECT a.id, a.kind, coalesce(s.cap, a.limit_micros), a.spent_micros + coalesce(s.spent, 0),
    a.held_micros + coalesce(s.held, 0), a.expires_at, a.revoked_at
FROM credit_accounts a LEFT JOIN LATERAL (
    SELECT max(cap_micros) FILTER (WHERE cap_micros >= 0) AS cap, sum(spent_micros)::bigint AS spent, sum(held_micros)::bigint AS held
    FROM credit_daily_slices WHERE account_id = a.id AND a.kind = 'daily') s ON true
WHERE a.id = $1`

// releaseOnSlices locks the slices named (after the accounts) and takes
// each one's amount off what it holds: a sweep's share of the day's slices.
func releaseOnSlices(ctx context.Context, tx pgx.Tx, amounts map[sliceKey]int64) error {
	if len(amounts) == 0 {
		return nil
	}
	keys := make([]sliceKey, 0, len(amounts))
	for k := range amounts {
		keys = append(keys, k)
	}
	if err := lockSlices(ctx, tx, keys); err != nil {
		return err
	}
	accounts := make([]string, len(keys))
	ns := make([]int16, len(keys))
	held := make([]int64, len(keys))
	for i, k := range keys {
		accounts[i], ns[i], held[i] = k.account, k.slice, amounts[k]
	}
	if _, err := tx.Exec(ctx, `UPDATE credit_daily_slices s SET held_micros = s.held_micros - u.amount
FROM unnest($1::text[], $2::smallint[], $3::bigint[]) AS u(account_id, slice, amount)
WHERE s.account_id = u.account_id AND s.slice = u.slice`, accounts, ns, held); err != nil {
		return fmt.Errorf("postgres: release on the day's slices: %w", err)
	}
	return nil
}
