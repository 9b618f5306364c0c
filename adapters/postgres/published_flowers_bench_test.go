package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/publishapp"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/specs"
	"github.com/petal-near/petal/ports"
)

// seedPublished keeps n published flowers over maps maps and 50 makers,
// each a real flower/v1 record, a second apart, the newest last.
func seedPublished(b *testing.B, db *pgtest.DB, n, maps int) {
	b.Helper()
	rows := make([][]any, 0, n)
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		snap := fmt.Sprintf("%064x", i%5000)
		maker := fmt.Sprintf("maker%02d.near", i%50)
		f := published.Flower{Schema: published.Schema,
			Spec: specs.Spec{Schema: specs.SpecSchema, Snapshot: snap, Title: fmt.Sprintf("Members of dao%04d.sputnik-dao.near", i%maps),
				Petals: specs.Petals{Top: 24, Groups: []string{}}, Size: "weight", Colour: "group", Labels: "name", Order: "group", Legend: true, Others: "fold"},
			Snapshot: snap, Name: fmt.Sprintf("Flower %d", i), About: "Sputnik DAO members on NEAR",
			Map: fmt.Sprintf("near:mainnet:dao%04d.sputnik-dao.near", i%maps), MadeBy: maker, MadeAt: start.Add(time.Duration(i) * time.Second).Format(time.RFC3339)}
		id, canonical, err := f.Canonical()
		if err != nil {
			b.Fatal(err)
		}
		at := start.Add(time.Duration(i) * time.Second)
		rows = append(rows, []any{id, "near:mainnet", maker, f.Map, snap, string(canonical), f.Name, at, at, "ok", "synced"})
	}
	if _, err := db.Pool.CopyFrom(context.Background(), pgx.Identifier{"published_flowers"},
		[]string{"id", "network", "maker", "map", "snapshot_sha256", "record", "name", "made_at", "published_at", "status", "came"},
		pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Pool.Exec(context.Background(), `ANALYZE published_flowers`); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkListFlowers is a page of list_flowers beside its floor, a plain
// SQL SELECT of the same page read into strings, over 10,000 published
// flowers on 2,000 maps: the store's first page, a page by map, a page deep
// in the list (by cursor), and the tool's whole answer (the store's page,
// each record parsed for its view_url, marshalled to JSON). The cases take
// turns in each iteration, so they meet the same load; each reports its p50
// and p99. Run:
//
//	go test ./adapters/postgres -run '^$' -bench BenchmarkListFlowers -benchtime 2000x
func BenchmarkListFlowers(b *testing.B) {
	db := pgtest.New(b)
	seedPublished(b, db, 10_000, 2_000)
	ctx := context.Background()
	store := postgres.NewPublishedFlowerRepository(db.DB)
	svc, err := publishapp.NewPublishService(nil, store, nil, nil, nil, nil, nil, nil, nil, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), ports.NoMetrics{})
	if err != nil {
		b.Fatal(err)
	}
	// The cursor of the page that starts half-way down the list.
	var deep published.Cursor
	if err := db.Pool.QueryRow(ctx, `SELECT published_at, id FROM published_flowers ORDER BY published_at DESC, id DESC OFFSET 5000 LIMIT 1`).
		Scan(&deep.At, &deep.Key); err != nil {
		b.Fatal(err)
	}
	plain := func(sql string, args ...any) error {
		rows, err := db.Pool.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		n := 0
		for rows.Next() {
			var id, network, maker, mapID, snap, record, name, status, came string
			var madeAt, publishedAt time.Time
			if err := rows.Scan(&id, &network, &maker, &mapID, &snap, &record, &name, &madeAt, &publishedAt, &status, &came); err != nil {
				return err
			}
			n++
		}
		if n != 21 {
			return fmt.Errorf("%d rows", n)
		}
		return rows.Err()
	}
	const cols = `id, network, maker, map, snapshot_sha256, record, coalesce(name, ''), made_at, published_at, status, came`
	page := func(q ports.FlowerQuery) error {
		p, err := store.List(ctx, q)
		if err == nil && len(p.Flowers) != 20 {
			err = fmt.Errorf("%d flowers", len(p.Flowers))
		}
		return err
	}
	cases := []struct {
		name string
		call func() error
	}{
		{"floor-sql-first", func() error {
			return plain(`SELECT ` + cols + ` FROM published_flowers ORDER BY published_at DESC, id DESC LIMIT 21`)
		}},
		{"store-first", func() error { return page(ports.FlowerQuery{Limit: 20}) }},
		{"floor-sql-deep", func() error {
			return plain(`SELECT `+cols+` FROM published_flowers WHERE (published_at, id) < ($1, $2) ORDER BY published_at DESC, id DESC LIMIT 21`, deep.At, deep.Key)
		}},
		{"store-deep", func() error { return page(ports.FlowerQuery{Limit: 20, After: deep}) }},
		{"floor-sql-maker", func() error {
			return plain(`SELECT `+cols+` FROM published_flowers WHERE maker = $1 ORDER BY published_at DESC, id DESC LIMIT 21`, "maker07.near")
		}},
		{"store-maker", func() error { return page(ports.FlowerQuery{Limit: 20, Maker: "maker07.near"}) }},
		{"tool-first", func() error {
			out, err := svc.List(ctx, publishapp.FlowerFilter{Limit: 20})
			if err != nil {
				return err
			}
			_, err = json.Marshal(out)
			return err
		}},
	}
	took := make([][]time.Duration, len(cases))
	for b.Loop() {
		for c, cs := range cases {
			start := time.Now()
			if err := cs.call(); err != nil {
				b.Fatalf("%s: %v", cs.name, err)
			}
			took[c] = append(took[c], time.Since(start))
		}
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
