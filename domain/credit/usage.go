package credit

import "time"

// Usage is what a model call used, as the provider reported it.
type Usage struct {
	InferenceID  string // NEAR AI's Inference-Id header
	Model        string
	TokensIn     int
	TokensCached int
	TokensOut    int
}

// UsageRecord is one model call charged to a person's credit (usage/v1).
type UsageRecord struct {
	ReservationID string
	Account       string
	RunID         string
	Usage
	List       Micros  // the call at the model's list prices
	Charged    Micros  // everything this call put on the credit: bill, fee and tip
	Billed     *Micros // the provider's own bill, once known
	Reconciled Micros  // what reconciling with that bill gave back (<0) or charged (>0)
	At         time.Time
}

// UsageView is a usage/v1 record as GET /api/v1/me/usage shows it.
type UsageView struct {
	Version       string      `json:"version"`
	InferenceID   string      `json:"inference_id"`
	Model         string      `json:"model"`
	RunID         string      `json:"run_id"`
	At            time.Time   `json:"at"`
	Tokens        TokenCounts `json:"tokens"`
	ListUSD       USDNumber   `json:"list_usd"`
	ChargedUSD    USDNumber   `json:"charged_usd"`
	BilledUSD     *USDNumber  `json:"billed_usd"`
	ReconciledUSD USDNumber   `json:"reconciled_usd"`
}

// TokenCounts are a call's tokens.
type TokenCounts struct {
	In     int `json:"in"`
	Cached int `json:"cached"`
	Out    int `json:"out"`
}

// View is r as usage/v1.
func (r UsageRecord) View() UsageView {
	v := UsageView{Version: "usage/v1", InferenceID: r.InferenceID, Model: r.Model, RunID: r.RunID, At: r.At.UTC(),
		Tokens:  TokenCounts{In: r.TokensIn, Cached: r.TokensCached, Out: r.TokensOut},
		ListUSD: r.List.USD(), ChargedUSD: r.Charged.USD(), ReconciledUSD: r.Reconciled.USD()}
	if r.Billed != nil {
		b := r.Billed.USD()
		v.BilledUSD = &b
	}
	return v
}

// Settlement is what settling a hold writes: the charges, and for a person's
// credit the call's usage record.
type Settlement struct {
	Charges []Charge
	Usage   *UsageRecord
}

// PlanReconcile is the entry that brings a call's charge to the provider's
// own bill: the difference between the bill and the list price it was
// charged at (negative gives back).
func PlanReconcile(r UsageRecord, billed Micros) Micros {
	return billed - r.List
}

// TopUp is one NEAR transfer onto a person's credit.
type TopUp struct {
	TxHash   string
	Network  string
	PersonID string
	WalletID string
	Yocto    string // the NEAR transferred, in yoctoNEAR
	NearUSD  Micros // dollars per NEAR it was counted at
	Added    Micros // dollars added to the credit
	Fee      Micros // switch B, kept apart
	// BlockAt is the transfer's block time; PriceAt and PriceSource say which
	// reading of the NEAR price, the nearest that time, NearUSD is.
	BlockAt     time.Time
	PriceAt     time.Time
	PriceSource string
}
