package moneyapp

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// NearPriceEvery is how often the NEAR price is read into the history while
// the server runs (on one replica at a time: the scheduler's lease).
const NearPriceEvery = 10 * time.Minute

// nearPriceDeadline bounds one reading (the feed's own timeout is 5 s).
const nearPriceDeadline = 30 * time.Second

// Where a price comes from, as the answer and the history say it.
const (
	SourceFixed    = "PETAL_NEAR_USD"
	SourceOneClick = "NEAR Intents 1Click token list (nep141:wrap.near)"
)

// NearPrices is the NEAR price over time: read every NearPriceEvery into
// the history (kept PETAL_NEAR_PRICE_KEEP_DAYS days), and the price of a
// transfer at its block time. With PETAL_NEAR_USD the price is fixed, at any
// time, and nothing is read.
type NearPrices struct {
	cfg     config.Config
	live    ports.NearPrice
	history ports.NearPriceHistory
	clock   ports.Clock
	log     *slog.Logger
}

// NewNearPrices makes the price history service.
func NewNearPrices(cfg config.Config, live ports.NearPrice, history ports.NearPriceHistory, clock ports.Clock, log *slog.Logger) *NearPrices {
	return &NearPrices{cfg: cfg, live: live, history: history, clock: clock, log: log}
}

func (p *NearPrices) fixed() bool { return p.cfg.NearUSD != "" }

// Record reads the price now into the history and deletes readings past
// their retention; it says how many rows it wrote and deleted.
func (p *NearPrices) Record(ctx context.Context) (int64, error) {
	if p.fixed() {
		return 0, nil
	}
	now := p.clock.Now()
	var n int64
	usd, ok, err := p.live.NearUSD(ctx)
	switch {
	case err != nil:
		return 0, fmt.Errorf("reading the NEAR price: %w", err)
	case !ok:
		// Unknown now (the feed logs why): nothing to keep this time.
	default:
		if err := p.history.RecordNearPrice(ctx, credit.NearQuote{At: now, USD: usd, Source: SourceOneClick}); err != nil {
			return 0, err
		}
		n++
	}
	deleted, err := p.history.PruneNearPrices(ctx, now.Add(-p.cfg.NearPriceKeep))
	return n + deleted, err
}

// Job is the reading as a scheduled job.
func (p *NearPrices) Job() jobsapp.Job {
	return jobsapp.Job{Name: "near_price", Every: NearPriceEvery, Deadline: nearPriceDeadline, Run: p.Record}
}

// At is the price of a transfer made at blockAt (credit.PriceAtBlock over the
// history). A transfer made moments ago, before any reading near it, is
// priced at a reading taken now, which is kept. No reading near blockAt:
// source_failed, nothing counted.
func (p *NearPrices) At(ctx context.Context, blockAt time.Time) (credit.NearQuote, error) {
	if p.fixed() {
		usd, _ := credit.ParseUSD(p.cfg.NearUSD)
		return credit.NearQuote{At: blockAt, USD: usd, Source: SourceFixed}, nil
	}
	prev, next, err := p.history.NearPricesAround(ctx, blockAt, credit.PriceBeforeWithin, credit.PriceAfterWithin)
	if err != nil {
		return credit.NearQuote{}, err
	}
	if q, ok := credit.PriceAtBlock(blockAt, prev, next); ok {
		return q, nil
	}
	now := p.clock.Now()
	if !now.After(blockAt.Add(credit.PriceAfterWithin)) {
		usd, ok, err := p.live.NearUSD(ctx)
		if err == nil && ok {
			q := credit.NearQuote{At: now, USD: usd, Source: SourceOneClick}
			if err := p.history.RecordNearPrice(ctx, q); err != nil {
				return credit.NearQuote{}, err
			}
			if q, ok := credit.PriceAtBlock(blockAt, prev, &q); ok {
				return q, nil
			}
		}
		return credit.NearQuote{}, errs.New(errs.SourceFailed, "the NEAR price could not be read, so nothing was counted",
			"send the same transaction again later").WithCause(err)
	}
	return credit.NearQuote{}, errs.Newf(errs.SourceFailed,
		"no NEAR price was recorded near this transfer's block time (%s), so it can't be priced and nothing was counted",
		blockAt.UTC().Format(time.RFC3339)).WithHint("ask the site's operator to count it by hand")
}
