package snapshotsapp

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/petal-near/petal/domain/snapshots"
)

// The demo map's readings (issue 26, item 4): made up, kept only in memory,
// never stored. The map (mapsapp) draws them on a site that has published
// nothing; they are here, below the flowers, so a demo drawing's own page
// can be rendered by the same tools as any other (ShippedBySHA finds them,
// with origin demo) while ShippedSnapshots, which are stored at start and
// listed, stays the one shipped DAO reading. Their contracts are under the
// top-level name "demo", which names no real contract.

// DemoMapReading is one made-up reading of the demo map.
type DemoMapReading struct {
	ShippedSnapshot
	About string
}

// DemoMadeAt is the demo readings' one date: the shipped reading's block time.
var DemoMadeAt = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

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

var (
	demoMapOnce sync.Once
	demoMap     []DemoMapReading
)

// DemoMapReadings builds the demo map's readings once; one that doesn't
// build is a bug in the list above, so it panics (a test builds them).
func DemoMapReadings() []DemoMapReading {
	demoMapOnce.Do(func() {
		for _, r := range demoReadings {
			params, _ := json.Marshal(map[string]string{"chain": snapshots.Mainnet, r.key: r.contract})
			snap := snapshots.Snapshot{
				Schema: snapshots.Schema, Network: r.network, Params: params, Chain: snapshots.Mainnet,
				Block: snapshots.Block{Height: 131000000, Hash: "11111111111111111111111111111111", Time: DemoMadeAt.Format(time.RFC3339)},
				Title: r.title, About: r.about, Groups: r.groups,
				Source: snapshots.Source{Calls: []snapshots.Call{}},
			}
			for _, a := range r.accounts {
				snap.Accounts = append(snap.Accounts, snapshots.Account{ID: snapshots.Mainnet + ":" + a.name, Label: a.name, Weight: a.weight, Groups: a.groups})
			}
			if problems := snapshots.Validate(snap); len(problems) > 0 {
				panic(fmt.Sprintf("snapshotsapp: demo reading %s: %s: %s", r.contract, problems[0].Path, problems[0].Message))
			}
			sha, canonical, err := snapshots.Name(snap)
			if err != nil {
				panic(err)
			}
			gz, err := Gzip(canonical)
			if err != nil {
				panic(err)
			}
			demoMap = append(demoMap, DemoMapReading{
				ShippedSnapshot: ShippedSnapshot{SHA256: sha, Snapshot: snap, Canonical: canonical, Gzipped: gz},
				About:           r.about,
			})
		}
	})
	return demoMap
}
