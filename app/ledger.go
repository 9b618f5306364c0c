package app

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"

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
// must Settle or Release: the deferred Release covers them. processID is the
// process's lease (the processes table): at start, ReleaseOrphanHolds gives
// back the holds of processes that are gone.
type Ledger struct {
	store  ports.LedgerStore
	clock  ports.Clock
	random ports.Random
	tips   TipSource
	price  credit.Price
	log    *slog.Logger
}

// TipSource reads a person's tip percent (0 when they set none).
type TipSource interface {
	TipPercent(ctx context.Context, personID string) (int, error)
}

// NewLedger makes the ledger service.
func NewLedger(store ports.LedgerStore, clock ports.Clock, random ports.Random, log *slog.Logger) *Ledger {
	return &Ledger{store: store, clock: clock, random: random, log: log}
}

// WithTips makes settling charge a person's tip as its own entry.
func (l *Ledger) WithTips(tips TipSource) *Ledger { l.tips = tips; return l }

// WithPrice sets the base-fee switches settling applies to a person's credit.
func (l *Ledger) WithPrice(p credit.Price) *Ledger { l.price = p; return l }

// Reserve holds worstCase on every account that pays for payer, for one model
// call of runID made by processID, in the same transaction that checks what
// is left.
func (l *Ledger) Reserve(ctx context.Context, payer credit.Payer, runID, processID string, worstCase credit.Micros) (credit.Hold, error) {
	if runID == "" || processID == "" {
		return credit.Hold{}, errors.New("ledger: a hold needs a run and a process")
	}
	id, err := newID(l.random, "hold_")
	if err != nil {
		return credit.Hold{}, err
	}
	now := l.clock.Now()
	hold := credit.Hold{ID: id, RunID: runID, ProcessID: processID, Payer: payer}
	return l.store.Reserve(ctx, hold, payer.Accounts(now), func(accounts []credit.Account, runTaken credit.Micros) ([]credit.HoldLine, error) {
		return credit.PlanHold(payer, accounts, runTaken, worstCase, now)
	})
}

// Settle turns hold into a charge of actual (what the call cost). Settling a
// hold already settled or released changes nothing.
func (l *Ledger) Settle(ctx context.Context, hold credit.Hold, actual credit.Micros) error {
	if actual < 0 {
		return fmt.Errorf("ledger: a charge is never negative, not %s", actual)
	}
	tip := 0
	if hold.Payer.Kind == credit.PayPerson && l.tips != nil {
		var err error
		if tip, err = l.tips.TipPercent(ctx, hold.Payer.PersonID); err != nil {
			return err
		}
	}
	_, err := l.store.Settle(ctx, hold.ID, func(h credit.Hold) ([]credit.Charge, error) {
		return credit.PlanSettle(h, actual, l.price, tip)
	})
	return err
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
// lease row, or a heartbeat older than LeaseStale). A start calls it;
// holds of live processes are left alone. What those calls cost can't be
// known, so nothing is charged.
func (l *Ledger) ReleaseOrphanHolds(ctx context.Context) (int, error) {
	ids, err := l.store.OrphanReservations(ctx, LeaseStale)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		done, err := l.store.Release(ctx, id)
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	if n > 0 && l.log != nil {
		l.log.Info("released the ledger holds of processes that are gone", "holds", n)
	}
	return n, nil
}

// Account reads one ledger account.
func (l *Ledger) Account(ctx context.Context, id string) (credit.Account, error) {
	return l.store.Account(ctx, id)
}

func newID(random io.Reader, prefix string) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return prefix + hex.EncodeToString(b[:]), nil
}
