package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/app/toolkit"
)

// searchBenchSQL generates the benchmark's map and notes from a vocabulary
// of 20 common words (each in thousands of rows) and 2,000 rarer ones.
const searchBenchSQL = `
SELECT setseed(0.17);
CREATE TEMP TABLE vocab AS SELECT array_agg(w) AS w FROM (
  SELECT unnest(ARRAY['council','members','treasury','marketing','guild','pool','delegators','token','holders','votes',
                      'proposal','grant','builders','validators','stake','quorum','budget','report','season','community']) AS w
  UNION ALL SELECT 'word' || g FROM generate_series(1, 2000) g) v;
CREATE FUNCTION pg_temp.words(n int) RETURNS text LANGUAGE sql AS
  $$ SELECT string_agg(v.w[1 + floor(random() * array_length(v.w, 1))::int], ' ') FROM vocab v, generate_series(1, n) $$;
INSERT INTO published_flowers (id, network, maker, map, snapshot_sha256, record, name, made_at, published_at, status, came)
SELECT encode(sha256(('f' || g)::bytea), 'hex'), 'near:mainnet', 'maker' || (g % 300) || '.near',
       'near:mainnet:dao' || (g % 2000) || '.sputnik-dao.near', encode(sha256(('s' || g)::bytea), 'hex'),
       json_build_object('about', pg_temp.words(12), 'spec', json_build_object('title', pg_temp.words(3)))::text,
       pg_temp.words(3), now(), now() - make_interval(secs => g), 'ok', 'record'
FROM generate_series(1, 10000) g;
INSERT INTO explorations (id, owner, question, title, created_at, updated_at)
SELECT 'exp' || g, 'prs_' || (g % 200), pg_temp.words(10), pg_temp.words(3), now(), now() FROM generate_series(1, 1000) g;
INSERT INTO exploration_notes (id, exploration, text, created_at)
SELECT 'note' || g, 'exp' || (g % 1000 + 1), pg_temp.words(25), now() FROM generate_series(1, 100000) g;
ANALYZE search_docs;
`

// BenchmarkSearchPetals: search_petals over 10,000 flowers (2,000 maps) and
// 100,000 notes of 200 people, through the service, with its p99; beside it
// the floor, one plain SELECT 1 round trip on the same pool.
func BenchmarkSearchPetals(b *testing.B) {
	f := newSearchFixture(b)
	ctx := context.Background()
	began := time.Now()
	f.exec(searchBenchSQL)
	b.Logf("generated in %s", time.Since(began).Round(time.Millisecond))
	var rows, indexBytes, tableBytes int64
	if err := f.db.Pool.QueryRow(ctx, `SELECT count(*), pg_relation_size('search_docs_tsv'), pg_total_relation_size('search_docs') FROM search_docs`).
		Scan(&rows, &indexBytes, &tableBytes); err != nil {
		b.Fatal(err)
	}
	b.Logf("search_docs: %d rows, GIN index %d bytes (%.1f MiB), table with indexes %.1f MiB", rows, indexBytes, float64(indexBytes)/(1<<20), float64(tableBytes)/(1<<20))

	cases := []struct {
		name    string
		subject string
		in      relationsapp.SearchPetalsInput
	}{
		{"visitor_common_word", "", relationsapp.SearchPetalsInput{Q: "council"}},
		{"visitor_two_words_prefix", "", relationsapp.SearchPetalsInput{Q: "treasury vot"}},
		{"visitor_rare_word", "", relationsapp.SearchPetalsInput{Q: "word1234"}},
		{"person_common_word", "prs_7", relationsapp.SearchPetalsInput{Q: "members"}},
		{"person_prefix_notes", "prs_7", relationsapp.SearchPetalsInput{Q: "quor", Kinds: "note"}},
		{"person_phrase", "prs_7", relationsapp.SearchPetalsInput{Q: `"treasury budget" -season`}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := f.svc.Search(ctx, toolkit.Caller{Subject: c.subject}, c.in); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(t0))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99_ms")
		})
	}
	b.Run("floor_select_1", func(b *testing.B) {
		for b.Loop() {
			var one int
			if err := f.db.Pool.QueryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
				b.Fatal(err)
			}
		}
	})
}
