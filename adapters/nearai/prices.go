package nearai

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"sync"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/ports"
)

// DefaultPricesEvery is how often NEAR AI's model list is read again.
const DefaultPricesEvery = 10 * time.Minute

// pricesTimeout bounds one read of the model list: a call waits on it at
// most this long, once every PricesEvery, and then goes on with the prices
// it had.
const pricesTimeout = 5 * time.Second

// Where a price came from (ports.ModelPrice.Source).
const (
	PricesListed  = "NEAR AI model list (GET /v1/model/list)"
	PricesShipped = "petal's shipped table"
)

// priceList is NEAR AI's model list's prices for the catalogue, read at
// most every PricesEvery by one caller at a time (the others go on with
// what was read before). A model the list doesn't price, or prices in a
// way petal can't read, keeps the shipped table's prices.
type priceList struct {
	c       *Client
	mu      sync.Mutex
	listed  map[string]Model
	readAt  time.Time
	tried   time.Time
	reading bool
	reads   ports.Counter
}

func newPriceList(c *Client, m ports.Metrics) priceList {
	return priceList{c: c, reads: m.Counter("petal_model_price_reads_total",
		"Reads of NEAR AI's model list for its prices, by outcome (ok, failed: the prices read before, or the shipped table, stay).", "outcome")}
}

// priced is m at the prices calls are held and charged at now.
func (c *Client) priced(m Model) Model {
	c.prices.refreshIfStale()
	c.prices.mu.Lock()
	defer c.prices.mu.Unlock()
	if l, ok := c.prices.listed[m.ID]; ok {
		m.InputPerMTok, m.CachedPerMTok, m.OutputPerMTok = l.InputPerMTok, l.CachedPerMTok, l.OutputPerMTok
	}
	return m
}

// ModelPrices implements ports.ModelPrices: the catalogue, each with its
// prices and their source.
func (c *Client) ModelPrices() []ports.ModelPrice {
	c.prices.refreshIfStale()
	c.prices.mu.Lock()
	defer c.prices.mu.Unlock()
	out := make([]ports.ModelPrice, 0, len(Catalogue))
	for _, m := range Catalogue {
		p := ports.ModelPrice{Model: m.ID, InputPerMTok: m.InputPerMTok, CachedPerMTok: m.CachedPerMTok, OutputPerMTok: m.OutputPerMTok, Source: PricesShipped}
		if l, ok := c.prices.listed[m.ID]; ok {
			at := c.prices.readAt.UTC()
			p.InputPerMTok, p.CachedPerMTok, p.OutputPerMTok, p.Source, p.ReadAt = l.InputPerMTok, l.CachedPerMTok, l.OutputPerMTok, PricesListed, &at
		}
		out = append(out, p)
	}
	return out
}

func (l *priceList) refreshIfStale() {
	every := l.c.opt.PricesEvery
	if every < 0 {
		return
	}
	if every == 0 {
		every = DefaultPricesEvery
	}
	now := l.c.now()
	l.mu.Lock()
	if l.reading || (!l.tried.IsZero() && now.Sub(l.tried) < every) {
		l.mu.Unlock()
		return
	}
	l.reading, l.tried = true, now
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), pricesTimeout)
	defer cancel()
	listed, err := l.c.readPrices(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reading = false
	if err != nil {
		l.reads.Add(1, "failed")
		l.c.log.Warn("nearai: reading the model list's prices; the prices read before (or the shipped table) stay", "err", err)
		return
	}
	l.reads.Add(1, "ok")
	l.listed, l.readAt = listed, now
}

// wireCost is a price in the model list: amount × 10^-scale of currency a token.
type wireCost struct {
	Amount   json.Number `json:"amount"`
	Scale    int         `json:"scale"`
	Currency string      `json:"currency"`
}

// perMTok is the cost in micro-dollars per million tokens, rounded up;
// false when it is not a price petal takes.
func (w *wireCost) perMTok() (credit.Micros, bool) {
	if w == nil || w.Currency != "USD" || w.Scale < 0 || w.Scale > 30 {
		return 0, false
	}
	amount, ok := new(big.Int).SetString(w.Amount.String(), 10)
	if !ok || amount.Sign() <= 0 {
		return 0, false
	}
	// amount × 10^-scale USD a token is amount × 10^(12-scale) micro-dollars a million.
	micros := new(big.Int).Mul(amount, new(big.Int).Exp(big.NewInt(10), big.NewInt(12), nil))
	div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(w.Scale)), nil)
	q, r := new(big.Int).QuoRem(micros, div, new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() || q.Int64() > 1_000_000_000_000 { // past $1M a million tokens: not a price
		return 0, false
	}
	return credit.Micros(q.Int64()), true
}

// readPrices reads GET /model/list: { models: [ { modelId,
// inputCostPerToken, outputCostPerToken, cacheReadCostPerToken? } ] }, and
// answers the catalogue models it prices.
func (c *Client) readPrices(ctx context.Context) (map[string]Model, error) {
	res, b, err := c.do(ctx, http.MethodGet, "/model/list", nil, "")
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("nearai model list: %d", res.StatusCode)
	}
	var list struct {
		Models []struct {
			ModelID   string    `json:"modelId"`
			Input     *wireCost `json:"inputCostPerToken"`
			Output    *wireCost `json:"outputCostPerToken"`
			CacheRead *wireCost `json:"cacheReadCostPerToken"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("nearai model list: %w", err)
	}
	out := map[string]Model{}
	for _, m := range list.Models {
		shipped, ok := Find(m.ModelID)
		if !ok {
			continue
		}
		in, okIn := m.Input.perMTok()
		outP, okOut := m.Output.perMTok()
		if !okIn || !okOut {
			continue // half a price is no price: the shipped one stays
		}
		cached, ok := m.CacheRead.perMTok()
		if !ok {
			// The list names no cache price: the shipped ratio, never above the input's.
			cached = min(in, credit.Micros(int64(shipped.CachedPerMTok)*int64(in)/max(int64(shipped.InputPerMTok), 1)))
		}
		shipped.InputPerMTok, shipped.CachedPerMTok, shipped.OutputPerMTok = in, cached, outP
		out[m.ModelID] = shipped
	}
	return out, nil
}
