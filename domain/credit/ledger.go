package credit

import (
	"fmt"
	"time"

	"github.com/petal-near/petal/domain/errs"
)

// The ledger. Every amount that can be spent lives in an account: one per
// invite (its budget), one per person (what they funded), and one per UTC day
// for the server's daily cap on unpaid model spend. An account keeps what it
// may spend (Limit), what has been charged (Spent) and what calls in flight
// hold (Held). A model call reserves a hold sized from its worst case on
// every account that pays for it, in the same transaction that checks what is
// left; it then settles (the hold becomes a charge) or releases.

// AccountKind says what an account is for.
type AccountKind string

// Account kinds.
const (
	KindInvite AccountKind = "invite"
	KindPerson AccountKind = "person"
	KindDaily  AccountKind = "daily"
)

// InvitePerChat is the most one chat spends of an invite (contract: limits
// per chat, $0.05 on an invite).
const InvitePerChat Micros = 50_000

// InviteAccount, PersonAccount and DailyAccount name accounts.
func InviteAccount(inviteID string) string { return "invite:" + inviteID }

// PersonAccount is the account of a person's own credit.
func PersonAccount(personID string) string { return "person:" + personID }

// DailyAccount is the daily cap's account for the UTC day of t: a new day is a
// new account, which is how the cap resets at midnight UTC.
func DailyAccount(t time.Time) string { return "daily:" + t.UTC().Format(time.DateOnly) }

// NextMidnightUTC is when the daily cap of t's day resets.
func NextMidnightUTC(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, time.UTC)
}

// Account is one account's state.
type Account struct {
	ID        string
	Kind      AccountKind
	Limit     Micros // an invite's budget, a person's funded total, the day's cap
	Spent     Micros
	Held      Micros
	ExpiresAt *time.Time // an invite's end
	RevokedAt *time.Time // an invite revoked
}

// Left is what the account may still hold or spend; it can be negative when
// the last call passed the budget.
func (a Account) Left() Micros { return a.Limit - a.Spent - a.Held }

// PayerKind says who pays for a chat.
type PayerKind string

// Payer kinds, in the order "Who pays" tries them.
const (
	PayPerson PayerKind = "person" // the person's own credit, not held by the daily cap
	PayInvite PayerKind = "invite" // the session's invite and the daily cap together
	PayOpen   PayerKind = "open"   // an open server: the daily cap alone
)

// Payer is who pays for one chat's model calls, as the gate decided.
type Payer struct {
	Kind     PayerKind
	PersonID string // PayPerson
	InviteID string // PayInvite
	// PerChat caps what one chat takes from the first account; 0 is no cap.
	PerChat Micros
	// Chat names the chat PerChat counts on: each POST /api/v1/agent/chat,
	// a follow-up on a run included, is its own chat. Empty counts the run.
	Chat string
	// DailyCap is the server's daily cap; it binds PayInvite and PayOpen.
	DailyCap Micros
	// Quote is the quote the chat is bound to (POST /api/v1/agent/quote),
	// when it is: PerChat is then at most its max, and a refusal names it.
	Quote    string
	QuoteMax Micros
}

// BindQuote is p bound to quote: what the chat holds never passes max.
func (p Payer) BindQuote(quote string, max Micros) Payer {
	if p.PerChat <= 0 || max < p.PerChat {
		p.PerChat = max
	}
	p.Quote, p.QuoteMax = quote, max
	return p
}

// AccountSpec names an account a reservation needs, and how to make it if it
// is missing: the day's cap account is made on first use at the cap.
type AccountSpec struct {
	ID     string
	Kind   AccountKind
	Limit  Micros
	Create bool // make it when missing (daily); otherwise missing means nothing to spend
}

// Accounts is the accounts that pay, first the one the per-chat cap counts on.
func (p Payer) Accounts(now time.Time) []AccountSpec {
	daily := AccountSpec{ID: DailyAccount(now), Kind: KindDaily, Limit: p.DailyCap, Create: true}
	switch p.Kind {
	case PayPerson:
		return []AccountSpec{{ID: PersonAccount(p.PersonID), Kind: KindPerson}}
	case PayInvite:
		return []AccountSpec{{ID: InviteAccount(p.InviteID), Kind: KindInvite}, daily}
	default:
		return []AccountSpec{daily}
	}
}

