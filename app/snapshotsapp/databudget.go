package snapshotsapp

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// DataBudget is the contract's data budget: what callers who aren't signed in
// may store a day, all together (PETAL_DATA_BUDGET_MB), counted in bytes in
// PostgreSQL so it holds across replicas. Past it, a write a stranger can
// cause answers 429 budget_exhausted and stores nothing. A signed-in person's
// writes aren't counted: they answer for what they keep.
type DataBudget struct {
	limit   int64
	store   ports.DataBudget
	clock   ports.Clock
	log     *slog.Logger
	spent   ports.Counter // bytes spent, by whether the write then stood
	refused ports.Counter // writes refused past the budget
}

// NewDataBudget makes the data budget over its store. Its metrics: the bytes
// spent and refunded, the writes refused, and today's count and the limit,
// read from PostgreSQL when scraped.
func NewDataBudget(cfg config.Config, store ports.DataBudget, clock ports.Clock, log *slog.Logger, metrics ports.Metrics) *DataBudget {
	m := ports.MetricsOrNone(metrics)
	b := &DataBudget{limit: cfg.DataBudgetBytes, store: store, clock: clock, log: log,
		spent:   m.Counter("petal_data_budget_spent_bytes_total", "Bytes counted against the data budget (spent), and given back by writes that then failed (refunded).", "outcome"),
		refused: m.Counter("petal_data_budget_refusals_total", "Writes refused because they would pass the day's data budget."),
	}
	m.Observe("petal_data_budget_today_bytes", "Today's count against the data budget (used), and the budget (limit).", []string{"of"},
		func(ctx context.Context, emit func(float64, ...string)) error {
			n, err := store.Spent(ctx, explorations.StartOfDayUTC(clock.Now()))
			if err != nil {
				return err
			}
			emit(float64(n), "used")
			emit(float64(b.limit), "limit")
			return nil
		})
	return b
}

// RowBytes is what one stored row costs beyond its text: keys, ids, times and
// the index entries, roughly, so a flood of empty writes still counts.
const RowBytes = 128

// Counted reports whether owner's writes count against the budget: anyone
// but a signed-in person (an anonymous session, or nobody at all).
func Counted(owner string) bool { return !people.IsPerson(owner) }

// Spend takes n bytes of today's budget for a write owner causes, before the
// write. It answers a refund to call when the write then fails, so a refusal
// stores nothing and costs nothing; a nil budget (tests) spends nothing.
func (b *DataBudget) Spend(ctx context.Context, owner string, n int64) (refund func(), err error) {
	none := func() {}
	if b == nil || !Counted(owner) {
		return none, nil
	}
	now := b.clock.Now().UTC()
	day := explorations.StartOfDayUTC(now)
	ok, err := b.store.Spend(ctx, day, n, b.limit)
	if err != nil {
		return none, errs.New(errs.Internal, "the data budget could not be read").WithCause(err)
	}
	if !ok {
		b.refused.Add(1)
		if b.log != nil {
			b.log.WarnContext(ctx, "data budget spent", "bytes", n, "limit", b.limit)
		}
		return none, Exhausted(day.Add(24 * time.Hour).Sub(now))
	}
	b.spent.Add(float64(n), "spent")
	return func() {
		b.spent.Add(float64(n), "refunded")
		// The write failed after spending: give the bytes back, whatever
		// became of the request's context.
		if err := b.store.Refund(context.WithoutCancel(ctx), day, n); err != nil && b.log != nil {
			b.log.ErrorContext(ctx, "refunding the data budget", "err", err, "bytes", n)
		}
	}, nil
}

// Fits reports whether n more bytes fit what is left of today's budget, to
// refuse a write before anything is done for it (a session opened, a body
// read); Spend, after, takes what it really stores.
func (b *DataBudget) Fits(ctx context.Context, owner string, n int64) error {
	if b == nil || !Counted(owner) {
		return nil
	}
	now := b.clock.Now().UTC()
	day := explorations.StartOfDayUTC(now)
	spent, err := b.store.Spent(ctx, day)
	if err != nil {
		return errs.New(errs.Internal, "the data budget could not be read").WithCause(err)
	}
	if spent+n > b.limit {
		b.refused.Add(1)
		return Exhausted(day.Add(24 * time.Hour).Sub(now))
	}
	return nil
}

// Exhausted is the refusal past the data budget, until midnight UTC.
func Exhausted(wait time.Duration) *errs.Error {
	secs := max(int(wait.Seconds()), 1)
	return errs.New(errs.BudgetExhausted, "this site has stored all it stores today for people who aren't signed in",
		fmt.Sprintf("sign in with a NEAR wallet to go on now, or try again after midnight UTC (in %d s)", secs)).WithRetryAfter(secs)
}
