package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/credit"
)

// reserveOn reserves worst for payer as if at was now: on at's day.
func (f *ledgerFixture) reserveOn(t testing.TB, at time.Time, id string, payer credit.Payer, worst credit.Micros) credit.Hold {
	t.Helper()
	h := credit.Hold{ID: id, RunID: "run_" + id, ChatID: "chat_" + id, ProcessID: "proc_test", Payer: payer}
	h, err := f.store.Reserve(t.Context(), h, payer.Accounts(at), func(accounts []credit.Account, taken credit.Micros) ([]credit.HoldLine, error) {
		return credit.PlanHold(payer, accounts, taken, worst, at)
	})
	require.NoError(t, err)
	return h
}

// TestFoldingPastDaysKeepsWhatTheyRead: the slices of days before the
// cut-off are folded into their days' rows and deleted: each day reads the
// same (cap, spent, nothing held), its holds are on its row; a day with a
// hold still open keeps its slices until the hold closes, and a late settle
// of a hold a sweep released on a folded day charges the day's row. Days
// from the cut-off on keep theirs.
func TestFoldingPastDaysKeepsWhatTheyRead(t *testing.T) {
	f := newLedgerFixture(t)
	now := time.Now().UTC()
	cutoff := now.Add(-7 * 24 * time.Hour)
	old, busy, recent := now.Add(-10*24*time.Hour), now.Add(-9*24*time.Hour), now.Add(-6*24*time.Hour)
	payer := f.invitePayer(t, 1_000_000_000)
	payer.PerChat = 0
	settleOn := func(at time.Time, n int, cost credit.Micros) {
		for i := range n {
			h := f.reserveOn(t, at, fmt.Sprintf("%s_%d", at.Format("0102"), i), payer, 4_000)
			require.NoError(t, f.ledger.Settle(t.Context(), h, cost))
		}
	}
	settleOn(old, 20, 1_500)
	settleOn(busy, 5, 1_000)
	settleOn(recent, 5, 1_000)
	open := f.reserveOn(t, busy, "open_one", payer, 2_000)
	swept := f.reserveOn(t, old, "swept_one", payer, 3_000)
	// A sweep released swept_one as a sweep does (its process taken for
	// dead); its call goes on and settles late.
	_, err := f.db.Pool.Exec(t.Context(), `UPDATE credit_holds SET status = 'released', closed_at = now(), swept_at = now() WHERE reservation_id = 'swept_one'`)
	require.NoError(t, err)
	_, err = f.db.Pool.Exec(t.Context(), `UPDATE credit_daily_slices s SET held_micros = s.held_micros - h.amount_micros
FROM credit_holds h WHERE h.reservation_id = 'swept_one' AND h.account_id = s.account_id AND h.slice = s.slice`)
	require.NoError(t, err)
	_, err = f.db.Pool.Exec(t.Context(), `UPDATE credit_accounts a SET held_micros = a.held_micros - h.amount_micros
FROM credit_holds h WHERE h.reservation_id = 'swept_one' AND h.account_id = a.id AND h.slice IS NULL`)
	require.NoError(t, err)

	oldDay, busyDay, recentDay := credit.DailyAccount(old), credit.DailyAccount(busy), credit.DailyAccount(recent)
	before := map[string]credit.Account{}
	for _, d := range []string{oldDay, busyDay, recentDay} {
		before[d] = f.account(t, d)
	}
	require.EqualValues(t, 30_000, before[oldDay].Spent)
	require.EqualValues(t, 2_000, before[busyDay].Held)

	deleted, err := f.store.FoldPastDays(t.Context(), cutoff)
	require.NoError(t, err)
	assert.EqualValues(t, 32, deleted, "the old day's slices went; the busy day's stay while a hold is open")
	slices, _, _, _ := f.sliceSums(t, oldDay)
	assert.Zero(t, slices)
	slices, _, _, _ = f.sliceSums(t, busyDay)
	assert.Equal(t, 32, slices)
	slices, _, _, _ = f.sliceSums(t, recentDay)
	assert.Equal(t, 32, slices, "a day after the cut-off keeps its slices")
	for d, a := range before {
		assert.Equal(t, a, f.account(t, d), "%s reads the same", d)
	}
	var onSlices int
	require.NoError(t, f.db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM credit_holds WHERE account_id = $1 AND slice IS NOT NULL`, oldDay).Scan(&onSlices))
	assert.Zero(t, onSlices, "the old day's holds are on its row")

	// The sweep's late settle charges the folded day's row.
	require.NoError(t, f.ledger.Settle(t.Context(), swept, 2_500))
	got := f.account(t, oldDay)
	assert.EqualValues(t, 32_500, got.Spent)
	assert.Zero(t, got.Held)

	// Once the open hold closes, the busy day folds too; again is nothing.
	require.NoError(t, f.ledger.Settle(t.Context(), open, 1_000))
	busyBefore := f.account(t, busyDay)
	deleted, err = f.store.FoldPastDays(t.Context(), cutoff)
	require.NoError(t, err)
	assert.EqualValues(t, 32, deleted)
	assert.Equal(t, busyBefore, f.account(t, busyDay))
	assert.EqualValues(t, 6_000, busyBefore.Spent)
	deleted, err = f.store.FoldPastDays(t.Context(), cutoff)
	require.NoError(t, err)
	assert.Zero(t, deleted)
}

// BenchmarkFoldADay folds one past day holding 20,000 closed holds on its
// slices (a busy day of invite and open-server chats), beside its floor: a
// plain UPDATE rewriting those 20,000 holds once, which the fold must do
// (each hold moves onto the day's row). Each op restores the day first,
// off the clock.
func BenchmarkFoldADay(b *testing.B) {
	const holds = 20_000
	f := newLedgerFixture(b)
	ctx := b.Context()
	past := time.Now().Add(-30 * 24 * time.Hour)
	day := credit.DailyAccount(past)
	payer := credit.Payer{Kind: credit.PayOpen, DailyCap: 1_000 * credit.MicrosPerUSD}
	h := f.reserveOn(b, past, "seed", payer, 1_000)
	require.NoError(b, f.ledger.Settle(ctx, h, 1_000))
	_, err := f.db.Pool.Exec(ctx, `INSERT INTO credit_holds (reservation_id, account_id, run_id, chat_id, process_id, payer, amount_micros,
    status, charged_micros, created_at, closed_at, slice)
SELECT 'bench_' || g, $1, 'run_' || g, 'run_' || g, 'proc', '{}'::jsonb, 1000, 'settled', 900, now(), now(), (g % 32)::smallint
FROM generate_series(1, $2) AS g`, day, holds)
	require.NoError(b, err)
	// restore puts the day back as it was before a fold: its slices, and
	// its holds on them.
	restore := func() {
		_, err := f.db.Pool.Exec(ctx, `INSERT INTO credit_daily_slices (account_id, slice, cap_micros, limit_micros, spent_micros)
SELECT $1, g, 1000000000, 31250000, 0 FROM generate_series(0, 31) AS g ON CONFLICT DO NOTHING`, day)
		require.NoError(b, err)
		_, err = f.db.Pool.Exec(ctx, `UPDATE credit_holds SET slice = (substr(reservation_id, 7)::int % 32)::smallint
WHERE account_id = $1 AND reservation_id LIKE 'bench\_%'`, day)
		require.NoError(b, err)
	}
	b.Run("fold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			restore()
			b.StartTimer()
			n, err := f.store.FoldPastDays(ctx, time.Now().Add(-7*24*time.Hour))
			require.NoError(b, err)
			require.EqualValues(b, 32, n)
		}
	})
	b.Run("floor", func(b *testing.B) {
		for b.Loop() {
			_, err := f.db.Pool.Exec(ctx, `UPDATE credit_holds SET closed_at = closed_at WHERE account_id = $1 AND reservation_id LIKE 'bench\_%'`, day)
			require.NoError(b, err)
		}
	})
}
