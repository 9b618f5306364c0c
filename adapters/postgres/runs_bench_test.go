package postgres_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/domain/runs"
)

// The event log's cost: appending through the store (row lock on the run for
// the next seq, insert, NOTIFY, one transaction) against plain INSERTs of the
// same rows with the seq handed out in memory, on one run and across 100,
// with 16 writers. Run with:
//
//	go test ./adapters/postgres -run '^$' -bench 'Append|PlainInsert' -benchtime 3s
//
// and read the ratio of the events/s figures.

const benchWriters = 16

var benchEvent = runs.Make(runs.KindToolResult, runs.ToolResultData{ID: "call_1", Name: "get_snapshot", OK: true,
	Summary: "7 accounts in 2 groups (council 3, community 4), total weight 7", MS: 12})

func benchRuns(b *testing.B, n int) (*pgtest.DB, *postgres.RunRepository, []string) {
	db := pgtest.New(b)
	s := postgres.NewRunRepository(db.DB)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("run_bench_%03d", i)
		if _, err := s.Create(context.Background(), runs.Run{ID: ids[i], Model: "recorded"}); err != nil {
			b.Fatal(err)
		}
	}
	return db, s, ids
}

func BenchmarkAppend(b *testing.B) {
	for _, mode := range []string{"notify-each", "batched-notify"} {
		for _, n := range []int{1, 100} {
			b.Run(fmt.Sprintf("%s/runs=%d", mode, n), func(b *testing.B) { benchAppend(b, n, mode == "batched-notify") })
		}
	}
}

func benchAppend(b *testing.B, n int, batched bool) {
	{
		{
			db, s, ids := benchRuns(b, n)
			if batched {
				bus := postgres.NewEventBus(db.DB, slog.New(slog.NewTextHandler(io.Discard, nil)))
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { defer close(done); _ = bus.Run(ctx) }()
				<-bus.Ready()
				b.Cleanup(func() { cancel(); <-done })
				s.PublishingThrough(bus)
			}
			var next atomic.Int64
			b.SetParallelism(benchWriters / 2) // 2 CPUs × 8 = 16 writers
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := ids[int(next.Add(1))%len(ids)]
					if _, err := s.Append(context.Background(), id, benchEvent); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		}
	}
}

func BenchmarkPlainInsert(b *testing.B) {
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			db, _, ids := benchRuns(b, n)
			seqs := make([]atomic.Int64, len(ids))
			var next atomic.Int64
			b.SetParallelism(benchWriters / 2) // 2 CPUs × 8 = 16 writers
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := int(next.Add(1)) % len(ids)
					seq := seqs[i].Add(1) + 1000
					if _, err := db.Pool.Exec(context.Background(), `INSERT INTO run_events (run_id, seq, kind, data) VALUES ($1, $2, $3, $4)`,
						ids[i], seq, string(benchEvent.Kind), []byte(benchEvent.Data)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkAppendWithoutNotify is the append statement without its NOTIFY,
// to show what the notification itself costs (PostgreSQL serialises the
// commits of notifying transactions on one queue lock).
func BenchmarkAppendWithoutNotify(b *testing.B) {
	const sql = `WITH s AS (
	UPDATE runs SET next_seq = next_seq + 1, updated_at = now() WHERE id = $1 RETURNING next_seq - 1 AS first
), ins AS (
	INSERT INTO run_events (run_id, seq, kind, data) SELECT $1, s.first, $2, $3::json FROM s
)
SELECT s.first FROM s`
	for _, n := range []int{1, 100} {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			db, _, ids := benchRuns(b, n)
			var next atomic.Int64
			b.SetParallelism(benchWriters / 2)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					var seq int64
					if err := db.Pool.QueryRow(context.Background(), sql, ids[int(next.Add(1))%len(ids)], string(benchEvent.Kind), string(benchEvent.Data)).Scan(&seq); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkAppendBesideInsert is the pairing in one measurement, for a
// busy machine: rounds alternate between 16 writers appending through the
// store to one run and 16 writers doing plain INSERTs of the same rows (seq
// handed out in memory), 320 events a round each, so both see the same
// machine; it reports both rates and append ÷ insert.
//
//	go test ./adapters/postgres -run '^$' -bench AppendBesideInsert -benchtime 20x
func BenchmarkAppendBesideInsert(b *testing.B) {
	db, s, ids := benchRuns(b, 1)
	id := ids[0]
	var seq atomic.Int64
	seq.Store(1_000_000)
	const perWriter = 20
	phase := func(op func() error) time.Duration {
		var wg sync.WaitGroup
		start := time.Now()
		for range benchWriters {
			wg.Go(func() {
				for range perWriter {
					if err := op(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	var appendTime, insertTime time.Duration
	b.ResetTimer()
	for range b.N {
		appendTime += phase(func() error {
			_, err := s.Append(context.Background(), id, benchEvent)
			return err
		})
		insertTime += phase(func() error {
			_, err := db.Pool.Exec(context.Background(), `INSERT INTO run_events (run_id, seq, kind, data) VALUES ($1, $2, $3, $4)`,
				id, seq.Add(1), string(benchEvent.Kind), []byte(benchEvent.Data))
			return err
		})
	}
	events := float64(b.N * benchWriters * perWriter)
	b.ReportMetric(events/appendTime.Seconds(), "append-events/s")
	b.ReportMetric(events/insertTime.Seconds(), "insert-events/s")
	b.ReportMetric(insertTime.Seconds()/appendTime.Seconds(), "append/insert")
}
