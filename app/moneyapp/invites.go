package moneyapp

import (
	"context"
	"fmt"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/invites"
	"github.com/petal-near/petal/ports"
)

// InviteService mints, revokes, lists and redeems invites. An invite's token
// is shown once; only its hash is stored. Several sessions may hold one
// invite, and they draw on its one budget.
type InviteService struct {
	store    ports.InviteStore
	sessions ports.SessionStore
	clock    ports.Clock
	random   ports.Random
}

// NewInviteService makes the invite service.
func NewInviteService(store ports.InviteStore, sessions ports.SessionStore, clock ports.Clock, random ports.Random) *InviteService {
	return &InviteService{store: store, sessions: sessions, clock: clock, random: random}
}

// Minted is a new invite with its token, shown this once.
type Minted struct {
	ID        string           `json:"id"`
	Token     string           `json:"token"`
	BudgetUSD credit.USDNumber `json:"budget_usd"`
	ExpiresAt string           `json:"expires_at"`
}

// Mint makes an invite for budget lasting days.
func (s *InviteService) Mint(ctx context.Context, budget credit.Micros, days int) (Minted, error) {
	token, inv, err := invites.Mint(s.random, budget, days, s.clock.Now())
	if err != nil {
		return Minted{}, errs.New(errs.BadInput, err.Error())
	}
	if err := s.store.CreateInvite(ctx, inv); err != nil {
		return Minted{}, err
	}
	return Minted{ID: inv.ID, Token: token, BudgetUSD: inv.Budget.USD(), ExpiresAt: inv.ExpiresAt.Format("2006-01-02T15:04:05Z")}, nil
}

// Revoke ends an invite; every session holding it stops at its next model call.
func (s *InviteService) Revoke(ctx context.Context, id string) (invites.Invite, error) {
	if _, err := s.store.Invite(ctx, id); err != nil {
		return invites.Invite{}, err
	}
	return s.store.RevokeInvite(ctx, id, s.clock.Now())
}

// List is every invite, newest first.
func (s *InviteService) List(ctx context.Context) ([]invites.Invite, error) {
	return s.store.Invites(ctx)
}

// Now is the service's clock, for statuses.
func (s *InviteService) Now() ports.Clock { return s.clock }

// InviteBody is the contract's { invite } answer.
type InviteBody struct {
	Invite *invites.View `json:"invite"`
}

// Redeem puts the invite a token names in the session. Unknown, revoked or
// expired tokens are unauthorised; a spent one is budget_exhausted.
func (s *InviteService) Redeem(ctx context.Context, sessionID, token string) (InviteBody, error) {
	inv, err := s.Check(ctx, token)
	if err != nil {
		return InviteBody{}, err
	}
	if err := s.sessions.SetSessionInvite(ctx, sessionID, inv.ID); err != nil {
		return InviteBody{}, err
	}
	v := inv.ViewAt(s.clock.Now())
	return InviteBody{Invite: &v}, nil
}

// Check finds the active invite a token names, or the refusal.
func (s *InviteService) Check(ctx context.Context, token string) (invites.Invite, error) {
	refused := errs.New(errs.Unauthorised, "this invite is not valid", "check the token, or ask for a new invite")
	if token == "" || len(token) > 256 {
		return invites.Invite{}, refused
	}
	inv, err := s.store.InviteByTokenHash(ctx, invites.HashToken(token))
	if errs.Is(err, errs.NotFound) {
		return invites.Invite{}, refused
	}
	if err != nil {
		return invites.Invite{}, err
	}
	switch inv.StatusAt(s.clock.Now()) {
	case invites.Revoked:
		return invites.Invite{}, errs.New(errs.Unauthorised, "this invite was revoked", "ask for a new invite")
	case invites.Expired:
		return invites.Invite{}, errs.New(errs.Unauthorised, "this invite has expired", "ask for a new invite")
	case invites.Spent:
		return invites.Invite{}, errs.New(errs.BudgetExhausted, "this invite's budget is spent", "ask for a new invite, or bring your own agent: /skill.md")
	}
	return inv, nil
}

// Held is the invite a session holds, or { invite: null }.
func (s *InviteService) Held(ctx context.Context, sessionID string) (InviteBody, error) {
	if sessionID == "" {
		return InviteBody{}, nil
	}
	sess, err := s.sessions.Session(ctx, sessionID)
	if errs.Is(err, errs.NotFound) || (err == nil && sess.InviteID == "") {
		return InviteBody{}, nil
	}
	if err != nil {
		return InviteBody{}, err
	}
	inv, err := s.store.Invite(ctx, sess.InviteID)
	if err != nil {
		return InviteBody{}, fmt.Errorf("invite %s of a session: %w", sess.InviteID, err)
	}
	v := inv.ViewAt(s.clock.Now())
	return InviteBody{Invite: &v}, nil
}
