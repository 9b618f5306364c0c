package agentapp

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// A write that must happen (a run's end, a ledger hold's release, a billed
// call's settle) is tried again until it lands: a database away for a few
// seconds must not leave a run `running`, its holds held until someone
// notices, or a call NEAR AI billed uncharged. Each try has its
// own deadline; the waits between tries double from landFirstWait to
// landMaxWait, each with up to half of it again drawn at random, so replicas
// cut off together don't come back in step. The whole is bounded by the
// caller's context (the chat's write time); past it the write is given up,
// counted, and left to the sweep (SweepJob).
const (
	landFirstWait = 100 * time.Millisecond
	landMaxWait   = 2 * time.Second
	landTry       = 5 * time.Second
)

// landing retries the writes that must land, and counts them.
type landing struct {
	random  ports.Random // the waits' jitter; nil: none
	retries ports.Counter
	gaveUp  ports.Counter
	log     *slog.Logger
}

func newLanding(m ports.Metrics, random ports.Random, log *slog.Logger) *landing {
	m = ports.MetricsOrNone(m)
	return &landing{random: random, log: log,
		retries: m.Counter("petal_must_land_retries_total",
			"Tries again of writes that must land (a run's end, a hold's release, a call's settle) after one failed, by write.", "write"),
		gaveUp: m.Counter("petal_must_land_given_up_total",
			"Writes that must land given up when their time ran out (left to the sweep), by write.", "write"),
	}
}

// land runs write until it succeeds, fails with petal's own error (the
// write was refused, not lost: an ended run, a hold already gone), or ctx
// ends. It returns the last error.
func (l *landing) land(ctx context.Context, name string, write func(ctx context.Context) error) error {
	wait := landFirstWait
	for try := 1; ; try++ {
		tctx, cancel := context.WithTimeout(ctx, landTry)
		err := write(tctx)
		cancel()
		if err == nil {
			return nil
		}
		if _, refused := errs.As(err); refused {
			return err
		}
		if try == 1 {
			l.log.WarnContext(ctx, "a write that must land failed; trying again until it does", "write", name, "err", err)
		}
		select {
		case <-ctx.Done():
			l.gaveUp.Add(1, name)
			l.log.ErrorContext(ctx, "a write that must land was given up; the sweep takes it over", "write", name, "tries", try, "err", err)
			return err
		case <-time.After(wait + l.jitter(wait/2)):
		}
		l.retries.Add(1, name)
		wait = min(2*wait, landMaxWait)
	}
}

// jitter is a random wait of up to most.
func (l *landing) jitter(most time.Duration) time.Duration {
	if l.random == nil || most <= 0 {
		return 0
	}
	var b [8]byte
	if _, err := io.ReadFull(l.random, b[:]); err != nil {
		return 0
	}
	return time.Duration(binary.BigEndian.Uint64(b[:]) % uint64(most))
}
