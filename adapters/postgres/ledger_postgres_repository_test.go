package postgres_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
)

type ledgerFixture struct {
	db      *pgtest.DB
	ledger  *moneyapp.Ledger
	invites *moneyapp.InviteService
	store   *postgres.LedgerRepository
}

func newLedgerFixture(t testing.TB) *ledgerFixture {
	db := pgtest.New(t)
	store := postgres.NewLedgerRepository(db.DB)
	clock := memory.SystemClock{}
	return &ledgerFixture{
		db:      db,
		store:   store,
		ledger:  moneyapp.NewLedger(config.Config{}, store, postgres.NewPeopleRepository(db.DB), clock, rand.Reader, nil),
		invites: moneyapp.NewInviteService(postgres.NewInviteRepository(db.DB), postgres.NewSessionRepository(db.DB), clock, rand.Reader),
	}
}

func (f *ledgerFixture) invitePayer(t testing.TB, budget credit.Micros) credit.Payer {
	m, err := f.invites.Mint(context.Background(), budget, 14)
	require.NoError(t, err)
	return credit.Payer{Kind: credit.PayInvite, InviteID: m.ID, PerChat: credit.InvitePerChat, DailyCap: 1000 * credit.MicrosPerUSD}
}

func (f *ledgerFixture) account(t testing.TB, id string) credit.Account {
	a, err := f.store.Account(context.Background(), id)
	require.NoError(t, err)
	return a
}

