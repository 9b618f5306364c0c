package moneyapp_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/invites"
	"github.com/petal-near/petal/ports"
)

// The ledger's rules over memory.Ledger, which passes the ledger's contract
// suite as PostgreSQL's store does; the arithmetic under test is the app's
// and the domain's (what a hold covers, what settling charges).

var now = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

type fixedClock struct{ at time.Time }

func (c fixedClock) Now() time.Time { return c.at }

// tips is the one PeopleStore call the ledger makes: a person's tip.
type tips struct {
	ports.PeopleStore
	percent map[string]int
}

func (t tips) TipPercent(_ context.Context, person string) (*int, error) {
	if p, ok := t.percent[person]; ok {
		return &p, nil
	}
	return nil, nil
}

type money struct {
	ledger *moneyapp.Ledger
	store  *memory.Ledger
	leases *memory.Leases
}

func newMoney(t *testing.T, env map[string]string, tip map[string]int) money {
	t.Helper()
	cfg, err := load(env)
	require.NoError(t, err)
	clock := fixedClock{now}
	leases := memory.NewLeases(clock)
	store := memory.NewLedger(clock, leases)
	return money{ledger: moneyapp.NewLedger(cfg, store, tips{percent: tip}, clock, rand.Reader, nil), store: store, leases: leases}
}

// fund puts usd of credit on person's account, as a NEAR top-up does.
func (m money) fund(t *testing.T, person string, usd credit.Micros) {
	t.Helper()
	added, err := m.store.TopUp(t.Context(), credit.TopUp{TxHash: "tx_" + person + fmt.Sprint(usd), Network: "mainnet", PersonID: person, Added: usd})
	require.NoError(t, err)
	require.True(t, added)
}

func (m money) account(t *testing.T, id string) credit.Account {
	t.Helper()
	a, err := m.ledger.Account(t.Context(), id)
	require.NoError(t, err)
	return a
}

func personPayer(p string) credit.Payer { return credit.Payer{Kind: credit.PayPerson, PersonID: p} }

// On a person's own credit a hold covers the bill, base fee A on it and the
// tip; settling charges each on what the call cost, as its own entry, and
// gives the rest of the hold back.
func TestAPersonsHoldCoversFeeAndTipAndSettlingChargesEachOnTheCost(t *testing.T) {
	m := newMoney(t, map[string]string{"PETAL_FEE_CALL_PERCENT": "10", "PETAL_FEE_PER_TURN_USD": "0.001"}, map[string]int{"prs_a": 5})
	m.fund(t, "prs_a", credit.MicrosPerUSD)
	ctx := t.Context()
	hold, err := m.ledger.ReserveCall(ctx, personPayer("prs_a"), "run_1", "proc_1", 100_000, nil)
	require.NoError(t, err)
	// 100_000 bill + 10% A + 5% tip + the turn's 1_000 (C).
	assert.Equal(t, credit.Micros(116_000), hold.Total())
	acct := credit.PersonAccount("prs_a")
	assert.Equal(t, credit.Account{ID: acct, Kind: credit.KindPerson, Limit: credit.MicrosPerUSD, Held: 116_000}, m.account(t, acct))

	require.NoError(t, m.ledger.SettleCall(ctx, hold, 40_000, credit.Usage{InferenceID: "inf_1", Model: "m"}, credit.CallContext{EndsTurn: true}))
	a := m.account(t, acct)
	assert.Equal(t, credit.Micros(0), a.Held)
	assert.Equal(t, credit.Micros(40_000+4_000+1_000+2_000), a.Spent)
	var kinds []string
	for _, e := range m.store.Entries(acct) {
		kinds = append(kinds, fmt.Sprintf("%s %d", e.Kind, e.Amount))
	}
	assert.Equal(t, []string{"top_up 1000000", "call 40000", "fee 4000", "fee 1000", "tip 2000"}, kinds)
	usage, err := m.store.Usage(ctx, acct, 10)
	require.NoError(t, err)
	require.Len(t, usage, 1)
	assert.Equal(t, credit.Micros(40_000), usage[0].List)
	assert.Equal(t, credit.Micros(47_000), usage[0].Charged, "the usage record says everything the call put on the credit")

	// Settled once: settling or releasing it again changes nothing.
	require.NoError(t, m.ledger.Settle(ctx, hold, 90_000))
	require.NoError(t, m.ledger.Release(ctx, hold))
	assert.Equal(t, a, m.account(t, acct))
	require.Error(t, m.ledger.Settle(ctx, hold, -1), "a charge is never negative")
}

