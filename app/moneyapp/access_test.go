package moneyapp_test

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
)

// Who pays ("Who pays", docs): the gate over memory.Ledger and
// memory.Sessions, each passing its store's contract suite.
type gate struct {
	access   *moneyapp.Access
	ledger   *memory.Ledger
	sessions *memory.Sessions
	person   string
}

func newGate(t *testing.T, env map[string]string) gate {
	t.Helper()
	cfg, err := load(env)
	require.NoError(t, err)
	clock := fixedClock{now}
	ledger := memory.NewLedger(clock, memory.NewLeases(clock))
	sessions := memory.NewSessions()
	person, err := people.NewPersonID(rand.Reader)
	require.NoError(t, err)
	for id, subject := range map[string]string{"ses_person": person, "ses_anon": "anon_1"} {
		require.NoError(t, sessions.CreateSession(t.Context(), people.Session{ID: id, Subject: subject, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}))
	}
	return gate{access: moneyapp.NewAccess(cfg, sessions, ledger, ledger, clock), ledger: ledger, sessions: sessions, person: person}
}

var (
	personCaller = toolkit.Caller{Session: "ses_person"}
	anonCaller   = toolkit.Caller{Session: "ses_anon"}
)

// Gated, nobody pays for a chat without credit or an invite: a visitor needs
// an invite (invite_required), a signed-in person credit (payment_required).
func TestTheGateRefusesWhoHasNeitherCreditNorInvite(t *testing.T) {
	g := newGate(t, nil)
	_, err := g.access.Gate(t.Context(), anonCaller)
	assert.Equal(t, errs.InviteRequired, errs.CodeOf(err), "%v", err)
	_, err = g.access.Gate(t.Context(), toolkit.Caller{})
	assert.Equal(t, errs.InviteRequired, errs.CodeOf(err), "%v", err)
	_, err = g.access.Gate(t.Context(), personCaller)
	assert.Equal(t, errs.PaymentRequired, errs.CodeOf(err), "%v", err)
}

// A person's own credit pays first, capped per chat; too little of it for
// the first call is payment_required, never the site's money.
func TestAPersonsCreditPaysFirstAndOnlyWhenTheFirstCallFits(t *testing.T) {
	g := newGate(t, map[string]string{"PETAL_PERSON_USD_PER_CHAT": "0.20"})
	ctx := t.Context()
	_, err := g.ledger.TopUp(ctx, credit.TopUp{TxHash: "tx_1", PersonID: g.person, Added: 100_000})
	require.NoError(t, err)
	p, err := g.access.GateFor(ctx, personCaller, 50_000)
	require.NoError(t, err)
	assert.Equal(t, credit.Payer{Kind: credit.PayPerson, PersonID: g.person, PerChat: 200_000}, p)
	_, err = g.access.GateFor(ctx, personCaller, 150_000)
	assert.Equal(t, errs.PaymentRequired, errs.CodeOf(err), "more than the credit left: %v", err)
}

// An invite in the session pays with the daily cap, its chats capped at
// credit.InvitePerChat; a revoked one is as none (invite_required), a spent
// one budget_exhausted; the daily cap spent stops invites and open servers.
func TestAnInvitePaysUntilItEndsAndTheDayCapsIt(t *testing.T) {
	g := newGate(t, map[string]string{"PETAL_LLM_DAILY_USD": "0.10"})
	ctx := t.Context()
	inv := mint(t, g.ledger, credit.MicrosPerUSD)
	require.NoError(t, g.sessions.SetSessionInvite(ctx, "ses_anon", inv.ID))
	p, err := g.access.Gate(ctx, anonCaller)
	require.NoError(t, err)
	assert.Equal(t, credit.Payer{Kind: credit.PayInvite, InviteID: inv.ID, PerChat: credit.InvitePerChat, DailyCap: 100_000}, p)
	_, err = g.access.GateFor(ctx, anonCaller, 120_000)
	assert.Equal(t, errs.BudgetExhausted, errs.CodeOf(err), "past the day's cap: %v", err)

	_, err = g.ledger.RevokeInvite(ctx, inv.ID, now.Add(-time.Second))
	require.NoError(t, err)
	_, err = g.access.Gate(ctx, anonCaller)
	assert.Equal(t, errs.InviteRequired, errs.CodeOf(err), "a revoked invite is as none: %v", err)

	spent := mint(t, g.ledger, 10_000)
	require.NoError(t, g.sessions.SetSessionInvite(ctx, "ses_anon", spent.ID))
	ledger := moneyapp.NewLedger(mustLoad(t), g.ledger, nil, fixedClock{now}, rand.Reader, nil)
	payer := credit.Payer{Kind: credit.PayInvite, InviteID: spent.ID, DailyCap: 100_000}
	hold, err := ledger.ReserveCall(ctx, payer, "run_y", "proc_1", 10_000, nil)
	require.NoError(t, err)
	require.NoError(t, ledger.Settle(ctx, hold, 10_000))
	_, err = g.access.Gate(ctx, anonCaller)
	assert.Equal(t, errs.BudgetExhausted, errs.CodeOf(err), "a spent invite: %v", err)
}

// An open server pays from the daily cap alone, until it is spent.
func TestAnOpenServerPaysFromTheDayAlone(t *testing.T) {
	g := newGate(t, map[string]string{"PETAL_AGENT_ACCESS": "open", "PETAL_LLM_DAILY_USD": "0.01"})
	ctx := t.Context()
	p, err := g.access.Gate(ctx, toolkit.Caller{})
	require.NoError(t, err)
	assert.Equal(t, credit.Payer{Kind: credit.PayOpen, DailyCap: 10_000}, p)
	ledger := moneyapp.NewLedger(mustLoad(t), g.ledger, nil, fixedClock{now}, rand.Reader, nil)
	hold, err := ledger.ReserveCall(ctx, p, "run_1", "proc_1", 10_000, nil)
	require.NoError(t, err)
	require.NoError(t, ledger.Settle(ctx, hold, 10_000))
	_, err = g.access.Gate(ctx, toolkit.Caller{})
	assert.Equal(t, errs.BudgetExhausted, errs.CodeOf(err), "%v", err)
}
