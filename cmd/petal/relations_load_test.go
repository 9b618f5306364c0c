package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
)

// TestRelationsLoadIsOffer: the benchmark's set-wise loader leaves exactly
// the rows of every relations table that offering the same readings one
// group at a time does (a small generated map with the benchmark's skew,
// and a reading that is not holdings).
func TestRelationsLoadIsOffer(t *testing.T) {
	t.Parallel()
	spec := relationsSpec{groups: 60, total: 6000, big: 600}
	votes := ports.RelationReading{Group: "near:mainnet:votes.sputnik-dao.near", Snapshot: strings.Repeat("e", 64),
		AsOf: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC), Reader: "near-dao-proposals", Title: "Votes"}
	readings := slices.Collect(spec.readings())
	readings = append(readings, votes)

	offered, loaded := pgtest.New(t), pgtest.New(t)
	// A low bar for keeping a pair's top shared accounts, so these small
	// groups have pairs kept and pairs not.
	const keepFrom = 600
	for _, rd := range readings {
		if _, err := postgres.NewRelationRepository(offered.DB).KeepingSharedTopFrom(keepFrom).Offer(t.Context(), rd); err != nil {
			t.Fatal(err)
		}
	}
	if err := postgres.NewRelationRepository(loaded.DB).KeepingSharedTopFrom(keepFrom).Load(t.Context(), slices.Values(readings)); err != nil {
		t.Fatal(err)
	}
	var keptPairs, pairs int
	_ = offered.Pool.QueryRow(t.Context(), `SELECT count(*) FILTER (WHERE kept > 0), count(*) FROM relation_pairs`).Scan(&keptPairs, &pairs)
	if keptPairs == 0 || keptPairs == pairs {
		t.Fatalf("%d of %d pairs kept: the test needs some of each", keptPairs, pairs)
	}

	// Each table's rows as text, sorted, timestamps of the write left out.
	tables := map[string]string{
		"relation_readings":   `SELECT group_id, snapshot_sha256, as_of FROM relation_readings`,
		"relation_groups":     `SELECT group_id, snapshot_sha256, as_of, reader, kind, title, members, total FROM relation_groups`,
		"relation_members":    `SELECT * FROM relation_members`,
		"relation_pairs":      `SELECT * FROM relation_pairs`,
		"relation_shared_top": `SELECT * FROM relation_shared_top`,
	}
	for table, q := range tables {
		rowsOf := func(db *pgtest.DB) []string {
			rows, err := db.Pool.Query(t.Context(), `SELECT x::text FROM (`+q+`) x ORDER BY 1`)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for rows.Next() {
				var s string
				if err := rows.Scan(&s); err != nil {
					t.Fatal(err)
				}
				out = append(out, s)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			return out
		}
		want, got := rowsOf(offered), rowsOf(loaded)
		if len(want) < 60 {
			t.Fatalf("%s: offering gave only %d rows", table, len(want))
		}
		if !slices.Equal(want, got) {
			for i := range min(len(want), len(got)) {
				if want[i] != got[i] {
					t.Fatalf("%s: %d rows offered, %d loaded; first difference at %d: offered %s, loaded %s", table, len(want), len(got), i, want[i], got[i])
				}
			}
			t.Fatalf("%s: %d rows offered, %d loaded", table, len(want), len(got))
		}
		t.Logf("%s: %d rows alike", table, len(want))
	}

	// Load fills only an empty index, and refuses a group named twice.
	if err := postgres.NewRelationRepository(loaded.DB).Load(t.Context(), slices.Values(readings[:1])); err == nil {
		t.Fatal("a second load into a full index was taken")
	}
	if err := postgres.NewRelationRepository(pgtest.New(t).DB).Load(t.Context(), slices.Values([]ports.RelationReading{readings[1], readings[1]})); err == nil {
		t.Fatal("a group named twice was loaded")
	}
}
