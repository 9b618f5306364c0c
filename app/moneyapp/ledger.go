package moneyapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/internal/ids"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// Ledger is how the agent pays for model calls. For each model call of a chat:
//
//	payer, err := access.Gate(ctx, caller)           // once, before the chat's first call
//	hold, err := ledger.Reserve(ctx, payer, runID, processID, worstCase)
//	defer ledger.Release(context.WithoutCancel(ctx), hold) // a no-op once settled
//	… call the model …
//	err = ledger.Settle(ctx, hold, actualCost)
//
// worstCase is the call's input tokens plus its max_tokens at the model's
// prices. Reserve refuses with budget_exhausted (invite or daily cap spent, an
// invite ended mid-chat, the chat's own cap reached) or payment_required (the
// person's credit spent). Every terminal path (error, stop, timeout, panic)
// must Settle or Release: the deferred Release covers them. Both are writes
// that must land: the agent tries them again until the database takes them
// (app/agent_landing.go), so a billed call is charged and an unused hold
// goes back even across a database's blip. processID is the
// process's lease (the processes table): at start, ReleaseOrphanHolds gives
// back the holds of processes that are gone.
type Ledger struct {
	store  ports.LedgerStore
	people ports.PeopleStore
	clock  ports.Clock
	random ports.Random
	price  credit.Price
	log    *slog.Logger
}

// NewLedger makes the ledger service. people gives each person's tip, which
// settling charges as its own entry; the price's base-fee switches come from
// cfg (all off by default).
func NewLedger(cfg config.Config, store ports.LedgerStore, people ports.PeopleStore, clock ports.Clock, random ports.Random, log *slog.Logger) *Ledger {
	return &Ledger{store: store, people: people, clock: clock, random: random, price: cfg.Price(), log: log}
}

// ReserveCall is Reserve for one model call whose bill is at most worstBill.
// On a person's own credit the hold also covers the most the call's base fee
// and tip can add (credit.Price.WorstCase; tools are the tools run since the
// chat's previous call, which this call's settle charges), so the per-chat cap
// bounds everything a chat spends. Invites and the daily cap pay NEAR AI's
// bill only, so their holds are the bill's.
func (l *Ledger) ReserveCall(ctx context.Context, payer credit.Payer, runID, processID string, worstBill credit.Micros, tools []string) (credit.Hold, error) {
	worst, err := l.HoldFor(ctx, payer, worstBill, tools)
	if err != nil {
		return credit.Hold{}, err
	}
	return l.Reserve(ctx, payer, runID, processID, worst.Total())
}

// HoldFor is what ReserveCall holds for a call whose bill is at most
// worstBill, part by part: on a person's own credit the bill with the base
// fee and their tip at most (credit.Price.WorstCaseParts), elsewhere the
// bill alone. A quote prices a chat with it, so a quote and the holds agree.
func (l *Ledger) HoldFor(ctx context.Context, payer credit.Payer, worstBill credit.Micros, tools []string) (credit.HoldParts, error) {
	if payer.Kind != credit.PayPerson {
		return credit.HoldParts{Bill: worstBill}, nil
	}
	tip, err := l.tipOf(ctx, payer)
	if err != nil {
		return credit.HoldParts{}, err
	}
	return l.price.WorstCaseParts(worstBill, tip, tools), nil
}

func (l *Ledger) tipOf(ctx context.Context, payer credit.Payer) (int, error) {
	if payer.Kind != credit.PayPerson || l.people == nil {
		return 0, nil
	}
	p, err := l.people.TipPercent(ctx, payer.PersonID)
	if err != nil || p == nil {
		return 0, err
	}
	return *p, nil
}

// Reserve holds worstCase on every account that pays for payer, for one model
// call of runID made by processID, in the same transaction that checks what
// is left. The per-chat cap counts payer.Chat's holds (the run's when empty).
func (l *Ledger) Reserve(ctx context.Context, payer credit.Payer, runID, processID string, worstCase credit.Micros) (credit.Hold, error) {
	if runID == "" || processID == "" {
		return credit.Hold{}, errors.New("ledger: a hold needs a run and a process")
	}
	id, err := ids.NewID(l.random, "hold_")
	if err != nil {
		return credit.Hold{}, err
	}
	now := l.clock.Now()
	chat := payer.Chat
	if chat == "" {
		chat = runID
	}
	hold := credit.Hold{ID: id, RunID: runID, ChatID: chat, ProcessID: processID, Payer: payer}
	return l.store.Reserve(ctx, hold, payer.Accounts(now), func(accounts []credit.Account, chatTaken credit.Micros) ([]credit.HoldLine, error) {
		return credit.PlanHold(payer, accounts, chatTaken, worstCase, now)
	})
}