// An invite's hold is the bill alone (no fee, no tip), on the invite and on
// the day's cap both.
func TestAnInviteHoldsTheBillAloneOnTheInviteAndTheDay(t *testing.T) {
	m := newMoney(t, map[string]string{"PETAL_FEE_CALL_PERCENT": "10"}, nil)
	inv := mint(t, m.store, credit.MicrosPerUSD)
	payer := credit.Payer{Kind: credit.PayInvite, InviteID: inv.ID, DailyCap: 10 * credit.MicrosPerUSD}
	hold, err := m.ledger.ReserveCall(t.Context(), payer, "run_1", "proc_1", 100_000, []string{"render_flower"})
	require.NoError(t, err)
	assert.Equal(t, credit.Micros(100_000), hold.Total())
	require.NoError(t, m.ledger.Settle(t.Context(), hold, 30_000))
	for _, id := range []string{credit.InviteAccount(inv.ID), credit.DailyAccount(now)} {
		a := m.account(t, id)
		assert.Equal(t, credit.Micros(30_000), a.Spent, id)
		assert.Zero(t, a.Held, id)
	}
}

func mint(t *testing.T, s ports.InviteStore, budget credit.Micros) invites.Invite {
	t.Helper()
	_, inv, err := invites.Mint(rand.Reader, budget, 14, now)
	require.NoError(t, err)
	require.NoError(t, s.CreateInvite(t.Context(), inv))
	return inv
}

// Every refusal names its kind (payment_required for a person's credit,
// budget_exhausted for an invite, the day or a chat's cap) and holds nothing.
func TestRefusedHoldsSayWhyAndChangeNothing(t *testing.T) {
	m := newMoney(t, nil, nil)
	ctx := t.Context()
	_, err := m.ledger.ReserveCall(ctx, personPayer("prs_none"), "run_1", "proc_1", 10_000, nil)
	assert.Equal(t, errs.PaymentRequired, errs.CodeOf(err), "%v", err)
	_, err = m.ledger.Account(ctx, credit.PersonAccount("prs_none"))
	assert.True(t, errs.Is(err, errs.NotFound), "no account is made by a refusal: %v", err)

	m.fund(t, "prs_low", 5_000)
	before := m.account(t, credit.PersonAccount("prs_low"))
	_, err = m.ledger.ReserveCall(ctx, personPayer("prs_low"), "run_1", "proc_1", 10_000, nil)
	assert.Equal(t, errs.PaymentRequired, errs.CodeOf(err), "%v", err)
	assert.Contains(t, err.Error(), "left of your credit")

	inv := mint(t, m.store, 10_000)
	invite := credit.Payer{Kind: credit.PayInvite, InviteID: inv.ID, DailyCap: credit.MicrosPerUSD}
	_, err = m.ledger.ReserveCall(ctx, invite, "run_2", "proc_1", 20_000, nil)
	assert.Equal(t, errs.BudgetExhausted, errs.CodeOf(err), "%v", err)
	_, err = m.store.RevokeInvite(ctx, inv.ID, now.Add(-time.Minute))
	require.NoError(t, err)
	_, err = m.ledger.ReserveCall(ctx, invite, "run_2", "proc_1", 1_000, nil)
	assert.Equal(t, errs.BudgetExhausted, errs.CodeOf(err), "a revoked invite pays for nothing: %v", err)
	assert.Contains(t, err.Error(), "ended")

	open := credit.Payer{Kind: credit.PayOpen, DailyCap: 50_000}
	_, err = m.ledger.ReserveCall(ctx, open, "run_3", "proc_1", 60_000, nil)
	assert.Equal(t, errs.BudgetExhausted, errs.CodeOf(err), "%v", err)

	assert.Equal(t, before, m.account(t, credit.PersonAccount("prs_low")))
	assert.Zero(t, m.account(t, credit.InviteAccount(inv.ID)).Held)
	assert.Zero(t, m.account(t, credit.DailyAccount(now)).Held)
	assert.Zero(t, m.store.Held(), "no refusal left a hold")
}

// A chat's cap counts what the chat already took (held or charged), and a
// chat bound to a quote stops at it, saying so.
func TestAChatStopsAtItsCapAndAtItsQuote(t *testing.T) {
	m := newMoney(t, nil, nil)
	m.fund(t, "prs_c", credit.MicrosPerUSD)
	ctx := t.Context()
	payer := personPayer("prs_c")
	payer.PerChat, payer.Chat = 50_000, "chat_1"
	first, err := m.ledger.ReserveCall(ctx, payer, "run_1", "proc_1", 30_000, nil)
	require.NoError(t, err)
	_, err = m.ledger.ReserveCall(ctx, payer, "run_1", "proc_1", 30_000, nil)
	assert.Equal(t, errs.BudgetExhausted, errs.CodeOf(err), "30k held of the chat's 50k: %v", err)
	require.NoError(t, m.ledger.Settle(ctx, first, 10_000))
	second, err := m.ledger.ReserveCall(ctx, payer, "run_1", "proc_1", 30_000, nil)
	require.NoError(t, err, "settled at 10k, the chat has 40k left")
	require.NoError(t, m.ledger.Release(ctx, second))

	other := personPayer("prs_c")
	other.PerChat, other.Chat = 50_000, "chat_2"
	_, err = m.ledger.ReserveCall(ctx, other, "run_2", "proc_1", 45_000, nil)
	require.NoError(t, err, "another chat has its own cap")

	quoted := personPayer("prs_c").BindQuote("qt_1", 20_000)
	quoted.Chat = "chat_3"
	_, err = m.ledger.ReserveCall(ctx, quoted, "run_3", "proc_1", 25_000, nil)
	assert.Equal(t, errs.BudgetExhausted, errs.CodeOf(err), "%v", err)
	assert.Contains(t, err.Error(), "quote qt_1")
}

