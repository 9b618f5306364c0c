package postgres_test

import (
	"context"
	"crypto/rand"
	"log/slog"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/domain/runs"
)

// The sweep's cost for 10,000 runs orphaned at once (a replica that held them
// died): InterruptOrphans (lock, append the interrupted event, set the
// status, notify, in batches of 500) against its floor, one plain UPDATE of
// the same rows' status. Run with:
//
//	go test ./adapters/postgres -run '^$' -bench 'Sweep' -benchtime 3x
//
// ns/op is the time for all 10,000.
const orphans = 10_000

func seedOrphans(b *testing.B, db *pgtest.DB) {
	b.Helper()
	ctx := context.Background()
	_, err := db.Pool.Exec(ctx, `TRUNCATE runs CASCADE`)
	if err == nil {
		_, err = db.Pool.Exec(ctx, `INSERT INTO runs (id, status, model, process_id, next_seq)
SELECT 'run_orphan_' || i, 'running', 'recorded', 'proc_dead', 1 FROM generate_series(1, $1) AS i`, orphans)
	}
	if err == nil {
		_, err = db.Pool.Exec(ctx, `INSERT INTO run_events (run_id, seq, kind, data)
SELECT 'run_orphan_' || i, 0, 'run', '{}' FROM generate_series(1, $1) AS i`, orphans)
	}
	if err == nil {
		_, err = db.Pool.Exec(ctx, `VACUUM ANALYZE runs`)
	}
	if err != nil {
		b.Fatal(err)
	}
}

func BenchmarkSweep(b *testing.B) {
	db := pgtest.New(b)
	s := postgres.NewRunRepository(db.DB)
	interrupted := runs.Make(runs.KindError, runs.ErrorData{Code: runs.CodeInterrupted, Message: "the server stopped"})
	b.Run("InterruptOrphans", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			seedOrphans(b, db)
			b.StartTimer()
			ids, err := s.InterruptOrphans(context.Background(), 30*time.Second, interrupted)
			if err != nil {
				b.Fatal(err)
			}
			if len(ids) != orphans {
				b.Fatalf("ended %d runs, not %d", len(ids), orphans)
			}
		}
	})
	// The holds of those 10,000 runs' calls in flight, one each on a
	// daily-cap account, released in batches.
	b.Run("ReleaseOrphanHolds", func(b *testing.B) {
		cfg, err := config.LoadConfig(func(string) string { return "" })
		if err != nil {
			b.Fatal(err)
		}
		ledger := moneyapp.NewLedger(cfg, postgres.NewLedgerRepository(db.DB), postgres.NewPeopleRepository(db.DB), memory.SystemClock{}, rand.Reader, slog.New(slog.DiscardHandler))
		for b.Loop() {
			b.StopTimer()
			ctx := context.Background()
			_, err := db.Pool.Exec(ctx, `TRUNCATE credit_holds, credit_entries, credit_accounts CASCADE`)
			if err == nil {
				_, err = db.Pool.Exec(ctx, `INSERT INTO credit_accounts (id, kind, limit_micros, held_micros) VALUES ('daily:bench', 'daily', 1000000000000, $1)`, orphans*1000)
			}
			if err == nil {
				_, err = db.Pool.Exec(ctx, `INSERT INTO credit_holds (reservation_id, account_id, run_id, process_id, payer, amount_micros)
SELECT 'res_' || i, 'daily:bench', 'run_orphan_' || i, 'proc_dead', '{}', 1000 FROM generate_series(1, $1) AS i`, orphans)
			}
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			n, err := ledger.ReleaseOrphanHolds(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if n != orphans {
				b.Fatalf("released %d holds, not %d", n, orphans)
			}
		}
	})
	b.Run("PlainUpdate", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			seedOrphans(b, db)
			b.StartTimer()
			tag, err := db.Pool.Exec(context.Background(), `UPDATE runs SET status = 'interrupted' WHERE status = 'running'`)
			if err != nil {
				b.Fatal(err)
			}
			if tag.RowsAffected() != orphans {
				b.Fatalf("updated %d", tag.RowsAffected())
			}
		}
	})
}