// HoldLine is what one reservation holds on one account. A hold belongs to
// exactly one account.
type HoldLine struct {
	Account string
	Kind    AccountKind
	Amount  Micros
}

// Hold is one model call's reservation: a line per paying account.
type Hold struct {
	ID        string
	RunID     string
	ChatID    string // the chat the per-chat cap counts it on
	ProcessID string
	Payer     Payer
	Lines     []HoldLine
	// BilledBefore is, as the store reads it when settling with the free
	// allowance (E) on, the NEAR AI bill (model call entries) already on the
	// hold's person account.
	BilledBefore Micros
}

// Total is what the hold holds on its first account.
func (h Hold) Total() Micros {
	if len(h.Lines) == 0 {
		return 0
	}
	return h.Lines[0].Amount
}

// PlanHold decides a reservation: given the paying accounts (locked, in the
// order Payer.Accounts gives), what this chat has already taken from the first
// (held or charged), and the call's worst case, it returns the lines to hold
// or the refusal. A call goes ahead only when its whole worst case fits in
// what every account has left and in what is left of the chat's cap, and it
// holds that worst case: so, as long as a call never costs more than its worst
// case, no budget and no chat's cap is ever passed, however many calls run at
// once (the accounts are locked while this decides).
func PlanHold(p Payer, accounts []Account, chatTaken, worstCase Micros, now time.Time) ([]HoldLine, error) {
	if worstCase <= 0 {
		return nil, fmt.Errorf("credit: a hold must be more than zero, not %s", worstCase)
	}
	specs := p.Accounts(now)
	if len(accounts) != len(specs) {
		return nil, refusalNoAccount(p)
	}
	lines := make([]HoldLine, 0, len(accounts))
	for i, a := range accounts {
		if a.ID != specs[i].ID {
			return nil, fmt.Errorf("credit: account %s where %s was expected", a.ID, specs[i].ID)
		}
		if a.RevokedAt != nil || (a.ExpiresAt != nil && !now.Before(*a.ExpiresAt)) {
			return nil, errs.New(errs.BudgetExhausted, "this invite has ended, so the chat stops here",
				"ask for a new invite, or sign in and pay with NEAR: /connect")
		}
		if a.Left() <= 0 {
			return nil, refusalSpent(a, now)
		}
		if worstCase > a.Left() {
			return nil, refusalTooDear(a, worstCase, now)
		}
		lines = append(lines, HoldLine{Account: a.ID, Kind: a.Kind, Amount: worstCase})
	}
	if p.Quote != "" && p.PerChat > 0 && chatTaken+worstCase > p.PerChat {
		return nil, errs.Newf(errs.BudgetExhausted, "the next model call could cost up to $%s, more than the $%s left of quote %s ($%s), so the chat stops at its quote",
			trimUSD(worstCase), trimUSD(max(p.PerChat-chatTaken, 0)), p.Quote, trimUSD(p.PerChat)).
			WithHint("ask for a new quote for the chat and carry on with this run_id")
	}
	if p.PerChat > 0 && chatTaken >= p.PerChat {
		return nil, errs.Newf(errs.BudgetExhausted, "this chat has used the $%s one chat may spend", trimUSD(p.PerChat)).
			WithHint("start a new chat to go on")
	}
	if p.PerChat > 0 && chatTaken+worstCase > p.PerChat {
		return nil, errs.Newf(errs.BudgetExhausted, "the next model call could cost up to $%s, more than the $%s left of the $%s one chat may spend",
			trimUSD(worstCase), trimUSD(p.PerChat-chatTaken), trimUSD(p.PerChat)).
			WithHint("start a new chat with a shorter message")
	}
	return lines, nil
}

