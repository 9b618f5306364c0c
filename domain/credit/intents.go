package credit

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// A top-up through NEAR Intents: a person asks for usd dollars, 1Click
// quotes a swap (EXACT_OUTPUT) from any token it lists into that many USDC
// delivered inside NEAR Intents to the site's receiver, and the person sends
// the quoted amount to the quote's deposit address. When 1Click says the swap
// is SUCCESS, the USDC it delivered goes onto the person's credit, once, as
// its own entry: USDC's smallest unit is a millionth of a dollar, so what
// arrived is counted in micro-dollars one for one, never through a float.

// SwapStatus is 1Click's own status of a swap.
type SwapStatus string

// 1Click's statuses (GET /v0/status).
const (
	SwapPendingDeposit    SwapStatus = "PENDING_DEPOSIT"
	SwapKnownDepositTx    SwapStatus = "KNOWN_DEPOSIT_TX"
	SwapProcessing        SwapStatus = "PROCESSING"
	SwapSuccess           SwapStatus = "SUCCESS"
	SwapIncompleteDeposit SwapStatus = "INCOMPLETE_DEPOSIT"
	SwapRefunded          SwapStatus = "REFUNDED"
	SwapFailed            SwapStatus = "FAILED"
)

// Known reports whether s is one of 1Click's statuses.
func (s SwapStatus) Known() bool {
	switch s {
	case SwapPendingDeposit, SwapKnownDepositTx, SwapProcessing, SwapSuccess, SwapIncompleteDeposit, SwapRefunded, SwapFailed:
		return true
	}
	return false
}

// Final reports whether a swap in s is over: delivered, refunded or failed.
// A final status is never replaced (a status that flips back afterwards is
// not believed), and nobody follows the swap any more. INCOMPLETE_DEPOSIT is
// not final: the person may still send the rest.
func (s SwapStatus) Final() bool {
	return s == SwapSuccess || s == SwapRefunded || s == SwapFailed
}

// MaxIntentTopUp is the most one top-up through NEAR Intents asks for
// (contract: 400 for an amount over $1,000).
const MaxIntentTopUp Micros = 1000 * MicrosPerUSD

// IntentGrace is how long past its deadline a top-up is still followed: a
// deposit made just before the deadline may take a while to settle.
const IntentGrace = 24 * time.Hour

// USDCDecimals is the decimals of the USDC a top-up delivers: its smallest
// unit is a micro-dollar.
const USDCDecimals = 6

// IntentTopUp is one top-up through NEAR Intents: the quote 1Click gave, and
// where the swap stands.
type IntentTopUp struct {
	DepositAddress string
	DepositMemo    string // empty unless 1Click gave one
	PersonID       string
	USD            Micros // what the person asked for
	OriginAsset    string
	RefundTo       string
	// The quote's amounts, as 1Click wrote them (decimal text): amount_in in
	// the origin token's smallest unit, amount_out in USDC's.
	AmountIn          string
	AmountInFormatted string
	AmountInUSD       string
	AmountOut         string
	AmountOutUSD      string
	Deadline          time.Time
	// Quote is 1Click's whole quote answer (its signature included), kept in
	// case of a dispute, as 1Click asks.
	Quote []byte

	Status        SwapStatus
	OriginTx      string
	DestinationTx string
	Credited      Micros // 0 until SUCCESS
	Fee           Micros // switch B, charged when credited
	CreditedAt    *time.Time
	CheckedAt     *time.Time
	CreatedAt     time.Time
}

// Followed reports whether the top-up is still followed at now: not final,
// and no more than IntentGrace past its deadline.
func (t IntentTopUp) Followed(now time.Time) bool {
	return !t.Status.Final() && now.Before(t.Deadline.Add(IntentGrace))
}

// SwapObservation is what 1Click says of a swap now.
type SwapObservation struct {
	Status SwapStatus
	// AmountOut is what was delivered, in USDC's smallest unit, when 1Click
	// says (its swapDetails.amountOut); empty otherwise.
	AmountOut     string
	OriginTx      string
	DestinationTx string
}

var unitsPattern = regexp.MustCompile(`^[0-9]{1,30}$`)

// ParseUnits reads an amount in a token's smallest unit (decimal digits).
// Past what micro-dollars can hold it is refused.
func ParseUnits(s string) (Micros, error) {
	if !unitsPattern.MatchString(s) {
		return 0, fmt.Errorf("%q is not a whole amount", s)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return Micros(v), nil
}

// IntentCredit is what a top-up at SUCCESS adds to the person's credit: the
// USDC delivered (or, when 1Click doesn't say, the quote's amount_out), one
// micro-dollar a unit, never more than the person asked for (an
// EXACT_OUTPUT swap sends anything over back to refund_to). fee is switch B
// on it.
func IntentCredit(t IntentTopUp, obs SwapObservation, price Price) (added, fee Micros, err error) {
	if obs.Status != SwapSuccess {
		return 0, 0, nil
	}
	delivered := obs.AmountOut
	if delivered == "" {
		delivered = t.AmountOut
	}
	m, err := ParseUnits(delivered)
	if err != nil {
		return 0, 0, fmt.Errorf("credit: the amount delivered: %w", err)
	}
	added = min(m, t.USD)
	return added, price.TopUpFee(added), nil
}
