package postgres_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/publishapp"
	"github.com/petal-near/petal/domain/corrections"
	"github.com/petal-near/petal/ports"
)

// BenchmarkFlowerCorrections is what corrections add to get_flower and the
// map's page, beside their floors, over 10,000 published flowers on 2,000
// maps and 20,000 corrections (the first 400 flowers 50 each): get_flower
// without corrections (the floor: the store's Get and the answer),
// get_flower of a flower with 50 (the answer with its newest 20 and its
// count), and the map page's read (the newest 100 flowers' corrections, 5
// each and whether there are more) beside the list of those 100 flowers it starts from.
// Run:
//
//	go test ./adapters/postgres -run '^$' -bench BenchmarkFlowerCorrections -benchtime 2000x
func BenchmarkFlowerCorrections(b *testing.B) {
	db := pgtest.New(b)
	seedPublished(b, db, 10_000, 2_000)
	ctx := context.Background()
	var ids []string
	rows, err := db.Pool.Query(ctx, `SELECT id FROM published_flowers ORDER BY published_at LIMIT 400`)
	if err != nil {
		b.Fatal(err)
	}
	ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var seed [][]any
	for i := range 20_000 {
		seed = append(seed, []any{fmt.Sprintf("%064x", 1<<40+i), ids[i%len(ids)], "near:mainnet", fmt.Sprintf("maker%02d.near", i%50),
			corrections.Kinds[i%len(corrections.Kinds)], `{"reason":"a reason of some length, as people write them"}`, at, at.Add(time.Duration(i) * time.Second), "synced"})
	}
	if _, err := db.Pool.CopyFrom(ctx, pgx.Identifier{"flower_corrections"},
		[]string{"id", "flower_id", "network", "maker", "kind", "record", "made_at", "kept_at", "came"}, pgx.CopyFromRows(seed)); err != nil {
		b.Fatal(err)
	}
	// Vacuumed, as autovacuum leaves a table that is mostly read: its
	// visibility map lets the by-flower walks read the index alone.
	if _, err := db.Pool.Exec(ctx, `VACUUM ANALYZE flower_corrections`); err != nil {
		b.Fatal(err)
	}
	flowers := postgres.NewPublishedFlowerRepository(db.DB)
	store := postgres.NewFlowerCorrectionRepository(db.DB)
	svc, err := publishapp.NewPublishService(nil, flowers, store, nil, nil, nil, nil, nil, nil, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), ports.NoMetrics{})
	if err != nil {
		b.Fatal(err)
	}
	corrected := ids[0]
	var crowded string // the map of the first flower, which has 5 flowers
	if err := db.Pool.QueryRow(ctx, `SELECT map FROM published_flowers WHERE id = $1`, corrected).Scan(&crowded); err != nil {
		b.Fatal(err)
	}
	b.Run("floor-get-flower", func(b *testing.B) {
		for b.Loop() {
			if _, err := svc.Get(ctx, corrected); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("get-flower-with-corrections", func(b *testing.B) {
		for b.Loop() {
			f, err := svc.GetWithCorrections(ctx, corrected)
			if err != nil || len(f.Corrections) != corrections.MaxShown || f.CorrectionsCount != 50 {
				b.Fatal(len(f.Corrections), f.CorrectionsCount, err)
			}
		}
	})
	b.Run("floor-list-100", func(b *testing.B) {
		for b.Loop() {
			if _, err := flowers.List(ctx, ports.FlowerQuery{Limit: 100}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("corrections-of-100", func(b *testing.B) {
		page, err := flowers.List(ctx, ports.FlowerQuery{Limit: 100})
		if err != nil {
			b.Fatal(err)
		}
		some := make([]string, 0, 100)
		for _, f := range page.Flowers {
			some = append(some, f.ID)
		}
		some = append(some[:50], ids[:50]...) // half with corrections
		for b.Loop() {
			if _, err := store.OfFlowers(ctx, some, 6); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("map-page-corrections", func(b *testing.B) {
		for b.Loop() {
			if fc, err := svc.MapCorrections(ctx, crowded); err != nil || len(fc) == 0 {
				b.Fatal(len(fc), err)
			}
		}
	})
}
