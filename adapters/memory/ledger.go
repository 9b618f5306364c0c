package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/invites"
	"github.com/petal-near/petal/ports"
)

// Ledger is ports.LedgerStore and ports.InviteStore in one process's memory,
// for app tests of the money rules; serve keeps the ledger in PostgreSQL. One
// mutex stands for PostgreSQL's row locks: every write decides and applies
// under it, so racing reservations see each other's holds as they would
// there. It passes porttest's LedgerStoreContract and InviteStoreContract.
type Ledger struct {
	clock  ports.Clock
	leases *Leases // whose processes are alive, for ReleaseOrphans

	mu       sync.Mutex
	accounts map[string]*credit.Account
	holds    map[string]*reservation
	entries  []Entry
	usage    []*credit.UsageRecord // in the order settled
	topUps   map[string]bool       // tx hashes counted
	invites  map[string]invites.Invite
	byToken  map[string]string // token hash → invite id
}

// Entry is one ledger entry, as a test reads them back (Entries).
type Entry struct {
	Account       string
	Kind          credit.EntryKind
	Amount        credit.Micros
	ReservationID string
	Note          string
}

// reservation is one hold and what became of it: held, settled or released
// (swept when a sweep, not its own process, released it).
type reservation struct {
	hold    credit.Hold
	status  string
	swept   bool
	charged map[string]credit.Micros
	created time.Time
}

var (
	_ ports.LedgerStore = (*Ledger)(nil)
	_ ports.InviteStore = (*Ledger)(nil)
)

// NewLedger makes an empty ledger timed by clock; leases says which processes
// are alive (a hold of any other is an orphan).
func NewLedger(clock ports.Clock, leases *Leases) *Ledger {
	return &Ledger{clock: clock, leases: leases,
		accounts: map[string]*credit.Account{}, holds: map[string]*reservation{}, topUps: map[string]bool{},
		invites: map[string]invites.Invite{}, byToken: map[string]string{}}
}

// Reserve implements ports.LedgerStore.
func (l *Ledger) Reserve(_ context.Context, hold credit.Hold, specs []credit.AccountSpec,
	decide func([]credit.Account, credit.Micros) ([]credit.HoldLine, error)) (credit.Hold, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, dup := l.holds[hold.ID]; dup {
		return credit.Hold{}, fmt.Errorf("memory: reservation %s exists", hold.ID)
	}
	if hold.ChatID == "" {
		hold.ChatID = hold.RunID
	}
	accounts := make([]credit.Account, 0, len(specs))
	for _, sp := range specs {
		a, ok := l.accounts[sp.ID]
		if !ok && sp.Create {
			a = &credit.Account{ID: sp.ID, Kind: sp.Kind}
			l.accounts[sp.ID] = a
			ok = true
		}
		if ok && sp.Create {
			// The day's cap is the configured one, changed or not.
			a.Limit = sp.Limit
		}
		if ok {
			accounts = append(accounts, *a)
		}
	}
	var taken credit.Micros
	if len(specs) > 0 {
		for _, r := range l.holds {
			if r.hold.ChatID != hold.ChatID || r.status == "released" {
				continue
			}
			for _, line := range r.hold.Lines {
				if line.Account != specs[0].ID {
					continue
				}
				if r.status == "held" {
					taken += line.Amount
				} else {
					taken += r.charged[line.Account]
				}
			}
		}
	}
	lines, err := decide(accounts, taken)
	if err != nil {
		return credit.Hold{}, err
	}
	for _, line := range lines {
		if _, ok := l.accounts[line.Account]; !ok || line.Amount < 0 {
			return credit.Hold{}, fmt.Errorf("memory: a hold of %s on %s", line.Amount, line.Account)
		}
	}
	for _, line := range lines {
		l.accounts[line.Account].Held += line.Amount
	}
	hold.Lines = slices.Clone(lines)
	l.holds[hold.ID] = &reservation{hold: hold, status: "held", created: l.clock.Now()}
	hold.Lines = slices.Clone(lines)
	return hold, nil
}

