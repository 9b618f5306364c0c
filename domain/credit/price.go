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

// PriceDoc is the price as GET /api/v1/price shows it (price/v2). Each part
// of what a person pays is its own entry on their credit, named in Entries.
type PriceDoc struct {
	Version  string      `json:"version"`
	Currency string      `json:"currency"`
	Bill     PriceBill   `json:"bill"`
	BaseFee  BaseFeeDoc  `json:"base_fee"`
	Tip      TipScaleDoc `json:"tip"`
	Entries  []string    `json:"entries"`
}

// PriceBill is the first part: the provider's own bill.
type PriceBill struct {
	Provider string `json:"provider"`
	What     string `json:"what"`
}

// BaseFeeDoc is the five switches, each off unless turned on.
type BaseFeeDoc struct {
	A PercentSwitch `json:"A"`
	B PercentSwitch `json:"B"`
	C AmountSwitch  `json:"C"`
	D ToolSwitch    `json:"D"`
	E AmountSwitch  `json:"E"`
}

// PercentSwitch is a fee at a percent.
type PercentSwitch struct {
	On      bool      `json:"on"`
	What    string    `json:"what"`
	Percent USDNumber `json:"percent"` // written from basis points: 250 bps is 2.5 (see bpsPercent)
}

// AmountSwitch is a fee (or allowance) in dollars.
type AmountSwitch struct {
	On   bool      `json:"on"`
	What string    `json:"what"`
	USD  USDNumber `json:"usd"`
}

// ToolSwitch is an amount per use of a tool, by name.
type ToolSwitch struct {
	On    bool                 `json:"on"`
	What  string               `json:"what"`
	Tools map[string]USDNumber `json:"tools"`
}

// TipScaleDoc is the tip's scale.
type TipScaleDoc struct {
	What           string `json:"what"`
	DefaultPercent int    `json:"default_percent"`
	MinPercent     int    `json:"min_percent"`
	MaxPercent     int    `json:"max_percent"`
	StepPercent    int    `json:"step_percent"`
}

// bpsPercent writes basis points as a percent number through USDNumber's
// exact decimal writer (100 bps = 1 percent = 10^4 of its units).
func bpsPercent(bps int64) USDNumber { return USDNumber(bps * 10_000) }

// Doc is p as price/v2.
func (p Price) Doc() PriceDoc {
	tools := map[string]USDNumber{}
	for name, m := range p.PerTool {
		tools[name] = m.USD()
	}
	return PriceDoc{
		Version:  "price/v2",
		Currency: "USD",
		Bill:     PriceBill{Provider: "NEAR AI", What: "NEAR AI's own bill for each model call, counted at the model's list prices and reconciled with NEAR AI's bill once it is known"},
		BaseFee: BaseFeeDoc{
			A: PercentSwitch{On: p.CallFeeBps > 0, What: "a percent of each call's bill", Percent: bpsPercent(p.CallFeeBps)},
			B: PercentSwitch{On: p.TopUpFeeBps > 0, What: "a percent of each top-up", Percent: bpsPercent(p.TopUpFeeBps)},
			C: AmountSwitch{On: p.PerTurn > 0, What: "an amount per turn", USD: p.PerTurn.USD()},
			D: ToolSwitch{On: len(p.PerTool) > 0, What: "an amount per use of a tool, by name", Tools: tools},
			E: AmountSwitch{On: p.FreeAllowance > 0, What: "a free allowance of NEAR AI's bill before any fee", USD: p.FreeAllowance.USD()},
		},
		Tip: TipScaleDoc{What: "the person's tip: a donation at a percent of each call's bill, charged apart from the fee",
			DefaultPercent: 0, MinPercent: TipMinPercent, MaxPercent: TipMaxPercent, StepPercent: TipStepPercent},
		Entries: []string{"model call", "Petals base fee (call)", "Petals base fee (top-up)", "Petals base fee (turn)", "Petals base fee (tool)", "tip", "reconciled with NEAR AI's bill"},
	}
}

// ValidTip reports whether percent is on the tip's scale.
func ValidTip(percent int) bool {
	return percent >= TipMinPercent && percent <= TipMaxPercent && (percent-TipMinPercent)%TipStepPercent == 0
}
