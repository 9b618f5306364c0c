package ports

import (
	"context"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/invites"
)

// LedgerStore keeps accounts, holds and entries. Its writes follow the update
// function pattern: the adapter opens the transaction and locks the rows, the
// domain's function decides, the adapter writes what it decided.
type LedgerStore interface {
	// Reserve, in one transaction: makes the accounts marked Create when they
	// are missing, locks the paying accounts (a missing one is left out),
	// reads what hold.ChatID has already taken from the first (held or
	// charged), asks decide for the lines to hold, and writes them with
	// hold's id, run, chat and process.
	Reserve(ctx context.Context, hold credit.Hold, specs []credit.AccountSpec,
		decide func(accounts []credit.Account, chatTaken credit.Micros) ([]credit.HoldLine, error)) (credit.Hold, error)
	// Settle locks a reservation and its accounts; if it is still held, it
	// asks decide for the charges and writes them, turning the holds into
	// charges. With readBilled, the hold given to decide carries the bill
	// already on its person account (Hold.BilledBefore, read under the lock;
	// it costs a read of that account's entries, so only the free allowance
	// asks for it). A reservation already settled or released is left alone
	// (done false), except one a sweep released (ReleaseOrphans) while its
	// call went on: that one is still charged what decide says, so no charge
	// is lost. An unknown one is errs.NotFound.
	Settle(ctx context.Context, reservationID string, readBilled bool, decide func(h credit.Hold) (credit.Settlement, error)) (done bool, err error)
	// Release gives a still-held reservation back to its accounts; one
	// already settled or released is left alone (done false).
	Release(ctx context.Context, reservationID string) (done bool, err error)
	// ReleaseOrphans releases, in one transaction, up to limit held
	// reservations of processes that are gone (their row in processes is
	// missing or its heartbeat is older than staleAfter), marked as swept so
	// a late Settle by that process still charges them, and returns how many.
	// Reservations another transaction holds are left for the next call.
	ReleaseOrphans(ctx context.Context, staleAfter time.Duration, limit int) (int, error)
	// ReleaseStuck is ReleaseOrphans for reservations held longer than
	// heldFor, whatever their process: past any chat's time, their process
	// gave up releasing them.
	ReleaseStuck(ctx context.Context, heldFor time.Duration, limit int) (int, error)
	// Account reads one account, or errs.NotFound.
	Account(ctx context.Context, id string) (credit.Account, error)
	// Usage lists an account's usage records, newest first.
	Usage(ctx context.Context, account string, limit int) ([]credit.UsageRecord, error)
	// PendingBills are an account's usage records with an inference id and no
	// bill yet, oldest first, at most limit.
	PendingBills(ctx context.Context, account string, limit int) ([]credit.UsageRecord, error)
	// Reconcile records the provider's bill for a call and puts the
	// difference from what was charged on the account as its own entry, once.
	Reconcile(ctx context.Context, reservationID string, billed credit.Micros) error
	// TopUp, in one transaction, makes the person's account if needed and
	// adds t's dollars to it, keyed by the transaction hash: added is false
	// (and nothing changes) when that hash was counted before.
	TopUp(ctx context.Context, t credit.TopUp) (added bool, err error)
}

// InviteStore keeps invites; an invite's budget, end and revocation live in
// its ledger account.
type InviteStore interface {
	// CreateInvite stores an invite and opens its account at its budget.
	CreateInvite(ctx context.Context, inv invites.Invite) error
	// Invite reads one by id, or errs.NotFound.
	Invite(ctx context.Context, id string) (invites.Invite, error)
	// InviteByTokenHash reads one by its token's hash, or errs.NotFound.
	InviteByTokenHash(ctx context.Context, hash string) (invites.Invite, error)
	// RevokeInvite ends an invite at at (once: a second revoke keeps the first time).
	RevokeInvite(ctx context.Context, id string, at time.Time) (invites.Invite, error)
	// Invites lists every invite, newest first.
	Invites(ctx context.Context) ([]invites.Invite, error)
}

// ModelBilling reads what the model provider billed for calls (NEAR AI's
// POST /v1/billing/costs), so a person is charged the bill.
type ModelBilling interface {
	// Billed maps inference ids to what each call was billed; ids the
	// provider has no bill for yet are absent.
	Billed(ctx context.Context, inferenceIDs []string) (map[string]credit.Micros, error)
}

// BillingClaims spaces out asking the model provider for a person's bills
// (GET /api/v1/me/usage reconciles first): one ask per person at a time and
// at most one per interval, across every replica.
type BillingClaims interface {
	// ClaimBilling takes the person's turn to ask if nobody took one within
	// every; claimed is false, and nothing changes, otherwise.
	ClaimBilling(ctx context.Context, personID string, every time.Duration) (claimed bool, err error)
}
