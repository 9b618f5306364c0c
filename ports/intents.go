package ports

import (
	"context"
	"time"

	"github.com/petal-near/petal/domain/credit"
)

// Swaps is NEAR Intents' 1Click swap API: what a person can pay from, a
// quote for a top-up, and where a swap stands. Errors: errs.BadInput when
// 1Click refuses the request (an asset it doesn't know, an amount it can't
// quote; the message says why), errs.SourceFailed when it can't be reached
// or answers nonsense (nothing is decided then).
type Swaps interface {
	// SwapTokens lists the tokens 1Click swaps from.
	SwapTokens(ctx context.Context) ([]SwapToken, error)
	// QuoteSwap asks for a real (not dry) EXACT_OUTPUT quote.
	QuoteSwap(ctx context.Context, req SwapQuoteRequest) (SwapQuote, error)
	// SwapStatus reads where the swap behind a deposit address stands.
	SwapStatus(ctx context.Context, depositAddress, depositMemo string) (credit.SwapObservation, error)
}

// SwapToken is one token 1Click lists. USD is its price as 1Click writes it
// (decimal text, checked to be a plain decimal), never parsed into a float.
type SwapToken struct {
	Asset    string
	Chain    string
	Symbol   string
	Decimals int
	USD      string
}

// SwapQuoteRequest asks for amountOut of destinationAsset delivered inside
// NEAR Intents to recipient, paid from originAsset, refunds to refundTo on
// the origin chain, the deposit open until deadline.
type SwapQuoteRequest struct {
	OriginAsset      string
	DestinationAsset string
	AmountOut        string // in the destination asset's smallest unit
	Recipient        string
	RefundTo         string
	Deadline         time.Time
}

// SwapQuote is 1Click's quote: where to send what, and its raw answer.
type SwapQuote struct {
	DepositAddress    string
	DepositMemo       string
	AmountIn          string
	AmountInFormatted string
	AmountInUSD       string
	AmountOut         string
	AmountOutUSD      string
	Deadline          time.Time
	Raw               []byte
}

// IntentTopUps keeps top-ups through NEAR Intents, keyed by deposit address.
type IntentTopUps interface {
	// CreateIntentTopUp stores a new top-up; a deposit address already
	// stored is errs.Conflict.
	CreateIntentTopUp(ctx context.Context, t credit.IntentTopUp) error
	// IntentTopUp reads one, or errs.NotFound.
	IntentTopUp(ctx context.Context, depositAddress string) (credit.IntentTopUp, error)
	// ObserveIntentTopUp, in one transaction, locks the top-up, records what
	// 1Click says of it at at (a final status is never replaced) and, the
	// first time it reaches SUCCESS, asks plan for the credit and switch B's
	// fee and writes them on the person's credit as their own entries.
	// credited is true only for that one call: however many observe a
	// SUCCESS at once, the credit lands once.
	ObserveIntentTopUp(ctx context.Context, depositAddress string, obs credit.SwapObservation, at time.Time,
		plan func(t credit.IntentTopUp) (added, fee credit.Micros, err error)) (t credit.IntentTopUp, credited bool, err error)
	// FollowedIntentTopUps lists up to limit top-ups still followed at now
	// (credit.IntentTopUp.Followed), the least recently checked first.
	FollowedIntentTopUps(ctx context.Context, now time.Time, limit int) ([]credit.IntentTopUp, error)
}