// Calls racing for one person's credit never spend past it, and every hold
// ends settled: a refused call took nothing.
func TestRacingCallsNeverSpendPastAPersonsCredit(t *testing.T) {
	m := newMoney(t, map[string]string{"PETAL_FEE_CALL_PERCENT": "10"}, nil)
	const budget = 500_000
	m.fund(t, "prs_r", budget)
	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := 0
	for c := range 16 {
		wg.Go(func() {
			for i := range 10 {
				hold, err := m.ledger.ReserveCall(context.Background(), personPayer("prs_r"), fmt.Sprintf("run_%d_%d", c, i), "proc_1", 20_000, nil)
				if err != nil {
					assert.Equal(t, errs.PaymentRequired, errs.CodeOf(err), "%v", err)
					mu.Lock()
					refused++
					mu.Unlock()
					continue
				}
				assert.NoError(t, m.ledger.Settle(context.Background(), hold, 20_000))
			}
		})
	}
	wg.Wait()
	a := m.account(t, credit.PersonAccount("prs_r"))
	assert.Zero(t, a.Held)
	assert.LessOrEqual(t, a.Spent, credit.Micros(budget))
	// Each call costs 22_000 with its fee: 22 fit in 500_000, and no more.
	assert.Equal(t, credit.Micros(22*22_000), a.Spent)
	assert.Equal(t, 160-22, refused)
}

// The free allowance (E): a person's first dollars of NEAR AI's bill carry
// no base fee; the call that crosses it pays A on the part past it only.
func TestTheFreeAllowanceSparesTheFirstBillFromTheFee(t *testing.T) {
	m := newMoney(t, map[string]string{"PETAL_FEE_CALL_PERCENT": "10", "PETAL_FEE_FREE_ALLOWANCE_USD": "0.05"}, nil)
	m.fund(t, "prs_e", credit.MicrosPerUSD)
	acct := credit.PersonAccount("prs_e")
	for i, bill := range []credit.Micros{30_000, 40_000, 10_000} {
		hold, err := m.ledger.ReserveCall(t.Context(), personPayer("prs_e"), fmt.Sprint("run_", i), "proc_1", bill, nil)
		require.NoError(t, err)
		require.NoError(t, m.ledger.Settle(t.Context(), hold, bill))
	}
	// 30k free; 40k of which 20k past the allowance (fee 2k); 10k all past (fee 1k).
	assert.Equal(t, credit.Micros(80_000+2_000+1_000), m.account(t, acct).Spent)
}

// A start gives back the holds of processes that are gone, not of live
// ones; a call of a gone process that settles late is still charged, once.
func TestOrphanHoldsGoBackAndALateSettleIsStillCharged(t *testing.T) {
	m := newMoney(t, nil, nil)
	m.fund(t, "prs_o", credit.MicrosPerUSD)
	ctx := t.Context()
	require.NoError(t, m.leases.Register(ctx, ports.Process{ID: "proc_live"}))
	live, err := m.ledger.ReserveCall(ctx, personPayer("prs_o"), "run_1", "proc_live", 10_000, nil)
	require.NoError(t, err)
	gone, err := m.ledger.ReserveCall(ctx, personPayer("prs_o"), "run_2", "proc_gone", 20_000, nil)
	require.NoError(t, err)
	n, err := m.ledger.ReleaseOrphanHolds(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	acct := credit.PersonAccount("prs_o")
	assert.Equal(t, credit.Micros(10_000), m.account(t, acct).Held, "the live process keeps its hold")

	require.NoError(t, m.ledger.Settle(ctx, gone, 15_000))
	require.NoError(t, m.ledger.Settle(ctx, gone, 15_000))
	require.NoError(t, m.ledger.Settle(ctx, live, 5_000))
	a := m.account(t, acct)
	assert.Zero(t, a.Held)
	assert.Equal(t, credit.Micros(20_000), a.Spent)
}
