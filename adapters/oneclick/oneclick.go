// Package oneclick reads NEAR Intents' 1Click API. Today that is the NEAR
// price: dollars per NEAR from its token list (GET /v0/tokens), the wNEAR
// entry (assetId nep141:wrap.near). The price is read as decimal text and
// truncated to whole micro-dollars, so no float ever touches money.
package oneclick

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/ports"
)

// NEARAsset is wNEAR's asset id in 1Click's list.
const NEARAsset = "nep141:wrap.near"

// PriceFeed is ports.NearPrice over 1Click's token list, cached for a minute.
// A list that can't be read is "unknown" (near_usd: null), never an error.
type PriceFeed struct {
	baseURL string
	http    *http.Client
	ttl     time.Duration
	now     func() time.Time

	log *slog.Logger // where a failed fetch is told; nil: nowhere

	mu      sync.Mutex
	price   credit.Micros
	ok      bool
	fetched time.Time
}

var _ ports.NearPrice = (*PriceFeed)(nil)

// PriceTimeout bounds one read of the token list, the default client's.
const PriceTimeout = 5 * time.Second

// NewPriceFeed reads prices from baseURL (https://1click.chaindefuser.com).
func NewPriceFeed(baseURL string, client *http.Client) *PriceFeed {
	if client == nil {
		client = &http.Client{Timeout: PriceTimeout}
	}
	return &PriceFeed{baseURL: strings.TrimRight(baseURL, "/"), http: client, ttl: time.Minute, now: time.Now}
}

// LoggingTo has f log each failed fetch to log: the answer stays "unknown",
// but an operator sees why.
func (f *PriceFeed) LoggingTo(log *slog.Logger) *PriceFeed {
	f.log = log
	return f
}

// NearUSD implements ports.NearPrice.
func (f *PriceFeed) NearUSD(ctx context.Context) (credit.Micros, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.fetched.IsZero() && f.now().Sub(f.fetched) < f.ttl {
		return f.price, f.ok, nil
	}
	price, err := f.fetch(ctx)
	if err != nil && f.log != nil {
		f.log.WarnContext(ctx, "reading the NEAR price from 1Click failed; it is unknown for a minute", "err", err)
	}
	f.fetched = f.now()
	f.price, f.ok = price, err == nil && price > 0
	return f.price, f.ok, nil
}

type token struct {
	AssetID    string      `json:"assetId"`
	Blockchain string      `json:"blockchain"`
	Symbol     string      `json:"symbol"`
	Price      json.Number `json:"price"`
}

func (f *PriceFeed) fetch(ctx context.Context) (credit.Micros, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.baseURL+"/v0/tokens", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	res, err := f.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("oneclick: HTTP %d", res.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return 0, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tokens []token
	if err := dec.Decode(&tokens); err != nil {
		return 0, fmt.Errorf("oneclick: token list: %w", err)
	}
	for _, t := range tokens {
		if t.AssetID == NEARAsset {
			return decimalUSD(t.Price.String())
		}
	}
	return 0, fmt.Errorf("oneclick: no %s in the token list", NEARAsset)
}

// decimalUSD reads a JSON number of dollars, truncating past six decimals.
func decimalUSD(s string) (credit.Micros, error) {
	if strings.ContainsAny(s, "eE") {
		return 0, fmt.Errorf("oneclick: price %q in exponent form", s)
	}
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 6 {
		frac = frac[:6]
	}
	if frac != "" {
		whole += "." + frac
	}
	return credit.ParseUSD(whole)
}