// Settle implements ports.LedgerStore.
func (l *Ledger) Settle(_ context.Context, reservationID string, readBilled bool, decide func(credit.Hold) (credit.Settlement, error)) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.holds[reservationID]
	if !ok {
		return false, errs.Newf(errs.NotFound, "no hold %s", reservationID)
	}
	stillHeld := r.status == "held"
	if !stillHeld && (r.status != "released" || !r.swept) {
		return false, nil
	}
	h := r.hold
	h.Lines = slices.Clone(r.hold.Lines)
	if readBilled {
		for _, line := range h.Lines {
			if line.Kind != credit.KindPerson {
				continue
			}
			for _, e := range l.entries {
				if e.Account == line.Account && e.Kind == credit.EntryCall {
					h.BilledBefore += e.Amount
				}
			}
		}
	}
	settlement, err := decide(h)
	if err != nil {
		return false, err
	}
	perAccount := map[string]credit.Micros{}
	for _, c := range settlement.Charges {
		if c.Amount < 0 {
			return false, fmt.Errorf("memory: a charge is never negative (%s on %s)", c.Amount, c.Account)
		}
		if !slices.ContainsFunc(h.Lines, func(line credit.HoldLine) bool { return line.Account == c.Account }) {
			return false, fmt.Errorf("memory: charge on %s, which the hold is not on", c.Account)
		}
		perAccount[c.Account] += c.Amount
	}
	for _, c := range settlement.Charges {
		l.entries = append(l.entries, Entry{Account: c.Account, Kind: c.Kind, Amount: c.Amount, ReservationID: reservationID, Note: c.Note})
	}
	for _, line := range h.Lines {
		a := l.accounts[line.Account]
		if stillHeld {
			a.Held -= line.Amount
		}
		a.Spent += perAccount[line.Account]
	}
	r.status, r.charged = "settled", perAccount
	if u := settlement.Usage; u != nil {
		rec := *u
		l.usage = append(l.usage, &rec)
	}
	return true, nil
}

// Release implements ports.LedgerStore.
func (l *Ledger) Release(_ context.Context, reservationID string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.holds[reservationID]
	if !ok || r.status != "held" {
		return false, nil
	}
	l.release(r, false)
	return true, nil
}

func (l *Ledger) release(r *reservation, swept bool) {
	for _, line := range r.hold.Lines {
		l.accounts[line.Account].Held -= line.Amount
	}
	r.status, r.swept = "released", swept
}

// ReleaseOrphans implements ports.LedgerStore.
func (l *Ledger) ReleaseOrphans(_ context.Context, staleAfter time.Duration, limit int) (int, error) {
	return l.sweep(limit, func(r *reservation) bool {
		return l.leases == nil || !l.leases.aliveNow(r.hold.ProcessID, staleAfter)
	}), nil
}

// ReleaseStuck implements ports.LedgerStore.
func (l *Ledger) ReleaseStuck(_ context.Context, heldFor time.Duration, limit int) (int, error) {
	before := l.clock.Now().Add(-heldFor)
	return l.sweep(limit, func(r *reservation) bool { return r.created.Before(before) }), nil
}

// sweep releases, as swept, up to limit held reservations victim picks, in
// id order.
func (l *Ledger) sweep(limit int, victim func(*reservation) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]string, 0, len(l.holds))
	for id, r := range l.holds {
		if r.status == "held" {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	n := 0
	for _, id := range ids {
		if n >= limit {
			break
		}
		if r := l.holds[id]; victim(r) {
			l.release(r, true)
			n++
		}
	}
	return n
}

// Account implements ports.LedgerStore.
func (l *Ledger) Account(_ context.Context, id string) (credit.Account, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.accounts[id]
	if !ok {
		return credit.Account{}, errs.Newf(errs.NotFound, "no account %s", id)
	}
	return *a, nil
}

// Usage implements ports.LedgerStore.
func (l *Ledger) Usage(_ context.Context, account string, limit int) ([]credit.UsageRecord, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []credit.UsageRecord
	for i := len(l.usage) - 1; i >= 0 && len(out) < limit; i-- {
		if l.usage[i].Account == account {
			out = append(out, copyUsage(l.usage[i]))
		}
	}
	slices.SortStableFunc(out, func(a, b credit.UsageRecord) int { return b.At.Compare(a.At) })
	return out, nil
}

// PendingBills implements ports.LedgerStore.
func (l *Ledger) PendingBills(_ context.Context, account string, limit int) ([]credit.UsageRecord, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []credit.UsageRecord
	for _, u := range l.usage {
		if len(out) < limit && u.Account == account && u.InferenceID != "" && u.Billed == nil {
			out = append(out, copyUsage(u))
		}
	}
	slices.SortStableFunc(out, func(a, b credit.UsageRecord) int { return a.At.Compare(b.At) })
	return out, nil
}

func copyUsage(u *credit.UsageRecord) credit.UsageRecord {
	c := *u
	if u.Billed != nil {
		b := *u.Billed
		c.Billed = &b
	}
	return c
}

// Reconcile implements ports.LedgerStore.
func (l *Ledger) Reconcile(_ context.Context, reservationID string, billed credit.Micros) error {
	if billed < 0 {
		return errors.New("memory: a bill is never negative")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.IndexFunc(l.usage, func(u *credit.UsageRecord) bool { return u.ReservationID == reservationID })
	if i < 0 {
		return errs.Newf(errs.NotFound, "no usage record %s", reservationID)
	}
	u := l.usage[i]
	if u.Billed != nil {
		return nil // reconciled once already
	}
	diff := credit.PlanReconcile(*u, billed)
	if diff != 0 {
		l.entries = append(l.entries, Entry{Account: u.Account, Kind: credit.EntryReconcile, Amount: diff, ReservationID: reservationID,
			Note: "reconciled with NEAR AI's bill"})
		l.accounts[u.Account].Spent += diff
	}
	u.Billed, u.Reconciled, u.Charged = &billed, diff, u.Charged+diff
	return nil
}

// TopUp implements ports.LedgerStore.
func (l *Ledger) TopUp(_ context.Context, t credit.TopUp) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := credit.PersonAccount(t.PersonID)
	a, ok := l.accounts[id]
	if !ok {
		a = &credit.Account{ID: id, Kind: credit.KindPerson}
		l.accounts[id] = a
	}
	if l.topUps[t.TxHash] {
		return false, nil
	}
	if t.Added < 0 || t.Fee < 0 || a.Limit > math.MaxInt64-t.Added || a.Spent > math.MaxInt64-t.Fee {
		// As PostgreSQL's bigint refuses it: whole, nothing counted.
		return false, errs.New(errs.BadInput, "this top-up would take the credit past what the ledger can count", "send a smaller transfer")
	}
	l.topUps[t.TxHash] = true
	l.entries = append(l.entries, Entry{Account: id, Kind: credit.EntryTopUp, Amount: t.Added, Note: "NEAR transfer " + t.TxHash})
	a.Limit += t.Added
	if t.Fee > 0 {
		l.entries = append(l.entries, Entry{Account: id, Kind: credit.EntryFee, Amount: t.Fee, Note: "Petals base fee (top-up)"})
		a.Spent += t.Fee
	}
	return true, nil
}

// Entries are the entries on account, in the order written, so a test can
// say what settling wrote, and that a refusal wrote nothing.
func (l *Ledger) Entries(account string) []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Entry
	for _, e := range l.entries {
		if e.Account == account {
			out = append(out, e)
		}
	}
	return out
}

