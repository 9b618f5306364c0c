package mapsapp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/relations"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/domain/specs"
)

// The demo map (issue 26, item 4): a fresh local site has published nothing,
// so its map would be empty and show nothing of what petal draws. While no
// real flower is on the map (and config.ShowsDemoMap), the map shows three
// drawings of made-up readings instead: a DAO, a staking pool and a token,
// whose accounts overlap each other's and the shipped DAO reading's. They
// live only in this process's memory (never in the flowers' or the
// snapshots' tables), carry demo: true in every answer, and go the moment a
// real flower is on the map. Their contracts are under the top-level name
// "demo", which no reader is pointed at here and names no real contract.

// demoDrawing is one demo drawing with its reading, built once.
type demoDrawing struct {
	drawing maps.Drawing
	reading maps.Reading
	spec    specs.Spec
	snap    *snapshots.Snapshot
}

var (
	demoOnce sync.Once
	demoSet  []demoDrawing
)

// demoMadeAt is the demo drawings' one date: the shipped reading's block time.
var demoMadeAt = snapshotsapp.DemoMadeAt

// demoMaker is who the demo drawings say made them.
const demoMaker = "petal (demo)"

// demoDrawings builds the demo drawings once, from snapshotsapp's demo
// readings; one that doesn't draw is a bug there, so it panics (a test
// builds them).
func demoDrawings() []demoDrawing {
	demoOnce.Do(func() {
		for i, r := range snapshotsapp.DemoMapReadings() {
			snap, sha := r.Snapshot, r.SHA256
			spec, err := specs.Propose(&snap, sha, "")
			if err != nil {
				panic(err)
			}
			spec.Title = snap.Title
			specSHA, _, err := specs.Name(spec)
			if err != nil {
				panic(err)
			}
			flower, err := specs.Layout(spec, &snap)
			if err != nil {
				panic(err)
			}
			keys := flower.Keys
			if keys == nil {
				keys = []specs.Key{}
			}
			reading := readingOf(sha, &snap)
			demoSet = append(demoSet, demoDrawing{
				drawing: maps.Drawing{Flower: fmt.Sprintf("demo-%d", i+1), Spec: specSHA, Snapshot: sha,
					Map: published.MapOf(snap.Chain, snap.Params), Title: spec.Title, About: r.About,
					MadeBy: demoMaker, MadeAt: demoMadeAt.Add(time.Duration(i) * time.Minute), Keys: keys, Demo: true},
				reading: reading, spec: spec, snap: &snap,
			})
		}
	})
	return demoSet
}

// withDemo adds the demo drawings to a build that has no real one.
func (s *MapService) withDemo(drawings []maps.Drawing, readings map[string]maps.Reading, specsBySHA map[string]specs.Spec) ([]maps.Drawing, map[string]maps.Reading) {
	if !s.demo || len(drawings) > 0 {
		return drawings, readings
	}
	all := make(map[string]maps.Reading, len(readings)+len(snapshotsapp.DemoMapReadings()))
	for k, v := range readings {
		all[k] = v
	}
	for _, d := range demoDrawings() {
		drawings = append(drawings, d.drawing)
		all[d.drawing.Snapshot] = d.reading
		specsBySHA[d.drawing.Spec] = d.spec
	}
	return drawings, all
}

// ShowsDemo reports whether the map shows the demo drawings now.
func (s *MapService) ShowsDemo(ctx context.Context) (bool, error) {
	st, err := s.current(ctx)
	if err != nil {
		return false, err
	}
	return st.demo, nil
}

// demoOverview is the groups and pairs /api/v1/map carries while the demo
// map shows, in relations_overview's shape, worked out from the demo
// readings in memory (the relations index reads real flowers only): pairs
// sharing at least two accounts (its default), the most shared first.
func demoOverview() (groups, pairs json.RawMessage) {
	type group struct {
		Group string `json:"group"`
		Title string `json:"title"`
		Kind  string `json:"kind"`
		Count int64  `json:"count"`
	}
	type pair struct {
		A       string `json:"a"`
		B       string `json:"b"`
		Shared  int64  `json:"shared"`
		Jaccard string `json:"jaccard"`
	}
	ds := demoDrawings()
	members := make([]map[string]bool, len(ds))
	for i, d := range ds {
		members[i] = map[string]bool{}
		for _, a := range d.snap.Accounts {
			members[i][a.ID] = true
		}
	}
	var ps []pair
	named := map[int]bool{}
	for i := range ds {
		for j := range ds {
			a, b := ds[i].drawing.Map, ds[j].drawing.Map
			if a >= b {
				continue
			}
			var shared int64
			for id := range members[i] {
				if members[j][id] {
					shared++
				}
			}
			if shared < 2 {
				continue
			}
			ps = append(ps, pair{A: a, B: b, Shared: shared,
				Jaccard: relations.Format(relations.Jaccard(shared, int64(len(members[i])), int64(len(members[j]))))})
			named[i], named[j] = true, true
		}
	}
	slices.SortFunc(ps, func(x, y pair) int {
		if x.Shared != y.Shared {
			return int(y.Shared - x.Shared)
		}
		if x.A != y.A {
			return strings.Compare(x.A, y.A)
		}
		return strings.Compare(x.B, y.B)
	})
	gs := []group{}
	for i, d := range ds {
		if named[i] {
			gs = append(gs, group{Group: d.drawing.Map, Title: d.snap.Title, Kind: relations.KindOf(d.snap.Network), Count: int64(len(members[i]))})
		}
	}
	if ps == nil {
		ps = []pair{}
	}
	groups, _ = json.Marshal(gs)
	pairs, _ = json.Marshal(ps)
	return groups, pairs
}

// DemoAccountGroups is what /account shows for an account of the demo
// readings while the demo map shows: the demo maps it is in, in
// account_groups' shape and order (largest share first), worked out from
// the readings in memory, as demoOverview is (the relations index reads real
// flowers only). ok is false when the demo map doesn't show or no demo
// reading has the account.
func (s *MapService) DemoAccountGroups(ctx context.Context, account string) (groups []relationsapp.AccountGroup, ok bool, err error) {
	showing, err := s.ShowsDemo(ctx)
	if err != nil || !showing {
		return nil, false, err
	}
	type found struct {
		group relationsapp.AccountGroup
		share int64
	}
	var in []found
	for _, d := range demoDrawings() {
		ws := make([]relations.Weighted, len(d.snap.Accounts))
		for i, a := range d.snap.Accounts {
			ws[i] = relations.Weighted{Account: a.ID, Weight: a.Weight}
		}
		members, _, err := relations.Members(ws)
		if err != nil {
			return nil, false, err
		}
		for _, m := range members {
			if m.Account == account {
				in = append(in, found{relationsapp.AccountGroup{Group: d.drawing.Map, Title: d.snap.Title,
					Weight: m.Weight, Share: relations.Format(m.Share), Rank: m.Rank}, m.Share})
			}
		}
	}
	slices.SortStableFunc(in, func(a, b found) int { return cmp.Compare(b.share, a.share) })
	for _, f := range in {
		groups = append(groups, f.group)
	}
	return groups, len(groups) > 0, nil
}
