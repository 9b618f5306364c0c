package mapsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

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
var demoMadeAt = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// demoMaker is who the demo drawings say made them.
const demoMaker = "petal (demo)"

type demoAccount struct {
	name   string
	weight string
	groups []string
}

type demoReading struct {
	network, key, contract, title, about string
	groups                               []snapshots.Group
	accounts                             []demoAccount
}

// demoReadings are made up; the DAO shares alice, bob, carol, dave and erin
// with the shipped marketing DAO reading, and the pool and the token share
// holders with the DAO, so an account shows in several groups.
var demoReadings = []demoReading{
	{
		network: "near-dao-members", key: "dao", contract: "garden.demo",
		title:  "Members of garden.demo (a demo DAO)",
		about:  "A made-up DAO for the demo map: the accounts holding a role in it, grouped by role, each weighing 1. No chain was read.",
		groups: []snapshots.Group{{ID: "council", Label: "council"}, {ID: "gardeners", Label: "gardeners"}},
		accounts: []demoAccount{
			{"alice.near", "1", []string{"council"}}, {"bob.near", "1", []string{"council"}},
			{"carol.near", "1", []string{"council", "gardeners"}}, {"dave.near", "1", []string{"gardeners"}},
			{"erin.near", "1", []string{"gardeners"}}, {"grace.near", "1", []string{"gardeners"}},
			{"heidi.near", "1", []string{"gardeners"}},
		},
	},
	{
		network: "near-staking-pool", key: "pool", contract: "meadow.pool.demo",
		title:  "Delegators of meadow.pool.demo (a demo pool)",
		about:  "A made-up staking pool for the demo map: its delegators by staked NEAR. No chain was read.",
		groups: []snapshots.Group{{ID: "delegators", Label: "delegators"}},
		accounts: []demoAccount{
			{"carol.near", "420000", []string{"delegators"}}, {"ivan.near", "260000", []string{"delegators"}},
			{"alice.near", "150000", []string{"delegators"}}, {"judy.near", "90000", []string{"delegators"}},
			{"grace.near", "45000", []string{"delegators"}}, {"mallory.near", "20000", []string{"delegators"}},
			{"oscar.near", "8000", []string{"delegators"}}, {"peggy.near", "3000", []string{"delegators"}},
		},
	},
	{
		network: "near-ft-balances", key: "token", contract: "seed.token.demo",
		title:  "SEED balances (a demo token)",
		about:  "A made-up token for the demo map: its holders by balance. No chain was read.",
		groups: []snapshots.Group{{ID: "holders", Label: "holders"}},
		accounts: []demoAccount{
			{"ivan.near", "5000000", []string{"holders"}}, {"dave.near", "3100000", []string{"holders"}},
			{"bob.near", "2400000", []string{"holders"}}, {"trent.near", "1200000", []string{"holders"}},
			{"heidi.near", "700000", []string{"holders"}}, {"victor.near", "350000", []string{"holders"}},
		},
	},
}

// demoDrawings builds the demo drawings once; a reading that doesn't build
// is a bug in the list above, so it panics (a test builds them).
func demoDrawings() []demoDrawing {
	demoOnce.Do(func() {
		for i, r := range demoReadings {
			params, _ := json.Marshal(map[string]string{"chain": snapshots.Mainnet, r.key: r.contract})
			snap := snapshots.Snapshot{
				Schema: snapshots.Schema, Network: r.network, Params: params, Chain: snapshots.Mainnet,
				Block: snapshots.Block{Height: 131000000, Hash: "11111111111111111111111111111111", Time: demoMadeAt.Format(time.RFC3339)},
				Title: r.title, About: r.about, Groups: r.groups,
				Source: snapshots.Source{Calls: []snapshots.Call{}},
			}
			for _, a := range r.accounts {
				snap.Accounts = append(snap.Accounts, snapshots.Account{ID: snapshots.Mainnet + ":" + a.name, Label: a.name, Weight: a.weight, Groups: a.groups})
			}
			if problems := snapshots.Validate(snap); len(problems) > 0 {
				panic(fmt.Sprintf("mapsapp: demo reading %s: %s: %s", r.contract, problems[0].Path, problems[0].Message))
			}
			sha, _, err := snapshots.Name(snap)
			if err != nil {
				panic(err)
			}
			spec, err := specs.Propose(&snap, sha, "")
			if err != nil {
				panic(err)
			}
			spec.Title = r.title
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
					Map: published.MapOf(snap.Chain, snap.Params), Title: spec.Title, About: r.about,
					MadeBy: demoMaker, MadeAt: demoMadeAt.Add(time.Duration(i) * time.Minute), Keys: keys, Demo: true},
				reading: reading, spec: spec, snap: &snap,
			})
		}
	})
	return demoSet
}

// demoSnapshot is a demo reading by its sha256, while the demo map shows.
func demoSnapshot(sha string) (*snapshots.Snapshot, bool) {
	for _, d := range demoDrawings() {
		if d.drawing.Snapshot == sha {
			return d.snap, true
		}
	}
	return nil, false
}

// load is a snapshot the map draws: a demo reading from memory while the
// demo map shows, else the library's.
func (s *MapService) load(ctx context.Context, sha string) (snapshotsapp.Loaded, error) {
	if s.demo {
		if snap, ok := demoSnapshot(sha); ok {
			return snapshotsapp.Loaded{Snapshot: snap, Origin: "demo"}, nil
		}
	}
	return s.library.Load(ctx, sha)
}

// withDemo adds the demo drawings to a build that has no real one.
func (s *MapService) withDemo(drawings []maps.Drawing, readings map[string]maps.Reading, specsBySHA map[string]specs.Spec) ([]maps.Drawing, map[string]maps.Reading) {
	if !s.demo || len(drawings) > 0 {
		return drawings, readings
	}
	all := make(map[string]maps.Reading, len(readings)+len(demoReadings))
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
