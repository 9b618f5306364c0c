package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/domain/conversations"
)

// BenchmarkConversations measures a page of GET /api/v1/conversations (21
// entries: the page and one to say another follows) for a person with
// 10,000 runs and 10,000 explorations (half of the runs keep their flowers
// in one of them), among 1,000 others holding 200,000 more, beside its
// floor: a plain single-table statement reading the same number of rows
// down the same index. The first page and a page half-way down (from a
// cursor) take turns with the floor in each iteration, so all meet the same
// load; each case's p50 and p99 are reported. Run:
//
//	go test ./adapters/postgres -run '^$' -bench BenchmarkConversations -benchtime 2000x
func BenchmarkConversations(b *testing.B) {
	db := pgtest.New(b)
	ctx := context.Background()
	seed := []string{
		`INSERT INTO explorations (id, owner, question, title, created_at, updated_at)
		 SELECT 'exp_' || lpad(to_hex(i), 32, '0'), CASE WHEN i <= 10000 THEN 'prs_a' ELSE 'prs_' || (i % 1000) END, 'q', 't',
		        now() - i * interval '1 second', now() - i * interval '1 second'
		   FROM generate_series(1, 110000) i`,
		`INSERT INTO runs (id, owner, status, model, exploration, created_at, updated_at)
		 SELECT 'run_' || lpad(to_hex(i), 32, '0'), CASE WHEN i <= 10000 THEN 'prs_a' ELSE 'prs_' || (i % 1000) END, 'done', 'recorded',
		        CASE WHEN i <= 10000 AND i % 2 = 0 THEN 'exp_' || lpad(to_hex(i), 32, '0') END,
		        now() - i * interval '1 second' - interval '500 ms', now() - i * interval '1 second' - interval '500 ms'
		   FROM generate_series(1, 110000) i`,
		`ANALYZE runs`, `ANALYZE explorations`,
	}
	for _, q := range seed {
		if _, err := db.Pool.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	list := postgres.NewConversationRepository(db.DB)
	first, err := list.Conversations(ctx, "prs_a", conversations.Cursor{}, 21)
	if err != nil || len(first) != 21 {
		b.Fatalf("first page: %d, %v", len(first), err)
	}
	// A cursor half-way down the person's 15,000 entries.
	var mid conversations.Cursor
	if err := db.Pool.QueryRow(ctx, `SELECT updated_at, id FROM runs WHERE owner = 'prs_a' ORDER BY updated_at DESC, id DESC OFFSET 5000 LIMIT 1`).
		Scan(&mid.At, &mid.Key); err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		call func() error
	}{
		{"floor-one-table", func() error {
			rows, err := db.Pool.Query(ctx, `SELECT id, title, updated_at, status FROM runs WHERE owner = $1 ORDER BY updated_at DESC, id DESC LIMIT 21`, "prs_a")
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id, title, status string
				var at time.Time
				if err := rows.Scan(&id, &title, &at, &status); err != nil {
					return err
				}
			}
			return rows.Err()
		}},
		{"first-page", func() error {
			_, err := list.Conversations(ctx, "prs_a", conversations.Cursor{}, 21)
			return err
		}},
		{"page-halfway", func() error {
			page, err := list.Conversations(ctx, "prs_a", mid, 21)
			if err == nil && len(page) != 21 {
				b.Fatalf("half-way page: %d entries", len(page))
			}
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
