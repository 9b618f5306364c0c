package moneyapp

import (
	"context"
	"time"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/invites"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// Access decides who pays for a chat on a real model ("Who pays"):
//
//  1. a signed-in person's own credit, when the chat's first call fits in
//     what is left: capped per chat by PETAL_PERSON_USD_PER_CHAT and not held
//     by the daily cap;
//  2. otherwise, on an open server, the daily cap alone;
//  3. otherwise the session's invite together with the daily cap, $0.05 a chat.
//
// Refusals, before any model call: gated with no credit and no invite → 403
// invite_required (hint /connect); signed in with neither → 402
// payment_required; an invite spent or the daily cap spent, or too little
// left of either or of a chat's cap for the first call → 429
// budget_exhausted; an invite revoked or expired → 403 invite_required.
type Access struct {
	cfg      config.Config
	sessions ports.SessionStore
	invites  ports.InviteStore
	ledger   ports.LedgerStore
	clock    ports.Clock
}

// NewAccess makes the gate.
func NewAccess(cfg config.Config, sessions ports.SessionStore, invites ports.InviteStore, ledger ports.LedgerStore, clock ports.Clock) *Access {
	return &Access{cfg: cfg, sessions: sessions, invites: invites, ledger: ledger, clock: clock}
}

// Gate says who pays for the caller's chat, or why nobody may: GateFor with
// a first call that needs something left.
func (a *Access) Gate(ctx context.Context, caller toolkit.Caller) (credit.Payer, error) {
	return a.GateFor(ctx, caller, 1)
}

// GateFor says who pays for the caller's chat whose first model call may cost
// up to firstCall, or why nobody may. A payer is chosen only when that first
// call fits in what it has left and in its per-chat cap, so a chat that could
// never make its first call is refused at the door, before a run is stored
// (the ledger checks each call again when it holds it).
func (a *Access) GateFor(ctx context.Context, caller toolkit.Caller, firstCall credit.Micros) (credit.Payer, error) {
	now := a.clock.Now()
	firstCall = max(firstCall, 1)
	var sess people.Session
	if caller.Session != "" {
		s, err := a.sessions.Session(ctx, caller.Session)
		if err != nil && !errs.Is(err, errs.NotFound) {
			return credit.Payer{}, err
		}
		if err == nil && !s.Expired(now) {
			sess = s
		}
	}
	signed := sess.Signed()
	var creditShort error // the person's credit is too little for this chat's first call
	if signed {
		acct, err := a.ledger.Account(ctx, credit.PersonAccount(sess.Subject))
		if err != nil && !errs.Is(err, errs.NotFound) {
			return credit.Payer{}, err
		}
		if err == nil && acct.Left() > 0 {
			p := credit.Payer{Kind: credit.PayPerson, PersonID: sess.Subject, PerChat: a.cfg.PersonPerChat}
			_, err := credit.PlanHold(p, []credit.Account{acct}, 0, firstCall, now)
			if err == nil {
				return p, nil
			}
			if errs.CodeOf(err) != errs.PaymentRequired {
				return credit.Payer{}, err // the chat's cap: no other payer changes that
			}
			creditShort = err
		}
	}
	if a.cfg.AgentAccess == "open" {
		if err := a.dailyLeft(ctx, now, firstCall); err != nil {
			return credit.Payer{}, err
		}
		return credit.Payer{Kind: credit.PayOpen, DailyCap: a.cfg.LLMDailyCap}, nil
	}
	if sess.InviteID != "" {
		inv, err := a.invites.Invite(ctx, sess.InviteID)
		if err != nil {
			return credit.Payer{}, err
		}
		switch inv.StatusAt(now) {
		case invites.Active:
			if err := a.dailyLeft(ctx, now, firstCall); err != nil {
				return credit.Payer{}, err
			}
			p := credit.Payer{Kind: credit.PayInvite, InviteID: inv.ID, PerChat: credit.InvitePerChat, DailyCap: a.cfg.LLMDailyCap}
			acct, err := a.ledger.Account(ctx, credit.InviteAccount(inv.ID))
			if err != nil {
				return credit.Payer{}, err
			}
			daily := credit.Account{ID: credit.DailyAccount(now), Kind: credit.KindDaily, Limit: a.cfg.LLMDailyCap}
			if _, err := credit.PlanHold(p, []credit.Account{acct, daily}, 0, firstCall, now); err != nil {
				return credit.Payer{}, err
			}
			return p, nil
		case invites.Spent:
			return credit.Payer{}, errs.New(errs.BudgetExhausted, "this invite's budget is spent",
				"ask for a new invite, or bring your own agent: /skill.md")
		}
		// Revoked or expired: as if there were none.
	}
	if creditShort != nil {
		return credit.Payer{}, creditShort
	}
	if signed {
		return credit.Payer{}, errs.New(errs.PaymentRequired, "Petal's agent needs credit of your own or an invite",
			"add credit with NEAR (pay)")
	}
	return credit.Payer{}, errs.New(errs.InviteRequired, "Petal's agent needs an invite", "/connect")
}

// dailyLeft refuses when today's cap on unpaid model spend hasn't need left.
func (a *Access) dailyLeft(ctx context.Context, now time.Time, need credit.Micros) error {
	acct, err := a.ledger.Account(ctx, credit.DailyAccount(now))
	if errs.Is(err, errs.NotFound) {
		acct = credit.Account{ID: credit.DailyAccount(now), Kind: credit.KindDaily}
	} else if err != nil {
		return err
	}
	acct.Limit = a.cfg.LLMDailyCap
	_, err = credit.PlanHold(credit.Payer{Kind: credit.PayOpen, DailyCap: a.cfg.LLMDailyCap}, []credit.Account{acct}, 0, need, now)
	return err
}

// PersonPayer is a person's own credit as the payer of a chat whose first
// call may cost up to firstCall: payment_required when it can't pay it.
// Reports a person's agents bring back are paid this way alone, never from
// an invite or the site's open allowance.
func (a *Access) PersonPayer(ctx context.Context, personID string, firstCall credit.Micros) (credit.Payer, error) {
	acct, err := a.ledger.Account(ctx, credit.PersonAccount(personID))
	if errs.Is(err, errs.NotFound) {
		return credit.Payer{}, errs.New(errs.PaymentRequired, "no credit of the person's own")
	}
	if err != nil {
		return credit.Payer{}, err
	}
	p := credit.Payer{Kind: credit.PayPerson, PersonID: personID, PerChat: a.cfg.PersonPerChat}
	if _, err := credit.PlanHold(p, []credit.Account{acct}, 0, max(firstCall, 1), a.clock.Now()); err != nil {
		return credit.Payer{}, err
	}
	return p, nil
}
