package maps

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/domain/specs"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func look() Look {
	return Look{Render: specs.RenderVersion, ViewHash: strings.Repeat("d", 64), View: specs.DefaultView()}
}

func sha(c byte) string { return strings.Repeat(string(c), 64) }

const dao = "near:mainnet:marketing.sputnik-dao.near"

func fixture() ([]Drawing, map[string]Reading) {
	readings := map[string]Reading{
		sha('1'): {Snapshot: sha('1'), Network: "near-dao-members", Title: "Members", AsOf: t0, Count: 6, Params: json.RawMessage(`{"dao":"marketing.sputnik-dao.near"}`)},
		sha('2'): {Snapshot: sha('2'), Network: "near-dao-proposals", Title: "Votes", AsOf: t0.Add(48 * time.Hour), Count: 3},
		sha('3'): {Snapshot: sha('3'), Network: "near-staking-pool", Title: "Pool", AsOf: t0, Count: 9},
	}
	keys := []specs.Key{{Kind: specs.KeyGroup, Index: 0, Label: "council"}, {Kind: specs.KeyOthers, Label: "others"}}
	ds := []Drawing{
		// The members reading drawn twice, then the votes once, on one map.
		{Flower: "f1", Spec: sha('a'), Snapshot: sha('1'), Map: dao, Name: "First", Title: "Members A", About: "DAO members on NEAR", MadeBy: "alice.near", MadeAt: t0.Add(time.Hour), Keys: keys},
		{Flower: "f2", Spec: sha('b'), Snapshot: sha('1'), Map: dao, Title: "Members B", About: "DAO members on NEAR", MadeBy: "bob.near", MadeAt: t0.Add(2 * time.Hour), Keys: keys},
		{Flower: "f3", Spec: sha('c'), Snapshot: sha('2'), Map: dao, Title: "Votes C", About: "DAO votes on NEAR", MadeBy: "carol.near", MadeAt: t0.Add(3 * time.Hour), Keys: keys},
		// The same spec published again by someone else is the same drawing.
		{Flower: "f4", Spec: sha('a'), Snapshot: sha('1'), Map: dao, Name: "Again", MadeBy: "dave.near", MadeAt: t0.Add(4 * time.Hour)},
		// Another map, drawn earlier.
		{Flower: "f5", Spec: sha('e'), Snapshot: sha('3'), Map: "near:mainnet:pool.poolv1.near", Title: "Pool E", MadeBy: "erin.near", MadeAt: t0.Add(30 * time.Minute)},
		// A drawing whose snapshot isn't here is drawn nowhere.
		{Flower: "f6", Spec: sha('f'), Snapshot: sha('9'), Map: "near:mainnet:gone.near", MadeBy: "frank.near", MadeAt: t0.Add(5 * time.Hour)},
	}
	return ds, readings
}

func TestBuildOrdersMapsReadingsAndDrawingsAsTheContractSays(t *testing.T) {
	ds, rs := fixture()
	x := Build(ds, rs, nil, t0)
	if x.Maps() != 2 || x.Views() != 4 {
		t.Fatalf("maps %d views %d, want 2 and 4", x.Maps(), x.Views())
	}
	c := x.Card(0, look())
	if c.ID != dao || c.Chain != "near:mainnet" || *c.Address != "marketing.sputnik-dao.near" {
		t.Fatalf("newest map first: %+v", c)
	}
	// Name from the newest named drawing; the rest from the newest drawing.
	if c.Name == nil || *c.Name != "First" || c.Title != "Votes C" || c.About != "DAO votes on NEAR" || c.ViewURL != "/d/"+sha('c') {
		t.Fatalf("card: name %v title %q about %q view %q", c.Name, c.Title, c.About, c.ViewURL)
	}
	if string(c.Mark) != "null" || c.Proposals == nil || *c.Proposals != "/api/v1/maps/near:mainnet:marketing.sputnik-dao.near/proposals" {
		t.Fatalf("mark %s proposals %v", c.Mark, c.Proposals)
	}
	if len(c.Keys) != 2 || c.Keys[0].Label != "council" || c.Keys[0].Swatch != "#E69F00" {
		t.Fatalf("keys %+v", c.Keys)
	}
	wantPicture := "/api/v1/map/" + sha('c') + "/svg?look=" + specs.RenderVersion + "&view=" + strings.Repeat("d", 64) + "&paint=okabe-ito"
	if c.Picture != wantPicture {
		t.Fatalf("picture %q, want %q", c.Picture, wantPicture)
	}
	// Readings newest first by date; drawings oldest first; made_by the first drawing's maker.
	if len(c.Readings) != 2 || c.Readings[0].Snapshot != sha('2') || c.Readings[1].Snapshot != sha('1') {
		t.Fatalf("readings %+v", c.Readings)
	}
	r := c.Readings[1]
	if r.MadeBy != "alice.near" || len(r.Drawings) != 2 || r.Drawings[0].SHA != sha('a') || r.Drawings[1].SHA != sha('b') || r.Count != 6 {
		t.Fatalf("members reading %+v", r)
	}
	if r.Drawings[0].Name == nil || *r.Drawings[0].Name != "First" || r.Drawings[1].Name != nil || r.Drawings[0].MadeBy != "alice.near" {
		t.Fatalf("drawings %+v", r.Drawings)
	}
	pool := x.Card(1, look())
	if pool.Name != nil || pool.Proposals != nil || len(pool.Readings) != 1 {
		t.Fatalf("pool card %+v", pool)
	}
	// Views: oldest first, each with its reading, the same spec once.
	var order []string
	for i := range x.Views() {
		order = append(order, x.View(i, look(), true).SHA[:1])
	}
	if strings.Join(order, "") != "eabc" {
		t.Fatalf("views in order %v, want e a b c", order)
	}
	v := x.View(1, look(), true)
	if v.Reading == nil || v.Reading.Network != "near-dao-members" || v.Date != "2026-11-01T12:00:00Z" || string(v.Params) != `{"dao":"marketing.sputnik-dao.near"}` {
		t.Fatalf("view %+v", v)
	}
	if v := x.View(1, look(), false); v.Reading != nil {
		t.Fatal("/map/views carries no reading")
	}
	if _, ok := x.OnTheMap(sha('f')); ok {
		t.Fatal("a drawing whose snapshot is missing is on the map")
	}
	if snap, ok := x.ProposalsReading(dao); !ok || snap != sha('2') {
		t.Fatalf("proposals reading %q %v", snap, ok)
	}
}

