package oneclick

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// USDCAsset is USDC on NEAR in 1Click's list: what a top-up delivers.
const USDCAsset = "nep141:17208628f84f5d6ad33f0da3bbbeb27ffcb398eac501a31bd6ad2011e36133a1"

// Bounds on what 1Click sends back, read before anything is decoded, and on
// how long each call may take.
const (
	tokensLimit   = 8 << 20
	answerLimit   = 64 << 10
	maxTokens     = 5000
	tokensTimeout = 10 * time.Second
	// QuoteTimeout bounds a quote, the longest call, and so the default client.
	QuoteTimeout  = 20 * time.Second
	statusTimeout = 10 * time.Second
	tokensTTL     = time.Minute
	// slippageBps is the slippage a top-up's quote allows on what the person
	// sends (EXACT_OUTPUT: what arrives is exact; anything over goes back).
	slippageBps = 100
)

// Swaps is ports.Swaps over 1Click's API (POST /v0/quote, GET /v0/status,
// GET /v0/tokens). The token list is cached for a minute.
type Swaps struct {
	baseURL string
	key     string
	http    *http.Client
	now     func() time.Time

	calls    ports.Counter
	duration ports.Histogram

	mu        sync.Mutex
	tokens    []ports.SwapToken
	tokensAt  time.Time
	tokensErr error
}

var _ ports.Swaps = (*Swaps)(nil)

// NewSwaps reads 1Click at baseURL; key is a partner key (a JWT, sent as a
// bearer token), empty for none: 1Click then adds its own fee to each swap.
func NewSwaps(baseURL, key string, client *http.Client, m ports.Metrics) *Swaps {
	if client == nil {
		client = &http.Client{Timeout: QuoteTimeout}
	}
	m = ports.MetricsOrNone(m)
	return &Swaps{baseURL: strings.TrimRight(baseURL, "/"), key: key, http: client, now: time.Now,
		calls:    m.Counter("petal_oneclick_calls_total", "Calls to NEAR Intents' 1Click API, by call and outcome.", "call", "outcome"),
		duration: m.Histogram("petal_oneclick_call_seconds", "How long calls to 1Click took, by call.", nil, "call")}
}

// call sends one request and reads at most limit bytes of a 200 answer.
// 1Click's own refusals (4xx) come back as errs.SourceFailed carrying its
// message; anything else that isn't a 200 too.
func (s *Swaps) call(ctx context.Context, name, method, path string, body any, limit int64, timeout time.Duration) (raw []byte, err error) {
	start := time.Now()
	defer func() {
		outcome := "ok"
		if err != nil {
			outcome = "failed"
		}
		s.calls.Add(1, name, outcome)
		s.duration.Observe(time.Since(start).Seconds(), name)
	}()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.baseURL+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.key != "" {
		req.Header.Set("Authorization", "Bearer "+s.key)
	}
	res, err := s.http.Do(req)
	if err != nil {
		return nil, errs.New(errs.SourceFailed, "NEAR Intents' 1Click could not be reached", "try again in a moment").WithCause(err)
	}
	defer res.Body.Close()
	raw, err = io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, errs.New(errs.SourceFailed, "NEAR Intents' 1Click's answer could not be read", "try again in a moment").WithCause(err)
	}
	if int64(len(raw)) > limit {
		return nil, errs.Newf(errs.SourceFailed, "NEAR Intents' 1Click answered more than %d bytes", limit)
	}
	if res.StatusCode != http.StatusOK {
		return nil, errs.Newf(errs.SourceFailed, "NEAR Intents' 1Click answered %d%s", res.StatusCode, refusalOf(raw)).
			WithHint("try again in a moment, or with another token or amount")
	}
	return raw, nil
}

// refusalOf is 1Click's own message ({"message": …}), shortened, as a
// suffix; empty when there is none.
func refusalOf(raw []byte) string {
	var body struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &body) != nil || body.Message == "" {
		return ""
	}
	msg := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, body.Message)
	if len(msg) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return ": " + msg
}

