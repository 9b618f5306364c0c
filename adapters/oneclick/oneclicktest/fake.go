// Package oneclicktest is a fake of NEAR Intents' 1Click API that speaks its
// wire shape (GET /v0/tokens, POST /v0/quote, GET /v0/status), for tests that
// run the real adapter against it. A test scripts each swap's statuses and
// can take the whole API down.
package oneclicktest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// USDC is USDC on NEAR, which top-ups ask for.
const USDC = "nep141:17208628f84f5d6ad33f0da3bbbeb27ffcb398eac501a31bd6ad2011e36133a1"

// ETH is the token the fake quotes from at $2,500, 18 decimals.
const ETH = "nep141:eth.omft.near"

// Tokens is the fake's list, in 1Click's TokenResponse shape.
const Tokens = `[
 {"assetId":"nep141:wrap.near","decimals":24,"blockchain":"near","symbol":"wNEAR","price":3.1234567,"priceUpdatedAt":"2026-11-30T00:58:30.221Z","contractAddress":"wrap.near"},
 {"assetId":"nep141:eth.omft.near","decimals":18,"blockchain":"eth","symbol":"ETH","price":2500,"priceUpdatedAt":"2026-11-30T00:58:30.221Z"},
 {"assetId":"nep141:17208628f84f5d6ad33f0da3bbbeb27ffcb398eac501a31bd6ad2011e36133a1","decimals":6,"blockchain":"near","symbol":"USDC","price":0.999897,"priceUpdatedAt":"2026-11-30T00:58:30.221Z","contractAddress":"17208628f84f5d6ad33f0da3bbbeb27ffcb398eac501a31bd6ad2011e36133a1"}
]`

// Step is one answer of a swap's status: its status and, at SUCCESS, the
// USDC delivered (smallest unit; empty: 1Click doesn't say).
type Step struct {
	Status    string
	AmountOut string
}

// QuoteRequest is what the fake was asked, in 1Click's shape.
type QuoteRequest struct {
	Dry               bool   `json:"dry"`
	SwapType          string `json:"swapType"`
	SlippageTolerance int    `json:"slippageTolerance"`
	OriginAsset       string `json:"originAsset"`
	DepositType       string `json:"depositType"`
	DestinationAsset  string `json:"destinationAsset"`
	Amount            string `json:"amount"`
	RefundTo          string `json:"refundTo"`
	RefundType        string `json:"refundType"`
	Recipient         string `json:"recipient"`
	RecipientType     string `json:"recipientType"`
	Deadline          string `json:"deadline"`
}

// Fake is the fake 1Click.
type Fake struct {
	URL string

	mu      sync.Mutex
	down    bool
	quotes  []QuoteRequest
	auth    []string
	swaps   map[string][]Step // deposit address → the statuses still to answer (the last repeats)
	statusN map[string]int
	next    int
}

// New starts a fake 1Click for t.
func New(t testing.TB) *Fake {
	f := &Fake{swaps: map[string][]Step{}, statusN: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// Down makes every call answer 503 (true) or work again (false).
func (f *Fake) Down(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

// Script sets the statuses a deposit address answers from now on, one per
// status call, the last one repeating.
func (f *Fake) Script(depositAddress string, steps ...Step) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.swaps[depositAddress] = steps
}

// Quotes is every quote request the fake answered.
func (f *Fake) Quotes() []QuoteRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]QuoteRequest(nil), f.quotes...)
}

// Authorizations is the Authorization header of every quote request.
func (f *Fake) Authorizations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auth...)
}

// StatusCalls is how many times a deposit address's status was asked.
func (f *Fake) StatusCalls(depositAddress string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.statusN[depositAddress]
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func refuse(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]any{"message": message})
}

var digits = regexp.MustCompile(`^[0-9]+$`)

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	if down {
		http.Error(w, "upstream connect error", http.StatusServiceUnavailable)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/v0/tokens":
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(Tokens))
	case r.Method == http.MethodPost && r.URL.Path == "/v0/quote":
		f.quote(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v0/status":
		f.status(w, r)
	default:
		refuse(w, http.StatusNotFound, "Cannot "+r.Method+" "+r.URL.Path)
	}
}