func TestHiddenMapsAreInNoListButAnswerByID(t *testing.T) {
	ds, rs := fixture()
	hidden, err := ParseHidden([]byte(`[{"map":"` + dao + `","why":"asked by its council","decided":"Elco, 10 Nov"}]`))
	if err != nil {
		t.Fatal(err)
	}
	x := Build(ds, rs, hidden, t0)
	if x.Maps() != 1 || x.Views() != 1 || x.Card(0, look()).ID != "near:mainnet:pool.poolv1.near" {
		t.Fatalf("hidden map listed: maps %d views %d", x.Maps(), x.Views())
	}
	c, ok := x.CardByID(dao, look())
	if !ok || c.Hidden == nil || c.Hidden.Why != "asked by its council" || c.Hidden.Decided != "Elco, 10 Nov" {
		t.Fatalf("hidden card %+v", c)
	}
	if b, _ := json.Marshal(x.Card(0, look())); strings.Contains(string(b), "hidden") {
		t.Fatalf("a listed card says hidden: %s", b)
	}
	if _, ok := x.OnTheMap(sha('a')); !ok {
		t.Fatal("a hidden map's drawing no longer opens")
	}
}

func TestParseHiddenRefusesWhatItCannotTrust(t *testing.T) {
	for name, raw := range map[string]string{
		"not an array":  `{}`,
		"unknown field": `[{"map":"near:mainnet:a.near","why":"x","decided":"y","extra":1}]`,
		"no reason":     `[{"map":"near:mainnet:a.near","why":" ","decided":"y"}]`,
		"no decider":    `[{"map":"near:mainnet:a.near","why":"x","decided":""}]`,
		"upper EVM":     `[{"map":"eip155:1:0xABCDEF0000000000000000000000000000000000","why":"x","decided":"y"}]`,
		"no address":    `[{"map":"near:mainnet","why":"x","decided":"y"}]`,
		"twice":         `[{"map":"near:mainnet:a.near","why":"x","decided":"y"},{"map":"near:mainnet:a.near","why":"x","decided":"y"}]`,
		"trailing":      `[] []`,
	} {
		if _, err := ParseHidden([]byte(raw)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if h, err := ParseHidden([]byte(`[]`)); err != nil || len(h) != 0 {
		t.Fatal(h, err)
	}
}

func TestPagesGoOnFromTheirCursor(t *testing.T) {
	rs := map[string]Reading{sha('1'): {Snapshot: sha('1'), AsOf: t0}}
	var ds []Drawing
	for i := range 25 {
		// Pairs of maps drawn at the same moment, so ties are broken by id.
		ds = append(ds, Drawing{Flower: fmt.Sprintf("f%02d", i), Spec: fmt.Sprintf("%064d", i), Snapshot: sha('1'),
			Map: fmt.Sprintf("near:mainnet:m%02d.near", i), MadeAt: t0.Add(time.Duration(i/2) * time.Minute)})
	}
	x := Build(ds, rs, nil, t0)
	var seen []string
	cursor := ""
	for {
		from, to, next, err := x.CardsPage(cursor, 7)
		if err != nil {
			t.Fatal(err)
		}
		for i := from; i < to; i++ {
			seen = append(seen, x.Card(i, look()).ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if len(seen) != 25 || seen[0] != "near:mainnet:m24.near" || seen[1] != "near:mainnet:m22.near" || seen[2] != "near:mainnet:m23.near" {
		t.Fatalf("maps paged: %v", seen)
	}
	var views []string
	cursor = ""
	for {
		from, to, next, err := x.ViewsPage(cursor, 10)
		if err != nil {
			t.Fatal(err)
		}
		for i := from; i < to; i++ {
			views = append(views, x.View(i, look(), false).Map)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if len(views) != 25 || views[0] != "near:mainnet:m00.near" || views[24] != "near:mainnet:m24.near" {
		t.Fatalf("views paged: %v", views)
	}
	if _, _, _, err := x.CardsPage("not-a-cursor!", 7); err == nil {
		t.Fatal("a made-up cursor was taken")
	}
}

func TestSputnikProposalsSayOnlyWhatTheChainSaid(t *testing.T) {
	tally, err := snapshots.TallyVotes(snapshots.Mainnet, snapshots.Proposals{Last: 3, List: []snapshots.Proposal{
		{ID: 0, Proposer: "alice.near", Description: "Pay the designers\nmore text", Kind: json.RawMessage(`{"Transfer":{"token_id":"","receiver_id":"dora.near","amount":"1"}}`),
			Status: "Approved", SubmissionTime: "1700000000000000000", Votes: map[string]string{"bob.near": "Approve", "carol.near": "Reject"}},
		{ID: 1, Proposer: "bob.near", Kind: json.RawMessage(`"Vote"`), Status: "InProgress", SubmissionTime: "1700000001000000000", Votes: map[string]string{"alice.near": "Remove"}},
		{ID: 2, Proposer: "carol.near", Kind: json.RawMessage(`"Vote"`), Status: "SomethingNew"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	snap := snapshots.Snapshot{Chain: snapshots.Mainnet, Params: json.RawMessage(`{"chain":"near:mainnet","dao":"marketing.sputnik-dao.near"}`),
		Block: snapshots.Block{Time: "2026-11-01T12:00:00Z"}, Detail: tally.Detail,
		Source: snapshots.Source{Calls: []snapshots.Call{{Contract: "marketing.sputnik-dao.near", Method: "get_proposals"}}}}
	p, err := SputnikProposals(dao, sha('2'), &snap)
	if err != nil {
		t.Fatal(err)
	}
	if p.Schema != "proposals/v2" || p.Source.Kind != "sputnik-dao" || p.Source.Contract != "marketing.sputnik-dao.near" || len(p.Proposals) != 3 {
		t.Fatalf("%+v", p)
	}
	newest, open, first := p.Proposals[0], p.Proposals[1], p.Proposals[2]
	if newest.ID != "2" || newest.Outcome != "closed" || newest.AsSaid != "SomethingNew" || newest.At != nil || newest.Title != "Proposal 2" {
		t.Fatalf("unknown status %+v", newest)
	}
	if open.Outcome != "open" || len(open.Votes) != 1 || open.Votes[0].Vote != nil || open.Votes[0].AsSaid != "Remove" {
		t.Fatalf("open %+v", open)
	}
	if first.Title != "Pay the designers" || first.Kind != "Transfer" || *first.Recipient != "near:mainnet:dora.near" ||
		*first.Proposer != "near:mainnet:alice.near" || *first.At != "2023-11-14T22:13:20Z" || first.ClosesAt != nil || first.DecidedAt != nil {
		t.Fatalf("first %+v", first)
	}
	// Only the accounts that voted, in account order; no time for a Sputnik vote.
	if len(first.Votes) != 2 || first.Votes[0].Account != "near:mainnet:bob.near" || *first.Votes[0].Vote != "for" ||
		*first.Votes[1].Vote != "against" || first.Votes[0].At != nil || first.Votes[0].Power != nil {
		t.Fatalf("votes %+v", first.Votes)
	}
}

func TestSplitAndNormaliseIDs(t *testing.T) {
	if c, a, ok := SplitID("near:mainnet:population"); !ok || c != "near:mainnet" || a != "" {
		t.Fatal(c, a, ok)
	}
	if NormaliseID("eip155:100:0xAbC") != "eip155:100:0xabc" || NormaliseID("near:mainnet:A") != "near:mainnet:A" {
		t.Fatal("normalise")
	}
	if _, _, ok := SplitID("near:mainnet"); ok {
		t.Fatal("no address taken")
	}
}