// Held is how many reservations are still held.
func (l *Ledger) Held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.holds {
		if r.status == "held" {
			n++
		}
	}
	return n
}

// CreateInvite implements ports.InviteStore.
func (l *Ledger) CreateInvite(_ context.Context, inv invites.Invite) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := credit.InviteAccount(inv.ID)
	if _, ok := l.accounts[id]; ok {
		return fmt.Errorf("memory: invite %s exists", inv.ID)
	}
	if _, ok := l.byToken[inv.TokenHash]; ok {
		return fmt.Errorf("memory: an invite with that token exists")
	}
	expires := inv.ExpiresAt.UTC()
	l.accounts[id] = &credit.Account{ID: id, Kind: credit.KindInvite, Limit: inv.Budget, ExpiresAt: &expires}
	l.invites[inv.ID] = invites.Invite{ID: inv.ID, TokenHash: inv.TokenHash, CreatedAt: inv.CreatedAt.UTC()}
	l.byToken[inv.TokenHash] = inv.ID
	return nil
}

// invite is the invite with its account's budget, spend and end; the lock held.
func (l *Ledger) invite(id string) (invites.Invite, error) {
	inv, ok := l.invites[id]
	if !ok {
		return invites.Invite{}, errs.New(errs.NotFound, "no such invite")
	}
	a := l.accounts[credit.InviteAccount(id)]
	inv.Budget, inv.Spent, inv.Held = a.Limit, a.Spent, a.Held
	inv.ExpiresAt = *a.ExpiresAt
	if a.RevokedAt != nil {
		t := *a.RevokedAt
		inv.RevokedAt = &t
	}
	return inv, nil
}

// Invite implements ports.InviteStore.
func (l *Ledger) Invite(_ context.Context, id string) (invites.Invite, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.invite(id)
}

// InviteByTokenHash implements ports.InviteStore.
func (l *Ledger) InviteByTokenHash(_ context.Context, hash string) (invites.Invite, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id, ok := l.byToken[hash]
	if !ok {
		return invites.Invite{}, errs.New(errs.NotFound, "no such invite")
	}
	return l.invite(id)
}

// RevokeInvite implements ports.InviteStore.
func (l *Ledger) RevokeInvite(_ context.Context, id string, at time.Time) (invites.Invite, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if a, ok := l.accounts[credit.InviteAccount(id)]; ok && a.RevokedAt == nil {
		t := at.UTC()
		a.RevokedAt = &t
	}
	return l.invite(id)
}

// Invites implements ports.InviteStore.
func (l *Ledger) Invites(_ context.Context) ([]invites.Invite, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]invites.Invite, 0, len(l.invites))
	for id := range l.invites {
		inv, _ := l.invite(id)
		out = append(out, inv)
	}
	slices.SortFunc(out, func(a, b invites.Invite) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}
