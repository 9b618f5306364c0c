package postgres_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// holders is a valid snapshot of n token holders with a power-law tail.
func holders(n int) snapshots.Snapshot {
	s := snapshots.Snapshot{
		Schema: snapshots.Schema, Network: "near-ft-holders",
		Params: json.RawMessage(`{"chain":"near:mainnet","token":"token.example.near"}`),
		Chain:  snapshots.Mainnet,
		Block:  snapshots.Block{Height: 9, Hash: "h9", Time: "2026-11-01T12:00:00Z"},
		Title:  fmt.Sprintf("Holders of token.example.near (%d)", n), About: "balances",
		Groups: []snapshots.Group{{ID: "exchange", Label: "Exchanges"}, {ID: "holder", Label: "Holders"}},
		Source: snapshots.Source{Calls: []snapshots.Call{{Contract: "token.example.near", Method: "ft_balance_of"}}},
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	for i := 1; i <= n; i++ {
		w := new(big.Int).Mul(big.NewInt(int64(math.Floor(1e6/math.Pow(float64(i), 1.15)))+int64(i%7)), unit)
		g := "holder"
		if i%17 == 3 {
			g = "exchange"
		}
		s.Accounts = append(s.Accounts, snapshots.Account{ID: fmt.Sprintf("near:mainnet:holder%06d.near", i), Label: "", Weight: w.String(), Groups: []string{g}})
	}
	return s
}

// BenchmarkRenderFlowerTool is render_flower as a door calls it, on the real
// PostgreSQL (so it lives here, beside the store it reads): the spec
// validated against its snapshot and kept, the flower laid out and drawn.
// cold reads the snapshot from PostgreSQL each time (gunzipped, checked
// against its name, decoded); warm finds it decoded in the service's cache.
func BenchmarkRenderFlowerTool(b *testing.B) {
	db := pgtest.New(b)
	snaps := postgres.NewSnapshotRepository(db.DB)
	svc := flowersapp.NewFlowerService(snapshotsapp.NewSnapshotLibrary(config.Config{LargeDecodes: 2}, snaps, ports.NoMetrics{}), postgres.NewSpecRepository(db.DB), nil, nil)
	for _, n := range []int{1_000, 100_000} {
		sha, _, err := snapshotsapp.StoreSnapshot(b.Context(), snaps, holders(n), snapshotsapp.OriginThisSite)
		if err != nil {
			b.Fatal(err)
		}
		p, err := svc.Propose(b.Context(), "", sha, "")
		if err != nil {
			b.Fatal(err)
		}
		spec, _ := json.Marshal(p.Spec)
		for _, mode := range []string{"cold", "warm"} {
			b.Run(fmt.Sprintf("accounts=%d/%s", n, mode), func(b *testing.B) {
				b.ReportAllocs()
				var size int
				for b.Loop() {
					s := svc
					if mode == "cold" {
						s = flowersapp.NewFlowerService(snapshotsapp.NewSnapshotLibrary(config.Config{LargeDecodes: 2}, snaps, ports.NoMetrics{}), postgres.NewSpecRepository(db.DB), nil, nil)
					}
					r, err := s.Render(b.Context(), "", spec, nil)
					if err != nil {
						b.Fatal(err)
					}
					size = len(r.SVG)
				}
				b.ReportMetric(float64(size), "svg-bytes")
			})
		}
	}
}
