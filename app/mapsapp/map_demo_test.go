package mapsapp

import (
	"strings"
	"testing"

	"github.com/petal-near/petal/app/snapshotsapp"
)

// The demo readings build, name only made-up contracts (under "demo"), and
// share accounts with the shipped DAO reading and with each other, so an
// account shows in several groups.
func TestDemoReadingsAreMadeUpAndShareAccounts(t *testing.T) {
	ds := demoDrawings()
	if len(ds) != 3 {
		t.Fatalf("%d demo drawings, want a DAO, a pool and a token", len(ds))
	}
	shipped := map[string]bool{}
	for _, a := range snapshotsapp.ShippedSnapshots()[0].Snapshot.Accounts {
		shipped[a.ID] = true
	}
	seen := map[string]int{}
	for _, d := range ds {
		if !d.drawing.Demo || !strings.HasSuffix(d.drawing.Map, ".demo") {
			t.Errorf("%s: not marked demo, or not a made-up contract", d.drawing.Map)
		}
		for _, c := range d.snap.Source.Calls {
			t.Errorf("%s: a demo reading says it called %s", d.drawing.Map, c.Contract)
		}
		shared := 0
		for _, a := range d.snap.Accounts {
			seen[a.ID]++
			if shipped[a.ID] {
				shared++
			}
		}
		if d.drawing.Map == "near:mainnet:garden.demo" && shared == 0 {
			t.Errorf("the demo DAO shares no account with the shipped reading")
		}
		if got, ok := snapshotsapp.ShippedBySHA(d.drawing.Snapshot); !ok || got.Snapshot.Title != d.snap.Title {
			t.Errorf("%s: its reading is not found by its sha256", d.drawing.Map)
		}
	}
	several := 0
	for _, n := range seen {
		if n > 1 {
			several++
		}
	}
	if several < 3 {
		t.Errorf("only %d accounts are in more than one demo reading", several)
	}
}
