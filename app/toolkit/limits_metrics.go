package toolkit

import (
	"context"
	"strings"
	"time"

	"github.com/petal-near/petal/ports"
)

// CountedRateLimiter is l, counting its checks by limit and outcome with
// their latency: a check in PostgreSQL sits on every tool call's path.
func CountedRateLimiter(l ports.RateLimiter, m ports.Metrics) ports.RateLimiter {
	m = ports.MetricsOrNone(m)
	return &countedLimiter{l: l,
		checks: m.Counter("petal_rate_limit_checks_total", "Rate-limit checks, by limit (tools, chats, followups, auth…) and outcome (allowed, refused, failed).", "limit", "outcome"),
		took: m.Histogram("petal_rate_limit_check_seconds", "How long one rate-limit check took.",
			[]float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1}, "limit")}
}

type countedLimiter struct {
	l      ports.RateLimiter
	checks ports.Counter
	took   ports.Histogram
}

func (c *countedLimiter) Allow(ctx context.Context, key string, limit int, window time.Duration) (bool, time.Duration, error) {
	// The key's prefix names the limit (a fixed set in our code); the address
	// after it never becomes a label.
	name, _, _ := strings.Cut(key, ":")
	start := time.Now()
	ok, wait, err := c.l.Allow(ctx, key, limit, window)
	c.took.Observe(time.Since(start).Seconds(), name)
	switch {
	case err != nil:
		c.checks.Add(1, name, "failed")
	case ok:
		c.checks.Add(1, name, "allowed")
	default:
		c.checks.Add(1, name, "refused")
	}
	return ok, wait, err
}
