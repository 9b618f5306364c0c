package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
)

// BenchmarkPetalNames measures what a signed-in person's render_flower adds:
// reading their named claims (OfOwner, verb named) among 200 people's 20,000
// annotations in 2,000 explorations, the person holding 1,000 of them (200
// named) in 20 explorations and none. Beside it, in the same run: a bare
// SELECT $1::text (any round trip) and a plain read of one exploration's 10
// rows by its index. The cases take turns within each iteration. Run:
//
//	go test ./adapters/postgres -run '^$' -bench BenchmarkPetalNames -benchtime 2000x
func BenchmarkPetalNames(b *testing.B) {
	db := pgtest.New(b)
	ctx := context.Background()
	for _, sql := range []string{
		`INSERT INTO explorations (id, owner, question, created_at, updated_at)
		 SELECT 'exp_' || lpad(to_hex(i), 32, '0'), 'prs_' || (i % 200), 'q', now(), now() FROM generate_series(0, 1999) i`,
		// 10 annotations an exploration; one in five named.
		`INSERT INTO annotations (scope, exploration, owner, id, subject, verb, claim, added_at)
		 SELECT 'exp_' || lpad(to_hex(e), 32, '0'), 'exp_' || lpad(to_hex(e), 32, '0'), '', md5(e || ':' || k),
		        'near:mainnet:a' || k || '.near', CASE WHEN k % 5 = 0 THEN 'named' ELSE 'noted' END,
		        '{"schema":"claim/v2","id":"' || md5(e || ':' || k) || '","subject":"near:mainnet:a' || k || '.near","verb":"' ||
		        CASE WHEN k % 5 = 0 THEN 'named' ELSE 'noted' END || '","object":{"value":"Name ' || k || '"},"kind":"stated","by":"near:mainnet:me.near","evidence":[]}',
		        now()
		 FROM generate_series(0, 1999) e, generate_series(0, 9) k`,
		`ANALYZE explorations`, `ANALYZE annotations`,
	} {
		if _, err := db.Pool.Exec(ctx, sql); err != nil {
			b.Fatal(err)
		}
	}
	store := postgres.NewAnnotationRepository(db.DB)
	// prs_7 owns explorations 7, 207, … (10 of them): 100 annotations, 20 named.
	cases := []struct {
		name string
		call func() (int, error)
	}{
		{"floor-select", func() (int, error) {
			var s string
			return 1, db.Pool.QueryRow(ctx, `SELECT $1::text`, "prs_7").Scan(&s)
		}},
		{"floor-index-read", func() (int, error) {
			rows, err := db.Pool.Query(ctx, `SELECT claim FROM annotations WHERE exploration = $1 ORDER BY seq LIMIT 100`, "exp_00000000000000000000000000000007")
			if err != nil {
				return 0, err
			}
			n := 0
			for rows.Next() {
				n++
			}
			return n, rows.Err()
		}},
		{"names", func() (int, error) {
			got, err := store.OfOwner(ctx, "prs_7", ports.AnnotationQuery{Verb: "named", Limit: 2000})
			return len(got), err
		}},
	}
	took := make([][]time.Duration, len(cases))
	for b.Loop() {
		for c, cs := range cases {
			start := time.Now()
			if _, err := cs.call(); err != nil {
				b.Fatalf("%s: %v", cs.name, err)
			}
			took[c] = append(took[c], time.Since(start))
		}
	}
	if n, _ := cases[2].call(); n != 20 {
		b.Fatalf("names read %d; want 20", n)
	}
	for c, cs := range cases {
		slices.Sort(took[c])
		at := func(q float64) float64 {
			return float64(took[c][int(q*float64(len(took[c])-1))]) / float64(time.Microsecond)
		}
		b.ReportMetric(at(0.50), cs.name+"-p50-µs")
		b.ReportMetric(at(0.99), cs.name+"-p99-µs")
	}
	b.ReportMetric(0, "ns/op")
}
