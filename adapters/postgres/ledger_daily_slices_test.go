package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
)

// reserveAs reserves worst for payer as the app's ledger does (credit.PlanHold),
// with a reservation id of our choosing, so a test can aim at a slice.
func (f *ledgerFixture) reserveAs(t testing.TB, id string, payer credit.Payer, worst credit.Micros) (credit.Hold, error) {
	t.Helper()
	now := time.Now()
	h := credit.Hold{ID: id, RunID: "run_" + id, ChatID: "chat_" + id, ProcessID: "proc_test", Payer: payer}
	return f.store.Reserve(t.Context(), h, payer.Accounts(now), func(accounts []credit.Account, taken credit.Micros) ([]credit.HoldLine, error) {
		return credit.PlanHold(payer, accounts, taken, worst, now)
	})
}

// idsOnSlice are n reservation ids that all draw on slice first.
func idsOnSlice(slice int16, n int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		id := fmt.Sprintf("hold_%d_%d", slice, i)
		if postgres.PickSlice(id) == slice {
			out = append(out, id)
		}
	}
	return out
}

// sliceSums are the day's slices summed straight from the table: the limits
// never add up past the cap, and the spent and held agree with Account.
func (f *ledgerFixture) sliceSums(t testing.TB, day string) (slices int, limit, spent, held int64) {
	t.Helper()
	require.NoError(t, f.db.Pool.QueryRow(t.Context(), `SELECT count(*), coalesce(sum(limit_micros), 0), coalesce(sum(spent_micros), 0),
coalesce(sum(held_micros), 0) FROM credit_daily_slices WHERE account_id = $1`, day).Scan(&slices, &limit, &spent, &held))
	return
}

