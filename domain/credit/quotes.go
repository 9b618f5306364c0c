package credit

import "time"

// A quoted chat (issue 18, after Palate's quote-first access): before any
// spend, POST /api/v1/agent/quote prices a chat at the most it can cost, from
// the same worst case the ledger holds, and keeps the quote for QuoteTTL. A
// chat that names it is bound to it: what it holds never passes the quote's
// max. A quote is used once.

// QuoteTTL is how long a quote can be used.
const QuoteTTL = 5 * time.Minute

// ChatQuote is a stored quote.
type ChatQuote struct {
	ID string
	// ThreadSHA256 is the SHA-256 of the thread the chat will send (its
	// messages as a run keeps them): a quote is for those messages only.
	ThreadSHA256 string
	RunID        string // the run it continues; empty for a new one
	Max          Micros
	Payer        string // invite, credit, open, or empty: nobody would pay
	ExpiresAt    time.Time
	UsedAt       *time.Time
	CreatedAt    time.Time
}
