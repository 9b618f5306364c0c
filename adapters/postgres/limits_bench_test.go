package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
)

// BenchmarkLimiterCheck measures one rate-limit check, one call at a time,
// and reports its p50 and p99 beside two floors in the same run: a plain
// one-row statement on the same pool (SELECT $1::text, what any round trip
// to PostgreSQL costs) and a one-row UPSERT into an UNLOGGED table without
// the window's logic; and the memory limiter, what a check cost before it was
// shared. The shared limiter is the one petal serve runs (ShareLimiter, one
// replica alone, its lease beaten): "allowed" spreads calls over 1,000
// addresses under a limit counted in its memory; "allowed-past-share" calls a new
// address each time under a limit of 1, whose share is none: every call
// asks PostgreSQL (ShareLimiter.ask, a transaction);
// "refused" hammers one address far past its limit (refused from memory but
// once a second); "fresh slot" is a fresh read's acquire and
// release. The cases take turns within each iteration, so they meet the same
// load. Run:
//
//	go test ./adapters/postgres -run '^$' -bench BenchmarkLimiterCheck -benchtime 5000x
func BenchmarkLimiterCheck(b *testing.B) {
	db := pgtest.New(b)
	ctx := context.Background()
	clock := memory.SystemClock{}
	shared := shareLimiter(b, db, clock)
	local := memory.NewRateLimiter(clock)
	slots := postgres.NewSemaphore(db.DB, clock)
	if _, err := db.Pool.Exec(ctx, `CREATE UNLOGGED TABLE bench_upsert (key text PRIMARY KEY, n int NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	address := func(i int) string { return fmt.Sprintf("tools:198.51.%d.%d", i/256%4, i%256) }
	allow := func(l ports.RateLimiter, key string, limit int) error {
		_, _, err := l.Allow(ctx, key, limit, time.Minute)
		return err
	}
	cases := []struct {
		name string
		call func(i int) error
	}{
		{"floor-select", func(i int) error {
			var s string
			return db.Pool.QueryRow(ctx, `SELECT $1::text`, address(i%1000)).Scan(&s)
		}},
		{"floor-upsert", func(i int) error {
			_, err := db.Pool.Exec(ctx, `INSERT INTO bench_upsert VALUES ($1, 1) ON CONFLICT (key) DO UPDATE SET n = bench_upsert.n + 1`, address(i%1000))
			return err
		}},
		{"postgres-allowed", func(i int) error { return allow(shared, address(i%1000), 1<<30) }},
		{"postgres-allowed-past-share", func(i int) error { return allow(shared, fmt.Sprintf("past:%d", i), 1) }},
		{"postgres-refused", func(i int) error { return allow(shared, "tools:hammer", 60) }},
		{"memory-allowed", func(i int) error { return allow(local, address(i%1000), 1<<30) }},
		{"postgres-fresh-slot", func(i int) error {
			release, err := slots.Acquire(ctx, "fresh_read", address(i%1000), 2, time.Minute)
			if err != nil {
				return err
			}
			return release(ctx)
		}},
	}
	// Every iteration makes one call of each case in turn, so all of them
	// meet the same load on a shared machine; each case's own p50 and p99 are
	// reported as metrics of the one benchmark.
	took := make([][]time.Duration, len(cases))
	i := 0
	for b.Loop() {
		for c, cs := range cases {
			start := time.Now()
			if err := cs.call(i); err != nil {
				b.Fatalf("%s: %v", cs.name, err)
			}
			took[c] = append(took[c], time.Since(start))
		}
		i++
	}
	for c, cs := range cases {
		slices.Sort(took[c])
		at := func(q float64) float64 {
			return float64(took[c][int(q*float64(len(took[c])-1))]) / float64(time.Microsecond)
		}
		b.ReportMetric(at(0.50), cs.name+"-p50-µs")
		b.ReportMetric(at(0.99), cs.name+"-p99-µs")
	}
	b.ReportMetric(0, "ns/op") // one op is every case once: its time means nothing alone
}

// BenchmarkLimiterParallel: 16 callers checking at once, as a busy process's
// requests do, through the shared limiter (each replica counting its share
// in memory: limits_share.go) beside the one-statement-per-check upsert a
// limit in PostgreSQL alone costs, on one address and spread over 1,000.
// Run:
//
//	go test ./adapters/postgres -run '^$' -bench LimiterParallel -benchtime 20000x
func BenchmarkLimiterParallel(b *testing.B) {
	db := pgtest.New(b)
	ctx := context.Background()
	shared := shareLimiter(b, db, memory.SystemClock{})
	const oneStatement = `INSERT INTO rate_limits AS r (key, window_end, count) VALUES ($1, $3, 1)
ON CONFLICT (key) DO UPDATE SET
	count = CASE WHEN r.window_end <= $2 THEN 1 ELSE least(r.count + 1, $4 + 1) END,
	window_end = CASE WHEN r.window_end <= $2 THEN $3 ELSE r.window_end END
RETURNING count, window_end`
	for _, spread := range []int{1, 1000} {
		for _, mode := range []string{"statement-per-check", "shares"} {
			b.Run(fmt.Sprintf("%s/addresses=%d", mode, spread), func(b *testing.B) {
				var next atomic.Int64
				b.SetParallelism(8) // 16 callers on 2 CPUs
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						key := fmt.Sprintf("tools:%s:%d", mode, next.Add(1)%int64(spread))
						var err error
						if mode == "shares" {
							_, _, err = shared.Allow(ctx, key, 1<<30, time.Minute)
						} else {
							now := time.Now()
							var count int
							var end time.Time
							err = db.Pool.QueryRow(ctx, oneStatement, key, now, now.Add(time.Minute), 1<<30).Scan(&count, &end)
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
			})
		}
	}
}

// shareLimiter is the limiter petal serve runs, its lease beaten every
// second until the benchmark ends.
func shareLimiter(b *testing.B, db *pgtest.DB, clock ports.Clock) *postgres.ShareLimiter {
	l := postgres.NewShareLimiter(db.DB, clock, postgres.DefaultShareOptions)
	if err := l.Heartbeat(context.Background()); err != nil {
		b.Fatal(err)
	}
	stop := l.Beat(func(err error) { b.Error(err) })
	b.Cleanup(func() { stop(context.Background()) })
	return l
}