// TestConcurrentReservationsNeverOverspend: 50 callers share one $0.05 invite,
// each reserving and settling until refused. The holds are counted in the same
// locked transaction and a hold must fit in what is left, so the invite never
// passes its budget while no call costs more than its worst case.
func TestConcurrentReservationsNeverOverspend(t *testing.T) {
	f := newLedgerFixture(t)
	const budget = 50_000 // $0.05
	const worst = 4_000   // $0.004 a call at worst
	payer := f.invitePayer(t, budget)
	ctx := t.Context()
	var admitted, refused atomic.Int64
	var inFlight, maxInFlight atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 50 {
		wg.Go(func() {
			<-start
			for call := 0; ; call++ {
				hold, err := f.ledger.Reserve(ctx, payer, fmt.Sprintf("run_%d", i), "proc_test", worst)
				if err != nil {
					assert.True(t, errs.Is(err, errs.BudgetExhausted), "refusal: %v", err)
					refused.Add(1)
					return
				}
				admitted.Add(1)
				n := inFlight.Add(1)
				for m := maxInFlight.Load(); n > m && !maxInFlight.CompareAndSwap(m, n); m = maxInFlight.Load() {
				}
				actual := credit.Micros(worst/2 + (i*131+call*17)%(worst/2+1)) // between half and all of the worst case
				inFlight.Add(-1)
				require.NoError(t, f.ledger.Settle(ctx, hold, actual))
			}
		})
	}
	close(start)
	wg.Wait()

	inv := f.account(t, credit.InviteAccount(payer.InviteID))
	assert.EqualValues(t, 50, refused.Load(), "every caller ends refused")
	assert.Zero(t, inv.Held, "nothing is left held")
	// Used up but for what the calls in flight at the last refusals gave back
	// when they settled below their worst case.
	assert.GreaterOrEqual(t, int64(inv.Spent), int64(budget)-(maxInFlight.Load()+1)*worst, "the budget is used up")
	assert.LessOrEqual(t, int64(inv.Spent), int64(budget), "never past the budget: every hold fitted in what was left")
	// The bound the contract asks for: past the budget by at most the calls in flight…
	assert.LessOrEqual(t, int64(inv.Spent), int64(budget)+maxInFlight.Load()*worst)
	// …and, since holds count, by at most one call's worst case.
	assert.LessOrEqual(t, int64(inv.Spent), int64(budget+worst))
	daily := f.account(t, credit.DailyAccount(time.Now()))
	assert.Equal(t, inv.Spent, daily.Spent, "the daily cap counts every invite call too")
	assert.Zero(t, daily.Held)

	var entries, sum int64
	require.NoError(t, f.db.Pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(amount_micros),0) FROM credit_entries WHERE account_id = $1`,
		credit.InviteAccount(payer.InviteID)).Scan(&entries, &sum))
	assert.Equal(t, admitted.Load(), entries, "one charge per settled call")
	assert.EqualValues(t, inv.Spent, sum, "the entries add up to what the account says it spent")
}

func TestReserveRefusals(t *testing.T) {
	f := newLedgerFixture(t)
	ctx := t.Context()

	t.Run("a spent invite", func(t *testing.T) {
		payer := f.invitePayer(t, 10_000)
		_, err := f.ledger.Reserve(ctx, payer, "run_a", "p", 20_000)
		assert.True(t, errs.Is(err, errs.BudgetExhausted), "a call whose worst case is more than what is left is refused before it is made: %v", err)
		h, err := f.ledger.Reserve(ctx, payer, "run_a", "p", 10_000)
		require.NoError(t, err, "the first call goes ahead: its worst case fits")
		require.NoError(t, f.ledger.Settle(ctx, h, 15_000))
		_, err = f.ledger.Reserve(ctx, payer, "run_b", "p", 1)
		assert.True(t, errs.Is(err, errs.BudgetExhausted), "%v", err)
	})
	t.Run("holds count before they settle", func(t *testing.T) {
		payer := f.invitePayer(t, 10_000)
		_, err := f.ledger.Reserve(ctx, payer, "run_a", "p", 10_000)
		require.NoError(t, err)
		_, err = f.ledger.Reserve(ctx, payer, "run_b", "p", 1)
		assert.True(t, errs.Is(err, errs.BudgetExhausted), "%v", err)
	})
	t.Run("a revoked invite mid-chat", func(t *testing.T) {
		payer := f.invitePayer(t, 1_000_000)
		_, err := f.invites.Revoke(ctx, payer.InviteID)
		require.NoError(t, err)
		_, err = f.ledger.Reserve(ctx, payer, "run_a", "p", 1)
		assert.True(t, errs.Is(err, errs.BudgetExhausted), "%v", err)
	})
	t.Run("the chat's own cap", func(t *testing.T) {
		payer := f.invitePayer(t, 1_000_000)
		h, err := f.ledger.Reserve(ctx, payer, "run_cap", "p", 40_000)
		require.NoError(t, err)
		require.NoError(t, f.ledger.Settle(ctx, h, 40_000))
		_, err = f.ledger.Reserve(ctx, payer, "run_cap", "p", 10_001)
		assert.True(t, errs.Is(err, errs.BudgetExhausted), "$0.04 of $0.05 used: a call that could cost more than the $0.01 left is refused: %v", err)
		h, err = f.ledger.Reserve(ctx, payer, "run_cap", "p", 10_000)
		require.NoError(t, err, "$0.04 of $0.05 used: one more call")
		require.NoError(t, f.ledger.Settle(ctx, h, 10_000))
		_, err = f.ledger.Reserve(ctx, payer, "run_cap", "p", 1)
		assert.True(t, errs.Is(err, errs.BudgetExhausted), "%v", err)
		_, err = f.ledger.Reserve(ctx, payer, "run_other", "p", 1)
		assert.NoError(t, err, "another chat on the same invite goes on")
	})
	t.Run("a follow-up chat on the same run has its own cap", func(t *testing.T) {
		payer := f.invitePayer(t, 1_000_000)
		payer.Chat = "run_followed@0"
		h, err := f.ledger.Reserve(ctx, payer, "run_followed", "p", 40_000)
		require.NoError(t, err)
		require.NoError(t, f.ledger.Settle(ctx, h, 50_000))
		_, err = f.ledger.Reserve(ctx, payer, "run_followed", "p", 1)
		require.True(t, errs.Is(err, errs.BudgetExhausted), "the first chat has spent its $0.05: %v", err)

		payer.Chat = "run_followed@9" // the next POST /api/v1/agent/chat with run_id
		h, err = f.ledger.Reserve(ctx, payer, "run_followed", "p", 40_000)
		require.NoError(t, err, "the second chat gets its own $0.05")
		assert.Equal(t, "run_followed", h.RunID)
		require.NoError(t, f.ledger.Settle(ctx, h, 40_000))
		h, err = f.ledger.Reserve(ctx, payer, "run_followed", "p", 10_000)
		require.NoError(t, err, "$0.04 of its $0.05 used: one more call")
		require.NoError(t, f.ledger.Settle(ctx, h, 10_000))
		_, err = f.ledger.Reserve(ctx, payer, "run_followed", "p", 1)
		assert.True(t, errs.Is(err, errs.BudgetExhausted), "the second chat has spent its own $0.05: %v", err)
		inv := f.account(t, credit.InviteAccount(payer.InviteID))
		assert.EqualValues(t, 100_000, inv.Spent, "the invite paid both chats")
	})
	t.Run("the daily cap", func(t *testing.T) {
		payer := f.invitePayer(t, 1_000_000)
		payer.DailyCap = 0
		_, err := f.ledger.Reserve(ctx, payer, "run_a", "p", 1)
		e, ok := errs.As(err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, errs.BudgetExhausted, e.Code)
		assert.Positive(t, e.RetryAfterS, "until midnight UTC")
	})
	t.Run("a person with no credit", func(t *testing.T) {
		_, err := f.ledger.Reserve(ctx, credit.Payer{Kind: credit.PayPerson, PersonID: "prs_00000000000000000000000000000000"}, "run_a", "p", 1)
		assert.True(t, errs.Is(err, errs.PaymentRequired), "%v", err)
	})
	t.Run("nothing changes on a refusal", func(t *testing.T) {
		var holds int
		require.NoError(t, f.db.Pool.QueryRow(ctx, `SELECT count(*) FROM credit_holds WHERE run_id = 'run_b' AND status = 'held'`).Scan(&holds))
		assert.Zero(t, holds)
	})
}

func TestSettleAndReleaseAreOnce(t *testing.T) {
	f := newLedgerFixture(t)
	ctx := t.Context()
	payer := f.invitePayer(t, 1_000_000)
	h, err := f.ledger.Reserve(ctx, payer, "run_a", "p", 5_000)
	require.NoError(t, err)
	assert.EqualValues(t, 5_000, f.account(t, credit.InviteAccount(payer.InviteID)).Held)
	require.NoError(t, f.ledger.Settle(ctx, h, 3_000))
	require.NoError(t, f.ledger.Settle(ctx, h, 3_000), "settling twice changes nothing")
	require.NoError(t, f.ledger.Release(ctx, h), "a deferred release after settling changes nothing")
	inv := f.account(t, credit.InviteAccount(payer.InviteID))
	assert.EqualValues(t, 3_000, inv.Spent)
	assert.Zero(t, inv.Held)

	h, err = f.ledger.Reserve(ctx, payer, "run_a", "p", 5_000)
	require.NoError(t, err)
	require.NoError(t, f.ledger.Release(ctx, h))
	require.NoError(t, f.ledger.Settle(ctx, h, 5_000), "a released hold is never charged")
	inv = f.account(t, credit.InviteAccount(payer.InviteID))
	assert.EqualValues(t, 3_000, inv.Spent)
	assert.Zero(t, inv.Held)
	assert.Error(t, f.ledger.Settle(ctx, h, -1), "a charge is never negative")
}

func TestConstraintsHoldAgainstABug(t *testing.T) {
	f := newLedgerFixture(t)
	ctx := t.Context()
	payer := f.invitePayer(t, 1_000_000)
	acct := credit.InviteAccount(payer.InviteID)
	for name, sql := range map[string]string{
		"a negative charge":          `INSERT INTO credit_entries (account_id, kind, amount_micros) VALUES ($1, 'call', -1)`,
		"a hold on no account":       `INSERT INTO credit_holds (reservation_id, account_id, run_id, process_id, payer, amount_micros) VALUES ('h', 'invite:nope', 'r', 'p', '{}', 1)`,
		"a hold of nothing":          `INSERT INTO credit_holds (reservation_id, account_id, run_id, process_id, payer, amount_micros) VALUES ('h', $1, 'r', 'p', '{}', 0)`,
		"spending below zero":        `UPDATE credit_accounts SET spent_micros = -1 WHERE id = $1`,
		"holding below zero":         `UPDATE credit_accounts SET held_micros = held_micros - 1 WHERE id = $1`,
		"a settled hold with no sum": `INSERT INTO credit_holds (reservation_id, account_id, run_id, process_id, payer, amount_micros, status, closed_at) VALUES ('h', $1, 'r', 'p', '{}', 1, 'settled', now())`,
	} {
		args := []any{}
		if strings.Contains(sql, "$1") {
			args = append(args, acct)
		}
		_, err := f.db.Pool.Exec(ctx, sql, args...)
		assert.Error(t, err, name)
	}
	h, err := f.ledger.Reserve(ctx, payer, "run_a", "p", 5_000)
	require.NoError(t, err)
	_, err = f.db.Pool.Exec(ctx, `INSERT INTO credit_holds (reservation_id, account_id, run_id, process_id, payer, amount_micros) VALUES ($1, $2, 'r', 'p', '{}', 1)`, h.ID, acct)
	assert.Error(t, err, "a reservation holds once on an account")
}

func TestReleaseOrphanHolds(t *testing.T) {
	f := newLedgerFixture(t)
	ctx := t.Context()
	payer := f.invitePayer(t, 1_000_000)
	_, err := f.db.Pool.Exec(ctx, `INSERT INTO processes (id, hostname, pid, build_id, heartbeat_at) VALUES
('proc_live', 'h', 1, 'dev', now()), ('proc_stale', 'h', 2, 'dev', now() - interval '31 seconds')`)
	require.NoError(t, err)
	for _, p := range []string{"proc_live", "proc_stale", "proc_missing"} {
		_, err := f.ledger.Reserve(ctx, payer, "run_"+p, p, 1_000)
		require.NoError(t, err)
	}
	n, err := f.ledger.ReleaseOrphanHolds(ctx)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "the stale and the missing process's holds")
	var live []string
	rows, err := f.db.Pool.Query(ctx, `SELECT DISTINCT process_id FROM credit_holds WHERE status = 'held'`)
	require.NoError(t, err)
	for rows.Next() {
		var p string
		require.NoError(t, rows.Scan(&p))
		live = append(live, p)
	}
	assert.Equal(t, []string{"proc_live"}, live, "a live process keeps its holds")
	assert.EqualValues(t, 1_000, f.account(t, credit.InviteAccount(payer.InviteID)).Held)
	assert.Zero(t, f.account(t, credit.InviteAccount(payer.InviteID)).Spent, "released holds are not counted as spent")
}

// A hold of a live process held past any chat's time (its process gave up
// releasing it) goes back in a sweep; a fresh one of the same process stays.
func TestReleaseStuckHolds(t *testing.T) {
	f := newLedgerFixture(t)
	ctx := t.Context()
	payer := f.invitePayer(t, 1_000_000)
	_, err := f.db.Pool.Exec(ctx, `INSERT INTO processes (id, hostname, pid, build_id, heartbeat_at) VALUES ('proc_live', 'h', 1, 'dev', now())`)
	require.NoError(t, err)
	stuck, err := f.ledger.Reserve(ctx, payer, "run_stuck", "proc_live", 2_000)
	require.NoError(t, err)
	_, err = f.ledger.Reserve(ctx, payer, "run_going", "proc_live", 1_000)
	require.NoError(t, err)
	_, err = f.db.Pool.Exec(ctx, `UPDATE credit_holds SET created_at = created_at - interval '10 minutes' WHERE reservation_id = $1`, stuck.ID)
	require.NoError(t, err)
	n, err := f.ledger.ReleaseOrphanHolds(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "a live process's holds are no orphans")
	n, err = f.ledger.ReleaseStuckHolds(ctx, 6*time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "the hold held for 10 minutes")
	assert.EqualValues(t, 1_000, f.account(t, credit.InviteAccount(payer.InviteID)).Held, "the fresh hold stays")
	n, err = f.ledger.ReleaseStuckHolds(ctx, 6*time.Minute)
	require.NoError(t, err)
	assert.Zero(t, n, "a second sweep finds nothing")
}

// A process whose lease lapsed while its model call went on finds its hold
// released by a peer's sweep; its late settle still charges what the call
// cost, once, and leaves nothing held.
func TestASettleAfterTheSweepStillCharges(t *testing.T) {
	f := newLedgerFixture(t)
	ctx := t.Context()
	payer := f.invitePayer(t, 1_000_000)
	acct := credit.InviteAccount(payer.InviteID)
	h, err := f.ledger.Reserve(ctx, payer, "run_a", "proc_lapsed", 5_000)
	require.NoError(t, err)
	n, err := f.ledger.ReleaseOrphanHolds(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the lapsed process's hold is swept")
	assert.Zero(t, f.account(t, acct).Held)

	require.NoError(t, f.ledger.Settle(ctx, h, 3_000))
	inv := f.account(t, acct)
	assert.EqualValues(t, 3_000, inv.Spent, "the call's cost is on the ledger")
	assert.Zero(t, inv.Held, "nothing is held twice")
	var entries int64
	require.NoError(t, f.db.Pool.QueryRow(ctx, `SELECT coalesce(sum(amount_micros), 0) FROM credit_entries WHERE account_id = $1`, acct).Scan(&entries))
	assert.EqualValues(t, 3_000, entries)

	require.NoError(t, f.ledger.Settle(ctx, h, 3_000), "settling twice changes nothing")
	assert.EqualValues(t, 3_000, f.account(t, acct).Spent)
	require.NoError(t, f.ledger.Release(ctx, h), "the job's deferred release changes nothing")
	assert.EqualValues(t, 3_000, f.account(t, acct).Spent)
	assert.Zero(t, f.account(t, acct).Held)
}

// The sweep releases a reservation whole or not at all: one with a line
// another transaction holds (a settle under way) is left for the next sweep,
// and the accounts' held sums stay true. Many at once go in batches.
func TestTheSweepReleasesReservationsWholeInBatches(t *testing.T) {
	f := newLedgerFixture(t)
	ctx := t.Context()
	payer := f.invitePayer(t, 1_000_000_000)
	acct := credit.InviteAccount(payer.InviteID)
	var holds []credit.Hold
	for i := range 1200 {
		h, err := f.ledger.Reserve(ctx, payer, fmt.Sprintf("run_%d", i), "proc_gone", 1_000)
		require.NoError(t, err)
		holds = append(holds, h)
	}
	var lines int
	require.NoError(t, f.db.Pool.QueryRow(ctx, `SELECT count(*) FROM credit_holds WHERE reservation_id = $1`, holds[0].ID).Scan(&lines))
	require.Equal(t, 2, lines, "the invite's line and the daily cap's")

	tx, err := f.db.Pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(context.Background()) }()
	_, err = tx.Exec(ctx, `SELECT 1 FROM credit_holds WHERE reservation_id = $1 AND account_id = $2 FOR UPDATE`, holds[0].ID, acct)
	require.NoError(t, err)

	n, err := f.ledger.ReleaseOrphanHolds(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1199, n, "all but the one whose line is held elsewhere")
	var statuses []string
	rows, err := f.db.Pool.Query(ctx, `SELECT status FROM credit_holds WHERE reservation_id = $1 ORDER BY account_id`, holds[0].ID)
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		statuses = append(statuses, s)
	}
	assert.Equal(t, []string{"held", "held"}, statuses, "never half released")
	assert.EqualValues(t, 1_000, f.account(t, acct).Held)

	require.NoError(t, tx.Rollback(ctx))
	n, err = f.ledger.ReleaseOrphanHolds(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Zero(t, f.account(t, acct).Held)
	var swept int
	require.NoError(t, f.db.Pool.QueryRow(ctx, `SELECT count(*) FROM credit_holds WHERE swept_at IS NOT NULL AND status = 'released'`).Scan(&swept))
	assert.Equal(t, 2400, swept)
}
