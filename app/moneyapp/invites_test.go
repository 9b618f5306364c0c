package moneyapp_test

import (
	"crypto/rand"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
)

// movingClock is a clock a test moves on.
type movingClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *movingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *movingClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

type inviteDesk struct {
	svc      *moneyapp.InviteService
	ledger   *memory.Ledger
	sessions *memory.Sessions
	clock    *movingClock
}

func newInviteDesk(t *testing.T) inviteDesk {
	t.Helper()
	clock := &movingClock{at: now}
	ledger := memory.NewLedger(clock, memory.NewLeases(clock))
	sessions := memory.NewSessions()
	require.NoError(t, sessions.CreateSession(t.Context(), people.Session{ID: "ses_1", Subject: "anon_1", CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour)}))
	return inviteDesk{svc: moneyapp.NewInviteService(ledger, sessions, clock, rand.Reader), ledger: ledger, sessions: sessions, clock: clock}
}

// A minted invite's token puts it in a session, which then holds it.
func TestAnInviteIsRedeemedIntoASessionAndHeld(t *testing.T) {
	d := newInviteDesk(t)
	ctx := t.Context()
	minted, err := d.svc.Mint(ctx, 2*credit.MicrosPerUSD, 14)
	require.NoError(t, err)
	assert.Equal(t, "2026-12-16T12:00:00Z", minted.ExpiresAt)
	held, err := d.svc.Held(ctx, "ses_1")
	require.NoError(t, err)
	assert.Nil(t, held.Invite, "nothing held before redeeming")

	got, err := d.svc.Redeem(ctx, "ses_1", minted.Token)
	require.NoError(t, err)
	require.NotNil(t, got.Invite)
	held, err = d.svc.Held(ctx, "ses_1")
	require.NoError(t, err)
	assert.Equal(t, got, held)
	sess, err := d.sessions.Session(ctx, "ses_1")
	require.NoError(t, err)
	assert.Equal(t, minted.ID, sess.InviteID)
}

// A token that names no invite, a revoked one or an expired one is
// unauthorised, a spent one budget_exhausted; none is put in the session.
func TestAnInviteThatCantPayIsRefusedAndNotHeld(t *testing.T) {
	d := newInviteDesk(t)
	ctx := t.Context()
	for _, token := range []string{"", "no-such-token", string(make([]byte, 300))} {
		_, err := d.svc.Redeem(ctx, "ses_1", token)
		assert.Equal(t, errs.Unauthorised, errs.CodeOf(err), "%q: %v", token, err)
	}

	revoked, err := d.svc.Mint(ctx, credit.MicrosPerUSD, 14)
	require.NoError(t, err)
	first, err := d.svc.Revoke(ctx, revoked.ID)
	require.NoError(t, err)
	d.clock.add(time.Hour)
	again, err := d.svc.Revoke(ctx, revoked.ID)
	require.NoError(t, err)
	assert.Equal(t, first.RevokedAt, again.RevokedAt, "a second revoke keeps the first time")
	_, err = d.svc.Redeem(ctx, "ses_1", revoked.Token)
	assert.Equal(t, errs.Unauthorised, errs.CodeOf(err), "%v", err)
	assert.Contains(t, err.Error(), "revoked")
	_, err = d.svc.Revoke(ctx, "inv_nope")
	assert.Equal(t, errs.NotFound, errs.CodeOf(err), "%v", err)

	spent, err := d.svc.Mint(ctx, 10_000, 14)
	require.NoError(t, err)
	payer := credit.Payer{Kind: credit.PayInvite, InviteID: spent.ID, DailyCap: credit.MicrosPerUSD}
	ledger := moneyapp.NewLedger(mustLoad(t), d.ledger, nil, d.clock, rand.Reader, nil)
	hold, err := ledger.ReserveCall(ctx, payer, "run_1", "proc_1", 10_000, nil)
	require.NoError(t, err)
	require.NoError(t, ledger.Settle(ctx, hold, 10_000))
	_, err = d.svc.Redeem(ctx, "ses_1", spent.Token)
	assert.Equal(t, errs.BudgetExhausted, errs.CodeOf(err), "%v", err)

	expiring, err := d.svc.Mint(ctx, credit.MicrosPerUSD, 1)
	require.NoError(t, err)
	d.clock.add(25 * time.Hour)
	_, err = d.svc.Redeem(ctx, "ses_1", expiring.Token)
	assert.Equal(t, errs.Unauthorised, errs.CodeOf(err), "%v", err)
	assert.Contains(t, err.Error(), "expired")

	held, err := d.svc.Held(ctx, "ses_1")
	require.NoError(t, err)
	assert.Nil(t, held.Invite, "no refused invite was put in the session")

	_, err = d.svc.Mint(ctx, 0, 14)
	assert.Equal(t, errs.BadInput, errs.CodeOf(err), "an invite with no budget: %v", err)
}

func mustLoad(t *testing.T) config.Config {
	t.Helper()
	cfg, err := load(nil)
	require.NoError(t, err)
	return cfg
}