// dayCapRace runs callers at once, each reserving and settling on the day's
// cap (half of them through invites, half as an open server) until refused.
// After every admitted reservation the caller reads the day: held and spent
// together never pass the cap. Calls cost between half and all of their
// worst case when exact is false, all of it when true.
func dayCapRace(t *testing.T, callers int, capMicros, worst credit.Micros, exact bool) {
	f := newLedgerFixture(t)
	ctx := t.Context()
	day := credit.DailyAccount(time.Now())
	payers := make([]credit.Payer, callers)
	for i := range payers {
		if i%2 == 0 {
			payers[i] = f.invitePayer(t, 1_000*credit.MicrosPerUSD)
			payers[i].PerChat = 0
		} else {
			payers[i] = credit.Payer{Kind: credit.PayOpen}
		}
		payers[i].DailyCap = capMicros
	}
	var admitted, refused, charged, inFlight, maxInFlight atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range callers {
		wg.Go(func() {
			<-start
			for call := 0; ; call++ {
				hold, err := f.ledger.Reserve(ctx, payers[i], fmt.Sprintf("run_%d_%d", i, call), "proc_test", worst)
				if err != nil {
					assert.True(t, errs.Is(err, errs.BudgetExhausted), "refusal: %v", err)
					refused.Add(1)
					return
				}
				admitted.Add(1)
				n := inFlight.Add(1)
				for m := maxInFlight.Load(); n > m && !maxInFlight.CompareAndSwap(m, n); m = maxInFlight.Load() {
				}
				a := f.account(t, day)
				if !assert.LessOrEqual(t, int64(a.Spent+a.Held), int64(capMicros), "the day never passes its cap") {
					return
				}
				actual := worst
				if !exact {
					actual = worst/2 + credit.Micros(i*131+call*17)%(worst/2+1)
				}
				inFlight.Add(-1)
				charged.Add(int64(actual))
				if !assert.NoError(t, f.ledger.Settle(ctx, hold, actual)) {
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()

	assert.EqualValues(t, callers, refused.Load(), "every caller ends refused")
	a := f.account(t, day)
	assert.Equal(t, capMicros, a.Limit)
	assert.Zero(t, a.Held, "nothing is left held")
	assert.EqualValues(t, charged.Load(), a.Spent, "the day's spent is exactly what was charged")
	assert.LessOrEqual(t, int64(a.Spent), int64(capMicros), "never past the cap")
	if exact {
		assert.Equal(t, capMicros, a.Spent, "calls costing their worst case use the cap exactly")
		assert.EqualValues(t, capMicros/worst, admitted.Load())
	} else {
		assert.GreaterOrEqual(t, int64(a.Spent), int64(capMicros)-(maxInFlight.Load()+1)*int64(worst), "the cap is used up")
	}
	n, limit, spent, held := f.sliceSums(t, day)
	assert.Equal(t, postgres.DailySlices, n)
	assert.LessOrEqual(t, limit, int64(capMicros), "the slices' limits never add up past the cap")
	assert.EqualValues(t, a.Spent, spent)
	assert.Zero(t, held)
	var entries, sum int64
	require.NoError(t, f.db.Pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(amount_micros), 0) FROM credit_entries WHERE account_id = $1`, day).Scan(&entries, &sum))
	assert.Equal(t, admitted.Load(), entries, "one charge per settled call")
	assert.EqualValues(t, a.Spent, sum, "the entries add up to what the day says it spent")
}

// TestTheDaysCapRace50: 50 callers, calls costing less than their worst case.
func TestTheDaysCapRace50(t *testing.T) { dayCapRace(t, 50, 400_000, 4_000, false) }

// TestTheDaysCapRace200: 200 callers, every call costing its worst case: the
// day takes exactly cap/worst calls, spread over slices that run dry at
// different times and are re-balanced.
func TestTheDaysCapRace200(t *testing.T) { dayCapRace(t, 200, 1_000_000, 1_000, true) }

// TestSlicesRunDryUnevenly: every call aims at one slice, which runs dry
// again and again; re-balancing moves the other slices' room to it, so the
// calls go through exactly up to the cap, and the next is refused on the
// whole day's sum. What a settle gives back is room again.
func TestSlicesRunDryUnevenly(t *testing.T) {
	f := newLedgerFixture(t)
	day := credit.DailyAccount(time.Now())
	const worst = 1_000
	capMicros := credit.Micros(postgres.DailySlices*10*worst + 500) // room for 10 calls a slice, and change
	payer := credit.Payer{Kind: credit.PayOpen, DailyCap: capMicros}
	ids := idsOnSlice(3, postgres.DailySlices*10+2)
	var holds []credit.Hold
	for _, id := range ids[:postgres.DailySlices*10] {
		h, err := f.reserveAs(t, id, payer, worst)
		require.NoError(t, err, id)
		holds = append(holds, h)
	}
	a := f.account(t, day)
	assert.EqualValues(t, postgres.DailySlices*10*worst, a.Held, "every call up to the cap went through")
	_, err := f.reserveAs(t, ids[len(ids)-2], payer, worst)
	require.True(t, errs.Is(err, errs.BudgetExhausted), "the next is refused: %v", err)
	assert.Contains(t, err.Error(), "$0.0005 left of today's budget", "the refusal names what the whole day has left")
	_, limit, _, held := f.sliceSums(t, day)
	assert.EqualValues(t, capMicros, limit, "the slices' limits add up to the cap")
	assert.EqualValues(t, a.Held, held)

	require.NoError(t, f.ledger.Settle(t.Context(), holds[0], 400), "a call that cost less gives room back")
	_, err = f.reserveAs(t, ids[len(ids)-1], payer, worst)
	require.NoError(t, err, "$0.0006 + $0.0005 now fits one more")
	a = f.account(t, day)
	assert.EqualValues(t, capMicros-100, a.Spent+a.Held)
}

// TestASweepReleasesHoldsOnSlices: holds of a process that is gone are
// given back to the slices they were on.
func TestASweepReleasesHoldsOnSlices(t *testing.T) {
	f := newLedgerFixture(t)
	day := credit.DailyAccount(time.Now())
	payer := f.invitePayer(t, 1_000_000)
	for i := range 40 {
		_, err := f.ledger.Reserve(t.Context(), payer, fmt.Sprintf("run_%d", i), "proc_gone", 1_000)
		require.NoError(t, err)
	}
	_, _, _, held := f.sliceSums(t, day)
	require.EqualValues(t, 40_000, held)
	n, err := f.ledger.ReleaseOrphanHolds(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 40, n)
	_, _, _, held = f.sliceSums(t, day)
	assert.Zero(t, held, "every slice gave its holds back")
	assert.Zero(t, f.account(t, day).Held)
	assert.Zero(t, f.account(t, credit.InviteAccount(payer.InviteID)).Held)
}

// TestAChangedCapAppliesAtOnce: mid-day the cap is lowered below what the day
// has held, then raised: every slice follows at the next call.
func TestAChangedCapAppliesAtOnce(t *testing.T) {
	f := newLedgerFixture(t)
	day := credit.DailyAccount(time.Now())
	const worst = 1_000
	open := func(capMicros credit.Micros) credit.Payer {
		return credit.Payer{Kind: credit.PayOpen, DailyCap: capMicros}
	}
	var holds []credit.Hold
	for i := range 50 {
		h, err := f.reserveAs(t, fmt.Sprintf("hold_a%d", i), open(10*credit.MicrosPerUSD), worst)
		require.NoError(t, err)
		holds = append(holds, h)
	}
	for i := range 64 {
		_, err := f.reserveAs(t, fmt.Sprintf("hold_b%d", i), open(40_000), worst)
		require.True(t, errs.Is(err, errs.BudgetExhausted), "a cap lowered below what is held refuses on every slice: %v", err)
	}
	a := f.account(t, day)
	assert.EqualValues(t, 40_000, a.Limit, "the day answers the new cap")
	_, limit, _, _ := f.sliceSums(t, day)
	assert.LessOrEqual(t, limit, int64(40_000))
	for _, h := range holds[:20] {
		require.NoError(t, f.ledger.Settle(t.Context(), h, worst/2))
	}
	// 30 held + 10 spent of 40: still nothing left, whatever the slice.
	for i := range 64 {
		_, err := f.reserveAs(t, fmt.Sprintf("hold_c%d", i), open(40_000), worst)
		require.True(t, errs.Is(err, errs.BudgetExhausted), "%v", err)
	}
	admitted := 0
	for i := range 64 {
		if _, err := f.reserveAs(t, fmt.Sprintf("hold_d%d", i), open(45_000), worst); err == nil {
			admitted++
		}
	}
	assert.Equal(t, 5, admitted, "a raised cap lets exactly its room through")
	a = f.account(t, day)
	assert.EqualValues(t, 45_000, a.Limit)
	assert.EqualValues(t, 45_000, a.Spent+a.Held)
}

// TestADayFromBeforeSlices: a day whose own row holds and spent (made before
// slices) gets its slices at its next call, counting what the row holds; a
// hold on the row still settles there.
func TestADayFromBeforeSlices(t *testing.T) {
	f := newLedgerFixture(t)
	ctx := t.Context()
	day := credit.DailyAccount(time.Now())
	_, err := f.db.Pool.Exec(ctx, `INSERT INTO credit_accounts (id, kind, limit_micros, spent_micros, held_micros) VALUES ($1, 'daily', 10000, 3000, 5000)`, day)
	require.NoError(t, err)
	_, err = f.db.Pool.Exec(ctx, `INSERT INTO credit_holds (reservation_id, account_id, run_id, chat_id, process_id, payer, amount_micros)
VALUES ('hold_old', $1, 'run_old', 'run_old', 'proc_test', '{"Kind":"open"}', 5000)`, day)
	require.NoError(t, err)
	payer := credit.Payer{Kind: credit.PayOpen, DailyCap: 10_000}
	_, err = f.reserveAs(t, "hold_new1", payer, 1_500)
	require.NoError(t, err)
	_, err = f.reserveAs(t, "hold_new2", payer, 1_000)
	require.True(t, errs.Is(err, errs.BudgetExhausted), "3000 + 5000 + 1500 of 10000 leaves 500: %v", err)
	a := f.account(t, day)
	assert.EqualValues(t, 6_500, a.Held)
	assert.EqualValues(t, 3_000, a.Spent)

	require.NoError(t, f.ledger.Settle(ctx, credit.Hold{ID: "hold_old"}, 2_000))
	var rowHeld, rowSpent int64
	require.NoError(t, f.db.Pool.QueryRow(ctx, `SELECT held_micros, spent_micros FROM credit_accounts WHERE id = $1`, day).Scan(&rowHeld, &rowSpent))
	assert.EqualValues(t, 0, rowHeld, "the old hold settles on the day's own row")
	assert.EqualValues(t, 5_000, rowSpent)
	_, err = f.reserveAs(t, "hold_new3", payer, 3_500)
	require.NoError(t, err, "what the old hold gave back is room again")
	a = f.account(t, day)
	assert.EqualValues(t, 10_000, a.Spent+a.Held)
}

// TestASweepRacesReservationsOnSlices: while 100 callers of a live process
// reserve and settle on the day's cap, and 20 of a dead one reserve and
// never settle, a sweep keeps giving the dead one's holds back — a hold on
// the day's own row from before slices among them. Nobody deadlocks or
// fails, the day never passes its cap, and at the end it holds nothing and
// spent exactly what was charged.
func TestASweepRacesReservationsOnSlices(t *testing.T) {
	f := newLedgerFixture(t)
	ctx := t.Context()
	day := credit.DailyAccount(time.Now())
	const capMicros, worst = 2_000_000, 1_000
	_, err := f.db.Pool.Exec(ctx, `INSERT INTO processes (id, hostname, pid, build_id, heartbeat_at) VALUES ('proc_live', 'h', 1, 'dev', now() + interval '1 hour')`)
	require.NoError(t, err)
	_, err = f.db.Pool.Exec(ctx, `INSERT INTO credit_accounts (id, kind, limit_micros, held_micros) VALUES ($1, 'daily', $2, 5000)`, day, capMicros)
	require.NoError(t, err)
	_, err = f.db.Pool.Exec(ctx, `INSERT INTO credit_holds (reservation_id, account_id, run_id, chat_id, process_id, payer, amount_micros)
VALUES ('hold_old', $1, 'run_old', 'run_old', 'proc_dead', '{"Kind":"open"}', 5000)`, day)
	require.NoError(t, err)
	payer := credit.Payer{Kind: credit.PayOpen, DailyCap: capMicros}
	var charged atomic.Int64
	var callers, sweeper sync.WaitGroup
	stop := make(chan struct{})
	sweeper.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, err := f.ledger.ReleaseOrphanHolds(ctx)
			if !assert.NoError(t, err) {
				return
			}
		}
	})
	for i := range 120 {
		callers.Go(func() {
			for call := range 15 {
				proc := "proc_live"
				if i < 20 {
					proc = "proc_dead"
				}
				h, err := f.ledger.Reserve(ctx, payer, fmt.Sprintf("run_%d_%d", i, call), proc, worst)
				if !assert.NoError(t, err) {
					return
				}
				a := f.account(t, day)
				assert.LessOrEqual(t, int64(a.Spent+a.Held), int64(capMicros))
				if proc == "proc_live" {
					charged.Add(worst / 2)
					if !assert.NoError(t, f.ledger.Settle(ctx, h, worst/2)) {
						return
					}
				}
			}
		})
	}
	callers.Wait()
	close(stop)
	sweeper.Wait()
	_, err = f.ledger.ReleaseOrphanHolds(ctx)
	require.NoError(t, err)
	a := f.account(t, day)
	assert.Zero(t, a.Held, "every dead hold swept, every live one settled")
	assert.EqualValues(t, charged.Load(), a.Spent)
	_, _, spent, held := f.sliceSums(t, day)
	assert.Zero(t, held)
	assert.EqualValues(t, charged.Load(), spent)
}

// TestBalanceNeverPassesTheCap: over many random days, re-balancing gives
// every slice at least what it uses and the calling slice its call, and the
// limits add up to exactly the cap less what the day's row counts; a day
// past its cap gets no room anywhere.
func TestBalanceNeverPassesTheCap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2_000 {
		n := 1 + rng.IntN(40)
		parts := make([]postgres.DaySlice, n)
		var used int64
		for i := range parts {
			spent, held := rng.Int64N(5_000), rng.Int64N(5_000)
			parts[i] = postgres.NewDaySlice(rng.Int64N(10_000), spent, held)
			used += spent + held
		}
		before := rng.Int64N(3_000)
		capMicros := rng.Int64N(2*used + 10_000)
		onto, need := rng.IntN(n), rng.Int64N(3_000)
		limits := postgres.Balance(parts, capMicros, before, onto, need)
		left := capMicros - before - used
		var sum int64
		for _, l := range limits {
			require.GreaterOrEqual(t, l, int64(0))
			sum += l
		}
		if left < 0 {
			require.Zero(t, sum, "a day past its cap has no room")
			continue
		}
		require.Equal(t, capMicros-before, sum, "the limits add up to the cap less the day's row")
		for i, p := range parts {
			require.GreaterOrEqual(t, limits[i], postgres.UsedOf(p), "no slice over its limit")
		}
		if need <= left {
			require.GreaterOrEqual(t, limits[onto]-postgres.UsedOf(parts[onto]), need, "the calling slice fits its call")
		}
	}
}

// TestTheDaysRefusalComesFirst: refused by both the day's cap and the chat's
// cap, a call hears about the day, as it would from one row (the accounts
// are checked before the chat's cap), whatever slice it drew.
func TestTheDaysRefusalComesFirst(t *testing.T) {
	f := newLedgerFixture(t)
	now := time.Now()
	payer := credit.Payer{Kind: credit.PayOpen, DailyCap: 40_000, PerChat: 1_500}
	reserve := func(id, chat string) error {
		h := credit.Hold{ID: id, RunID: "run_" + chat, ChatID: chat, ProcessID: "proc_test", Payer: payer}
		_, err := f.store.Reserve(t.Context(), h, payer.Accounts(now), func(accounts []credit.Account, taken credit.Micros) ([]credit.HoldLine, error) {
			return credit.PlanHold(payer, accounts, taken, 1_000, now)
		})
		return err
	}
	require.NoError(t, reserve("hold_first", "chat_x"))
	for i := range 39 {
		require.NoError(t, reserve(fmt.Sprintf("hold_fill_%d", i), fmt.Sprintf("chat_%d", i)))
	}
	for slice := range int16(postgres.DailySlices) {
		err := reserve(idsOnSlice(slice, 1)[0], "chat_x")
		require.True(t, errs.Is(err, errs.BudgetExhausted), "%v", err)
		assert.Contains(t, err.Error(), "today's budget", "slice %d", slice)
	}
}