func decodeStrictly(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return errs.New(errs.SourceFailed, "NEAR Intents' 1Click answered in a shape petal doesn't know", "try again later").WithCause(err)
	}
	return nil
}

var (
	decimalText = regexp.MustCompile(`^[0-9]{1,40}(\.[0-9]{1,40})?$`)
	wholeText   = regexp.MustCompile(`^[0-9]{1,80}$`)
	idText      = regexp.MustCompile(`^[\x21-\x7e]{1,256}$`)
)

type tokenEntry struct {
	AssetID    string      `json:"assetId"`
	Decimals   int         `json:"decimals"`
	Blockchain string      `json:"blockchain"`
	Symbol     string      `json:"symbol"`
	Price      json.Number `json:"price"`
}

// SwapTokens implements ports.Swaps: the list, cached a minute (a failure
// too, so a 1Click that is down isn't asked on every request).
func (s *Swaps) SwapTokens(ctx context.Context) ([]ports.SwapToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tokensAt.IsZero() && s.now().Sub(s.tokensAt) < tokensTTL {
		return s.tokens, s.tokensErr
	}
	tokens, err := s.fetchTokens(ctx)
	s.tokens, s.tokensErr, s.tokensAt = tokens, err, s.now()
	return tokens, err
}

func (s *Swaps) fetchTokens(ctx context.Context) ([]ports.SwapToken, error) {
	raw, err := s.call(ctx, "tokens", http.MethodGet, "/v0/tokens", nil, tokensLimit, tokensTimeout)
	if err != nil {
		return nil, err
	}
	var list []tokenEntry
	if err := decodeStrictly(raw, &list); err != nil {
		return nil, err
	}
	out := make([]ports.SwapToken, 0, min(len(list), maxTokens))
	for _, t := range list {
		// Only entries petal can show whole; the rest are left out.
		price := t.Price.String()
		if len(out) == maxTokens || !idText.MatchString(t.AssetID) || !decimalText.MatchString(price) || t.Decimals < 0 || t.Decimals > 40 ||
			len(t.Symbol) > 32 || len(t.Blockchain) > 32 {
			continue
		}
		out = append(out, ports.SwapToken{Asset: t.AssetID, Chain: t.Blockchain, Symbol: t.Symbol, Decimals: t.Decimals, USD: price})
	}
	return out, nil
}

