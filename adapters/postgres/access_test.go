package postgres_test

import (
	"crypto/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
)

func TestGateFollowsWhoPays(t *testing.T) {
	f := newLedgerFixture(t)
	ctx := t.Context()
	sessions := postgres.NewSessionRepository(f.db.DB)
	cfg := config.Config{AgentAccess: "gated", LLMDailyCap: 3 * credit.MicrosPerUSD, PersonPerChat: 500_000}
	gate := func(cfg config.Config) *moneyapp.Access {
		return moneyapp.NewAccess(cfg, sessions, postgres.NewInviteRepository(f.db.DB), f.store, memory.SystemClock{})
	}
	open := func(subject, inviteID string) toolkit.Caller {
		if people.IsPerson(subject) {
			_, err := f.db.Pool.Exec(ctx, `INSERT INTO people (id) VALUES ($1) ON CONFLICT DO NOTHING`, subject)
			require.NoError(t, err)
		}
		_, s, err := people.NewSession(rand.Reader, subject, time.Now())
		require.NoError(t, err)
		s.InviteID = inviteID
		require.NoError(t, sessions.CreateSession(ctx, s))
		return toolkit.Caller{Door: toolkit.DoorHTTP, Subject: subject, Session: s.ID}
	}
	anon := func() string { s, _ := people.NewAnonymousHandle(rand.Reader); return s }
	person := func() string { s, _ := people.NewPersonID(rand.Reader); return s }
	fund := func(personID string, usd credit.Micros) {
		_, err := f.db.Pool.Exec(ctx, `INSERT INTO credit_accounts (id, kind, limit_micros) VALUES ($1, 'person', $2)`, credit.PersonAccount(personID), int64(usd))
		require.NoError(t, err)
	}
	code := func(err error) errs.Code {
		if err == nil {
			return ""
		}
		return errs.CodeOf(err)
	}

	t.Run("no session, gated: invite_required with /connect", func(t *testing.T) {
		_, err := gate(cfg).Gate(ctx, toolkit.Caller{})
		require.Equal(t, errs.InviteRequired, code(err))
		e, _ := errs.As(err)
		assert.Equal(t, "/connect", e.Hint)
	})
	t.Run("anonymous, no invite: invite_required", func(t *testing.T) {
		_, err := gate(cfg).Gate(ctx, open(anon(), ""))
		assert.Equal(t, errs.InviteRequired, code(err))
	})
	t.Run("signed in with neither: payment_required", func(t *testing.T) {
		_, err := gate(cfg).Gate(ctx, open(person(), ""))
		assert.Equal(t, errs.PaymentRequired, code(err))
	})
	t.Run("an active invite pays with the daily cap", func(t *testing.T) {
		inv := f.invitePayer(t, 1_000_000)
		payer, err := gate(cfg).Gate(ctx, open(anon(), inv.InviteID))
		require.NoError(t, err)
		assert.Equal(t, credit.PayInvite, payer.Kind)
		assert.Equal(t, inv.InviteID, payer.InviteID)
		assert.Equal(t, credit.InvitePerChat, payer.PerChat)
		assert.Equal(t, cfg.LLMDailyCap, payer.DailyCap)
	})
	t.Run("a person's credit comes before the invite, capped per chat", func(t *testing.T) {
		inv := f.invitePayer(t, 1_000_000)
		p := person()
		fund(p, 2*credit.MicrosPerUSD)
		payer, err := gate(cfg).Gate(ctx, open(p, inv.InviteID))
		require.NoError(t, err)
		assert.Equal(t, credit.PayPerson, payer.Kind)
		assert.Equal(t, p, payer.PersonID)
		assert.EqualValues(t, 500_000, payer.PerChat)
		assert.Len(t, payer.Accounts(time.Now()), 1, "the daily cap doesn't hold a person's credit")
	})
	t.Run("a person whose credit is spent falls back to the invite", func(t *testing.T) {
		inv := f.invitePayer(t, 1_000_000)
		p := person()
		fund(p, 0)
		payer, err := gate(cfg).Gate(ctx, open(p, inv.InviteID))
		require.NoError(t, err)
		assert.Equal(t, credit.PayInvite, payer.Kind)
		_, err = gate(cfg).Gate(ctx, open(p, ""))
		assert.Equal(t, errs.PaymentRequired, code(err), "and without an invite, 402")
	})
	t.Run("a spent invite: budget_exhausted", func(t *testing.T) {
		inv := f.invitePayer(t, 1_000)
		h, err := f.ledger.Reserve(ctx, inv, "run", "p", 1_000)
		require.NoError(t, err)
		require.NoError(t, f.ledger.Settle(ctx, h, 1_000))
		_, err = gate(cfg).Gate(ctx, open(anon(), inv.InviteID))
		assert.Equal(t, errs.BudgetExhausted, code(err))
	})
	t.Run("a revoked invite: invite_required", func(t *testing.T) {
		inv := f.invitePayer(t, 1_000_000)
		_, err := f.invites.Revoke(ctx, inv.InviteID)
		require.NoError(t, err)
		_, err = gate(cfg).Gate(ctx, open(anon(), inv.InviteID))
		assert.Equal(t, errs.InviteRequired, code(err))
	})
	t.Run("an expired invite: invite_required", func(t *testing.T) {
		inv := f.invitePayer(t, 1_000_000)
		_, err := f.db.Pool.Exec(ctx, `UPDATE credit_accounts SET expires_at = now() - interval '1 minute' WHERE id = $1`, credit.InviteAccount(inv.InviteID))
		require.NoError(t, err)
		_, err = gate(cfg).Gate(ctx, open(anon(), inv.InviteID))
		assert.Equal(t, errs.InviteRequired, code(err))
	})
	t.Run("the daily cap spent: budget_exhausted before any call", func(t *testing.T) {
		inv := f.invitePayer(t, 1_000_000)
		c := cfg
		c.LLMDailyCap = 0
		_, err := gate(c).Gate(ctx, open(anon(), inv.InviteID))
		assert.Equal(t, errs.BudgetExhausted, code(err))
	})
	t.Run("open: no invite asked, the daily cap alone", func(t *testing.T) {
		c := cfg
		c.AgentAccess = "open"
		payer, err := gate(c).Gate(ctx, toolkit.Caller{})
		require.NoError(t, err)
		assert.Equal(t, credit.PayOpen, payer.Kind)
		c.LLMDailyCap = 0
		_, err = gate(c).Gate(ctx, toolkit.Caller{})
		assert.Equal(t, errs.BudgetExhausted, code(err))
	})
}
