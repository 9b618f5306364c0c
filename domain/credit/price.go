package credit

// Price is what a person pays (price/v2): the provider's own bill, plus a base
// fee made of five switches (A to E), plus the person's tip. Every switch is
// off unless the operator turns it on. Percentages are in basis points
// (1/100 of a percent) so no float ever touches money.
type Price struct {
	// A: a percent of each call's bill.
	CallFeeBps int64
	// B: a percent of each top-up.
	TopUpFeeBps int64
	// C: an amount per turn.
	PerTurn Micros
	// D: an amount per use of a tool, by name.
	PerTool map[string]Micros
	// E: a free allowance of the provider's bill before any fee.
	FreeAllowance Micros
}

// Tip scale (contract: 0 to 50 in steps of 1, 0 by default).
const (
	TipMinPercent  = 0
	TipMaxPercent  = 50
	TipStepPercent = 1
)

// CallFee is switch A on a call's bill, rounded down to the micro-dollar.
func (p Price) CallFee(bill Micros) Micros {
	if p.CallFeeBps <= 0 || bill <= 0 {
		return 0
	}
	return bill * Micros(p.CallFeeBps) / 10_000
}

// TipOf is a tip of percent on a call's bill, rounded down.
func TipOf(bill Micros, percent int) Micros {
	if percent <= 0 || bill <= 0 {
		return 0
	}
	return bill * Micros(percent) / 100
}