type quoteRequest struct {
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

type quoteAnswer struct {
	Quote struct {
		DepositAddress    string `json:"depositAddress"`
		DepositMemo       string `json:"depositMemo"`
		AmountIn          string `json:"amountIn"`
		AmountInFormatted string `json:"amountInFormatted"`
		AmountInUSD       string `json:"amountInUsd"`
		AmountOut         string `json:"amountOut"`
		AmountOutUSD      string `json:"amountOutUsd"`
		Deadline          string `json:"deadline"`
	} `json:"quote"`
}

// QuoteSwap implements ports.Swaps: a real quote (dry false), EXACT_OUTPUT,
// the deposit on the origin chain, the USDC to recipient inside NEAR
// Intents, refunds to refundTo on the origin chain.
func (s *Swaps) QuoteSwap(ctx context.Context, req ports.SwapQuoteRequest) (ports.SwapQuote, error) {
	raw, err := s.call(ctx, "quote", http.MethodPost, "/v0/quote", quoteRequest{
		Dry: false, SwapType: "EXACT_OUTPUT", SlippageTolerance: slippageBps,
		OriginAsset: req.OriginAsset, DepositType: "ORIGIN_CHAIN",
		DestinationAsset: req.DestinationAsset, Amount: req.AmountOut,
		RefundTo: req.RefundTo, RefundType: "ORIGIN_CHAIN",
		Recipient: req.Recipient, RecipientType: "INTENTS",
		Deadline: req.Deadline.UTC().Format("2006-01-02T15:04:05.000Z"),
	}, answerLimit, QuoteTimeout)
	if err != nil {
		return ports.SwapQuote{}, err
	}
	var a quoteAnswer
	if err := decodeStrictly(raw, &a); err != nil {
		return ports.SwapQuote{}, err
	}
	q := a.Quote
	deadline, derr := time.Parse(time.RFC3339Nano, q.Deadline)
	switch {
	case !idText.MatchString(q.DepositAddress) || len(q.DepositAddress) > 128, len(q.DepositMemo) > 128,
		!wholeText.MatchString(q.AmountIn), !wholeText.MatchString(q.AmountOut),
		!decimalText.MatchString(q.AmountInFormatted), !decimalText.MatchString(orZero(q.AmountInUSD)),
		!decimalText.MatchString(orZero(q.AmountOutUSD)), derr != nil:
		return ports.SwapQuote{}, errs.New(errs.SourceFailed, "NEAR Intents' 1Click answered a quote petal can't use", "try again in a moment")
	case q.AmountOut != req.AmountOut:
		return ports.SwapQuote{}, errs.Newf(errs.SourceFailed, "NEAR Intents' 1Click quoted %s out where %s was asked", q.AmountOut, req.AmountOut)
	}
	return ports.SwapQuote{DepositAddress: q.DepositAddress, DepositMemo: q.DepositMemo, AmountIn: q.AmountIn, AmountInFormatted: q.AmountInFormatted,
		AmountInUSD: orZero(q.AmountInUSD), AmountOut: q.AmountOut, AmountOutUSD: orZero(q.AmountOutUSD), Deadline: deadline, Raw: raw}, nil
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

type txDetails struct {
	Hash string `json:"hash"`
}

type statusAnswer struct {
	Status      string `json:"status"`
	SwapDetails struct {
		AmountOut                string      `json:"amountOut"`
		NearTxHashes             []string    `json:"nearTxHashes"`
		OriginChainTxHashes      []txDetails `json:"originChainTxHashes"`
		DestinationChainTxHashes []txDetails `json:"destinationChainTxHashes"`
	} `json:"swapDetails"`
}

// SwapStatus implements ports.Swaps.
func (s *Swaps) SwapStatus(ctx context.Context, depositAddress, depositMemo string) (credit.SwapObservation, error) {
	q := url.Values{"depositAddress": {depositAddress}}
	if depositMemo != "" {
		q.Set("depositMemo", depositMemo)
	}
	raw, err := s.call(ctx, "status", http.MethodGet, "/v0/status?"+q.Encode(), nil, answerLimit, statusTimeout)
	if err != nil {
		return credit.SwapObservation{}, err
	}
	var a statusAnswer
	if err := decodeStrictly(raw, &a); err != nil {
		return credit.SwapObservation{}, err
	}
	obs := credit.SwapObservation{Status: credit.SwapStatus(a.Status)}
	if !obs.Status.Known() {
		return credit.SwapObservation{}, errs.Newf(errs.SourceFailed, "NEAR Intents' 1Click answered a status petal doesn't know (%s)", strconv.Quote(short(a.Status)))
	}
	d := a.SwapDetails
	if d.AmountOut != "" {
		if !wholeText.MatchString(d.AmountOut) {
			return credit.SwapObservation{}, errs.New(errs.SourceFailed, "NEAR Intents' 1Click answered an amount delivered that is not a whole number")
		}
		obs.AmountOut = d.AmountOut
	}
	if len(d.OriginChainTxHashes) > 0 && idText.MatchString(d.OriginChainTxHashes[0].Hash) {
		obs.OriginTx = d.OriginChainTxHashes[0].Hash
	}
	// Delivered inside NEAR Intents: the last NEAR transaction is where it
	// landed, unless a destination chain's is given.
	switch {
	case len(d.DestinationChainTxHashes) > 0 && idText.MatchString(d.DestinationChainTxHashes[0].Hash):
		obs.DestinationTx = d.DestinationChainTxHashes[0].Hash
	case len(d.NearTxHashes) > 0 && idText.MatchString(d.NearTxHashes[len(d.NearTxHashes)-1]):
		obs.DestinationTx = d.NearTxHashes[len(d.NearTxHashes)-1]
	}
	return obs, nil
}

func short(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}

// String names the adapter in logs.
func (s *Swaps) String() string { return fmt.Sprintf("1Click at %s", s.baseURL) }
