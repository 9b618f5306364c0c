package credit

import "time"

// NearQuote is one reading of the NEAR price: micro-dollars per NEAR, when it
// was read and where from.
type NearQuote struct {
	At     time.Time
	USD    Micros
	Source string
}

// How far from a transfer's block time a price reading may be to price it.
// Readings are taken every ten minutes, so one before the block is never
// more than one missed reading away, and one after it within one interval.
const (
	PriceBeforeWithin = 20 * time.Minute
	PriceAfterWithin  = 10 * time.Minute
)

// PriceAtBlock chooses the price of a transfer made at blockAt from the
// reading just before it (at or before blockAt, within PriceBeforeWithin)
// and the one just after it (within PriceAfterWithin), either absent: the
// nearer one, but never a later reading higher than the earlier one, so
// holding a transaction hash while NEAR rises gains nothing. With no reading
// in reach, ok is false.
func PriceAtBlock(blockAt time.Time, before, after *NearQuote) (q NearQuote, ok bool) {
	if before != nil && (before.At.After(blockAt) || blockAt.Sub(before.At) > PriceBeforeWithin || before.USD <= 0) {
		before = nil
	}
	if after != nil && (!after.At.After(blockAt) || after.At.Sub(blockAt) > PriceAfterWithin || after.USD <= 0) {
		after = nil
	}
	switch {
	case before == nil && after == nil:
		return NearQuote{}, false
	case after == nil:
		return *before, true
	case before == nil:
		return *after, true
	case after.At.Sub(blockAt) < blockAt.Sub(before.At) && after.USD <= before.USD:
		return *after, true
	default:
		return *before, true
	}
}