// Settle turns hold into a charge of actual (what the call cost). Settling a
// hold already settled or released changes nothing.
func (l *Ledger) Settle(ctx context.Context, hold credit.Hold, actual credit.Micros) error {
	return l.settle(ctx, hold, actual, nil, credit.CallContext{})
}

// SettleCall is Settle with the call's usage, which a person's credit keeps
// as a usage/v1 record (GET /api/v1/me/usage).
// cc says which tools the chat ran since its previous call and whether this
// call's answer ends the turn: on a person's credit they carry switches D and
// C (the store fills in cc.BilledBefore for the free allowance, E).
func (l *Ledger) SettleCall(ctx context.Context, hold credit.Hold, actual credit.Micros, usage credit.Usage, cc credit.CallContext) error {
	return l.settle(ctx, hold, actual, &usage, cc)
}

func (l *Ledger) settle(ctx context.Context, hold credit.Hold, actual credit.Micros, usage *credit.Usage, cc credit.CallContext) error {
	if actual < 0 {
		return fmt.Errorf("ledger: a charge is never negative, not %s", actual)
	}
	tip, err := l.tipOf(ctx, hold.Payer)
	if err != nil {
		return err
	}
	now := l.clock.Now()
	// Only the free allowance (switch E) needs the person's bill so far.
	readBilled := l.price.FreeAllowance > 0 && hold.Payer.Kind == credit.PayPerson
	_, err = l.store.Settle(ctx, hold.ID, readBilled, func(h credit.Hold) (credit.Settlement, error) {
		cc.BilledBefore = h.BilledBefore
		return credit.PlanSettle(h, actual, l.price, tip, usage, cc, now)
	})
	return err
}

// Reconcile records the provider's own bill for a call charged to a person
// (POST /v1/billing/costs): the difference from the list price goes back, or
// is charged, as its own entry, once.
func (l *Ledger) Reconcile(ctx context.Context, hold credit.Hold, billed credit.Micros) error {
	return l.store.Reconcile(ctx, hold.ID, billed)
}

// Release gives hold back, uncharged. Releasing a hold already settled or
// released changes nothing, so it is safe to defer.
func (l *Ledger) Release(ctx context.Context, hold credit.Hold) error {
	if hold.ID == "" {
		return nil
	}
	_, err := l.store.Release(ctx, hold.ID)
	if errs.Is(err, errs.NotFound) {
		return nil
	}
	return err
}

// ReleaseOrphanHolds gives back every hold of a process that is gone (no
// lease row, or a heartbeat older than LeaseStale). A start and the sweep
// call it; holds of live processes are left alone. What those calls cost
// can't be known here, so nothing is charged; if the process was alive after
// all and settles its call late, the settle still charges it.
func (l *Ledger) ReleaseOrphanHolds(ctx context.Context) (int, error) {
	n := 0
	for {
		// A batch per transaction: thousands of holds of a dead process go
		// back in a few statements, without holding their accounts long.
		done, err := l.store.ReleaseOrphans(ctx, jobsapp.LeaseStale, orphanBatch)
		n += done
		// A batch counts reservations, which may have several lines: only
		// an empty one says nothing is left.
		if err != nil || done == 0 {
			if n > 0 && l.log != nil {
				l.log.Info("released the ledger holds of processes that are gone", "holds", n)
			}
			return n, err
		}
	}
}

// ReleaseStuckHolds gives back every hold held longer than heldFor, whatever
// its process: a hold lasts one model call of one chat, so one older than
// any chat's time is one its live process gave up releasing (its database
// away past its retries). Nothing is charged, as for orphans.
func (l *Ledger) ReleaseStuckHolds(ctx context.Context, heldFor time.Duration) (int, error) {
	n := 0
	for {
		done, err := l.store.ReleaseStuck(ctx, heldFor, orphanBatch)
		n += done
		if err != nil || done == 0 {
			if n > 0 && l.log != nil {
				l.log.Warn("released ledger holds held past any chat's time", "holds", n)
			}
			return n, err
		}
	}
}

// orphanBatch is how many orphaned reservations one transaction releases.
const orphanBatch = 500

// Account reads one ledger account.
func (l *Ledger) Account(ctx context.Context, id string) (credit.Account, error) {
	return l.store.Account(ctx, id)
}
