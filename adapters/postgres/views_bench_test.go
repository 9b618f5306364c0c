package postgres_test

import (
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/viewsapp"
	"github.com/petal-near/petal/domain/specs"
	"github.com/petal-near/petal/ports"
)

// BenchmarkPersonView is what a signed-in person's render_flower (and the
// map's lists) pay to find the view they draw through: the store's join and
// the service's parse, beside its floor, one primary-key SELECT of the body.
//
//	go test ./adapters/postgres -run '^$' -bench BenchmarkPersonView -benchtime 2000x
func BenchmarkPersonView(b *testing.B) {
	db := pgtest.New(b)
	store := postgres.NewViewRepository(db.DB)
	v := specs.View{Schema: specs.ViewSchema, Palette: specs.PaletteTolBright, Labels: specs.ViewLabelsNone}
	hash, body, err := specs.ViewName(v)
	if err != nil {
		b.Fatal(err)
	}
	person := "prs_" + hex32('a')[:32]
	if err := store.KeepView(b.Context(), person, ports.KeptView{Hash: hash, Body: body, Credential: "wal_" + hex32('b')[:32],
		Session: hex32('c') + hex32('c'), KeptAt: time.Now()}); err != nil {
		b.Fatal(err)
	}
	svc := viewsapp.NewViewService(store, nil, nil, nil, ports.NoMetrics{})
	b.Run("floor-select-body", func(b *testing.B) {
		for b.Loop() {
			var s string
			if err := db.Pool.QueryRow(b.Context(), `SELECT body FROM views WHERE hash = $1`, hash).Scan(&s); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("person-view", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			got, err := svc.PersonView(b.Context(), person)
			if err != nil || got != v {
				b.Fatal(got, err)
			}
		}
	})
	b.Run("visitor-default", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := svc.PersonView(b.Context(), "anon_"+hex32('d')[:32]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