func (f *Fake) quote(w http.ResponseWriter, r *http.Request) {
	var req QuoteRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		refuse(w, http.StatusBadRequest, "bad request: "+err.Error())
		return
	}
	deadline, err := time.Parse(time.RFC3339Nano, req.Deadline)
	switch {
	case err != nil:
		refuse(w, http.StatusBadRequest, "deadline must be an ISO date")
		return
	case req.SwapType != "EXACT_OUTPUT" && req.SwapType != "EXACT_INPUT":
		refuse(w, http.StatusBadRequest, "swapType must be a valid enum value")
		return
	case req.OriginAsset != ETH:
		refuse(w, http.StatusBadRequest, "tokenIn is not valid")
		return
	case !digits.MatchString(req.Amount) || req.Amount == "0":
		refuse(w, http.StatusBadRequest, "Amount is too low for bridge, try at least 1000000")
		return
	case req.RecipientType == "INTENTS" && req.Recipient == "":
		refuse(w, http.StatusBadRequest, "recipient is required")
		return
	}
	usdc, _ := strconv.ParseInt(req.Amount, 10, 64)
	// ETH at $2,500 and 1Click's 0.25%: wei = usdc (micro-dollars) × 10^12 / 2,500 × 1.0025.
	wei := usdc * 401 * 1_000_000 // usdc × 10^12 / 2500 × 1.0025 = usdc × 401,000,000
	f.mu.Lock()
	f.next++
	address := fmt.Sprintf("0x%040x", f.next)
	f.quotes = append(f.quotes, req)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	if _, ok := f.swaps[address]; !ok {
		f.swaps[address] = []Step{{Status: "PENDING_DEPOSIT"}}
	}
	f.mu.Unlock()
	dollars := fmt.Sprintf("%d.%06d", usdc/1_000_000, usdc%1_000_000)
	writeJSON(w, http.StatusOK, map[string]any{
		"correlationId": "corr-" + address,
		"timestamp":     "2026-11-30T12:00:00.000Z",
		"signature":     "ed25519:fake",
		"quoteRequest":  req,
		"quote": map[string]any{
			"depositAddress":     address,
			"amountIn":           strconv.FormatInt(wei, 10),
			"amountInFormatted":  formatUnits(wei, 18),
			"amountInUsd":        dollars,
			"minAmountIn":        strconv.FormatInt(wei, 10),
			"amountOut":          req.Amount,
			"amountOutFormatted": dollars,
			"amountOutUsd":       dollars,
			"minAmountOut":       req.Amount,
			"deadline":           deadline.UTC().Format("2006-01-02T15:04:05.000Z"),
			"timeWhenInactive":   deadline.UTC().Format("2006-01-02T15:04:05.000Z"),
			"timeEstimate":       120,
		},
	})
}

func (f *Fake) status(w http.ResponseWriter, r *http.Request) {
	address := r.URL.Query().Get("depositAddress")
	f.mu.Lock()
	steps, ok := f.swaps[address]
	f.statusN[address]++
	var step Step
	if ok && len(steps) > 0 {
		step = steps[0]
		if len(steps) > 1 {
			f.swaps[address] = steps[1:]
		}
	}
	f.mu.Unlock()
	if !ok {
		refuse(w, http.StatusNotFound, "Deposit address "+address+" not found")
		return
	}
	details := map[string]any{"intentHashes": []string{}, "nearTxHashes": []string{}, "originChainTxHashes": []any{}, "destinationChainTxHashes": []any{}}
	if step.Status != "PENDING_DEPOSIT" {
		details["originChainTxHashes"] = []any{map[string]string{"hash": "0xorigin" + address[2:10], "explorerUrl": "https://etherscan.io/tx/0xorigin"}}
	}
	if step.Status == "SUCCESS" {
		details["nearTxHashes"] = []string{"4xNearTx" + address[2:10]}
		if step.AmountOut != "" {
			details["amountOut"] = step.AmountOut
		}
	}
	if step.Status == "REFUNDED" {
		details["refundedAmount"] = "1"
		details["refundReason"] = "the deposit came too late"
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"correlationId": "corr-status",
		"status":        step.Status,
		"updatedAt":     "2026-11-30T12:05:00.000Z",
		"swapDetails":   details,
	})
}

// formatUnits writes an amount in a token's smallest unit as a decimal.
func formatUnits(v int64, decimals int) string {
	s := fmt.Sprintf("%0*d", decimals+1, v)
	whole, frac := s[:len(s)-decimals], strings.TrimRight(s[len(s)-decimals:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}
