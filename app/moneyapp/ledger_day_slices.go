package moneyapp

import (
	"context"
	"time"

	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/ports"
)

// DaySlicesKept is how long after its day ends a day's cap stays in its 32
// slices (docs/money.md, "The day's cap in slices"); after it the slices are
// folded into the day's row. Nothing reserves on a past day, and a call's
// late settle comes minutes after its day at most; a week keeps the slices
// of recent days for an operator to read.
const DaySlicesKept = 7 * 24 * time.Hour

// DayFolder folds the slices of the days before before's into their days'
// rows, and says how many slice rows went.
type DayFolder interface {
	FoldPastDays(ctx context.Context, before time.Time) (int64, error)
}

// DaySlicesJob is the scheduled job folding past days' slices, hourly on one
// replica.
func DaySlicesJob(f DayFolder, clock ports.Clock) jobsapp.Job {
	return jobsapp.Job{Name: "ledger_day_slices", Every: time.Hour, Deadline: time.Minute,
		Run: func(ctx context.Context) (int64, error) { return f.FoldPastDays(ctx, clock.Now().Add(-DaySlicesKept)) }}
}
