package credit

import (
	"fmt"
	"regexp"
	"strings"
)

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
		Entries: []string{"model call", "Petals base fee (call)", "Petals base fee (top-up)", "Petals base fee (turn)", "Petals base fee (tool <name>)", "tip", "reconciled with NEAR AI's bill"},
	}
}

// ValidTip reports whether percent is on the tip's scale.
func ValidTip(percent int) bool {
	return percent >= TipMinPercent && percent <= TipMaxPercent && (percent-TipMinPercent)%TipStepPercent == 0
}

// Every amount below is rounded down to the micro-dollar: a person is never
// charged a fraction of a micro-dollar more than the switches say.

// TopUpFee is switch B on a top-up of added, rounded down.
func (p Price) TopUpFee(added Micros) Micros {
	if p.TopUpFeeBps <= 0 || added <= 0 {
		return 0
	}
	return added * Micros(p.TopUpFeeBps) / 10_000
}

// ToolFee is switch D for one use of the tool named; tools without an amount
// cost nothing.
func (p Price) ToolFee(name string) Micros {
	if m := p.PerTool[name]; m > 0 {
		return m
	}
	return 0
}

// CallFees is the base fee one model call carries on a person's credit.
type CallFees struct {
	Call  Micros   // A, on the part of the bill past the free allowance
	Turn  Micros   // C, when the call's answer ends the turn
	Tools []Micros // D, one per use, in the order of CallContext.Tools
}

// CallContext is what a call's base fee depends on beyond its bill.
type CallContext struct {
	// Tools are the tools the chat ran since its previous model call, by
	// name, one per use: their uses are charged with this call.
	Tools []string
	// EndsTurn: this call's answer ends the turn (it asks for no tool, or
	// it was offered none).
	EndsTurn bool
	// BilledBefore is the person's NEAR AI bill before this call, over all
	// their calls (at list price), which the free allowance (E) counts.
	BilledBefore Micros
}

// Fees is the base fee of a call with bill: A on the part of the bill past
// the person's free allowance, C when it ends a turn, D per tool use. While
// the person's bill, this call's included, is within the free allowance (E),
// the call carries no base fee at all.
func (p Price) Fees(bill Micros, cc CallContext) CallFees {
	var out CallFees
	if bill < 0 {
		bill = 0
	}
	feeable := bill
	if p.FreeAllowance > 0 {
		before := max(cc.BilledBefore, 0)
		if before+bill <= p.FreeAllowance {
			return out
		}
		// Only the part of this bill past the allowance carries switch A.
		feeable = before + bill - max(p.FreeAllowance, before)
	}
	out.Call = p.CallFee(feeable)
	if cc.EndsTurn && p.PerTurn > 0 {
		out.Turn = p.PerTurn
	}
	for _, name := range cc.Tools {
		out.Tools = append(out.Tools, p.ToolFee(name))
	}
	return out
}

// WorstCase is the most a call whose bill is at most bill can take from a
// person's credit: the bill, A on all of it, the tip, C, and D for the tools
// already run. A hold of this size keeps the per-chat cap a bound on spend.
func (p Price) WorstCase(bill Micros, tipPercent int, tools []string) Micros {
	return p.WorstCaseParts(bill, tipPercent, tools).Total()
}

// HoldParts is a call's worst case on a person's credit, part by part: what
// the ledger holds (Total) and what a quote shows.
type HoldParts struct {
	Bill Micros // NEAR AI's bill at most
	A    Micros // switch A on all of it
	Tip  Micros
	C    Micros // switch C, held on every call (any may end the turn)
	D    Micros // switch D for the tools run since the chat's previous call
}

// Total is the hold.
func (h HoldParts) Total() Micros { return h.Bill + h.A + h.Tip + h.C + h.D }

// WorstCaseParts is WorstCase, part by part.
func (p Price) WorstCaseParts(bill Micros, tipPercent int, tools []string) HoldParts {
	h := HoldParts{Bill: bill, A: p.CallFee(bill), Tip: TipOf(bill, tipPercent), C: max(p.PerTurn, 0)}
	for _, name := range tools {
		h.D += p.ToolFee(name)
	}
	return h
}

// ParsePercentBps reads a percent such as "2.5" as basis points, exactly: at
// most two decimal places, from 0 to 100.
func ParsePercentBps(s string) (int64, error) {
	m, err := ParseUSD(s)
	if err != nil || m < 0 || m%10_000 != 0 || m > 100*MicrosPerUSD {
		return 0, fmt.Errorf("%q is not a percent from 0 to 100 with at most two decimal places", s)
	}
	return int64(m / 10_000), nil
}

// ParsePerTool reads switch D's amounts: "render_flower=0.01,get_snapshot=0.02"
// (a tool's name, =, dollars; comma separated). Empty is none.
func ParsePerTool(s string) (map[string]Micros, error) {
	out := map[string]Micros{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, amount, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || !toolName.MatchString(name) {
			return nil, fmt.Errorf("%q is not tool_name=dollars", part)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s is named twice", name)
		}
		m, err := ParseUSD(amount)
		if err != nil || m < 0 {
			return nil, fmt.Errorf("%q is not a dollar amount (like 0.01) for %s", strings.TrimSpace(amount), name)
		}
		if m > 0 {
			out[name] = m
		}
	}
	return out, nil
}

var toolName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