// refusalTooDear is the refusal of a call whose worst case is more than what
// account a has left (though it has something left).
func refusalTooDear(a Account, worstCase Micros, now time.Time) error {
	msg := fmt.Sprintf("the next model call could cost up to $%s, more than the $%s ", trimUSD(worstCase), trimUSD(a.Left()))
	switch a.Kind {
	case KindPerson:
		return errs.New(errs.PaymentRequired, msg+"left of your credit", "add credit with NEAR (pay), or send a shorter message")
	case KindInvite:
		return errs.New(errs.BudgetExhausted, msg+"left of this invite's budget", "send a shorter message, or bring your own agent: /skill.md")
	default:
		secs := int(NextMidnightUTC(now).Sub(now).Seconds()) + 1
		return errs.New(errs.BudgetExhausted, msg+"left of today's budget for Petal's own model",
			"send a shorter message, or bring your own agent: /skill.md").WithRetryAfter(secs)
	}
}

func refusalNoAccount(p Payer) error {
	if p.Kind == PayPerson {
		return errs.New(errs.PaymentRequired, "you have no credit of your own", "add some with NEAR (pay)")
	}
	return errs.New(errs.InviteRequired, "an invite is needed for Petal's agent", "/connect")
}

func refusalSpent(a Account, now time.Time) error {
	switch a.Kind {
	case KindPerson:
		return errs.New(errs.PaymentRequired, "your credit is spent", "add more with NEAR (pay)")
	case KindInvite:
		return errs.New(errs.BudgetExhausted, "this invite's budget is spent", "ask for a new invite, or bring your own agent: /skill.md")
	default:
		secs := int(NextMidnightUTC(now).Sub(now).Seconds()) + 1
		return errs.New(errs.BudgetExhausted, "today's budget for Petal's own model is spent; it starts again at midnight UTC",
			"bring your own agent: /skill.md").WithRetryAfter(secs)
	}
}

func trimUSD(m Micros) string {
	b, _ := m.USD().MarshalJSON()
	return string(b)
}

// Charge is one entry settling puts on an account.
type Charge struct {
	Account string
	Kind    EntryKind
	Amount  Micros
	Note    string
}

// EntryKind is what a ledger entry records.
type EntryKind string

// Entry kinds.
const (
	EntryCall      EntryKind = "call"      // the provider's bill for a model call
	EntryFee       EntryKind = "fee"       // Petal's base fee
	EntryTip       EntryKind = "tip"       // the person's tip
	EntryTopUp     EntryKind = "top_up"    // credit added (NEAR transfer)
	EntryReconcile EntryKind = "reconcile" // a difference with the provider's own bill
)

// PlanSettle is what settles hold for a call that cost actual: every
// account the hold is on is charged the call (an invite and the daily cap both
// count it: they pay NEAR AI's bill only). A person's credit also carries the
// price's base fee (A on the call, C for a turn, D per tool use, none within
// the free allowance E; see Price.Fees) and their tip, each its own entry,
// and the call's usage record when usage is given.
func PlanSettle(h Hold, actual Micros, price Price, tipPercent int, usage *Usage, cc CallContext, now time.Time) (Settlement, error) {
	if actual < 0 {
		return Settlement{}, fmt.Errorf("credit: a charge is never negative, not %s", actual)
	}
	var out Settlement
	for _, l := range h.Lines {
		out.Charges = append(out.Charges, Charge{Account: l.Account, Kind: EntryCall, Amount: actual, Note: "model call"})
		if l.Kind != KindPerson {
			continue
		}
		charged := actual
		add := func(kind EntryKind, amount Micros, note string) {
			if amount > 0 {
				out.Charges = append(out.Charges, Charge{Account: l.Account, Kind: kind, Amount: amount, Note: note})
				charged += amount
			}
		}
		fees := price.Fees(actual, cc)
		add(EntryFee, fees.Call, "Petals base fee (call)")
		add(EntryFee, fees.Turn, "Petals base fee (turn)")
		for i, fee := range fees.Tools {
			add(EntryFee, fee, "Petals base fee (tool "+cc.Tools[i]+")")
		}
		add(EntryTip, TipOf(actual, tipPercent), "tip")
		if usage != nil {
			out.Usage = &UsageRecord{ReservationID: h.ID, Account: l.Account, RunID: h.RunID, Usage: *usage, List: actual, Charged: charged, At: now}
		}
	}
	return out, nil
}
