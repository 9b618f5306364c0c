package mapsapp

import (
	"encoding/json"
	"io/fs"
	"os"
	"testing"

	"github.com/petal-near/petal/app/internal/hiddenmaps"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/specs"
)

const shippedMapRow = "map-rows/mainnet/members-marketing.json"

// The shipped map row is a flower of the shipped members reading, in
// SocialDB's wire shape, valid as the sync checks it; regenerate it with
// PETAL_WRITE_SHIPPED=1 go test ./app -run TestShippedMapRows.
func TestShippedMapRowsAreValidFlowersOfShippedSnapshots(t *testing.T) {
	if os.Getenv("PETAL_WRITE_SHIPPED") == "1" {
		sh := snapshotsapp.ShippedSnapshots()[0]
		spec, err := specs.Propose(&sh.Snapshot, sh.SHA256, "")
		if err != nil {
			t.Fatal(err)
		}
		f := published.Flower{Schema: published.Schema, Spec: spec, Snapshot: sh.SHA256, Name: "Marketing guild's members",
			About: "Sputnik DAO members on NEAR", Map: published.MapOf(sh.Snapshot.Chain, sh.Snapshot.Params),
			MadeBy: "demo.petal.near", MadeAt: "2026-11-01T12:30:00Z"}
		id, canonical, err := f.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		row := map[string]any{f.MadeBy: map[string]any{"petal": map[string]any{"flower": map[string]any{id: string(canonical)}}}}
		b, _ := json.MarshalIndent(row, "", "  ")
		if err := os.WriteFile(shippedMapRow, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	files, _ := fs.Glob(ShippedMapRows(), "*/*.json")
	if len(files) == 0 {
		t.Fatal("no map rows ship")
	}
	for _, name := range files {
		b, _ := fs.ReadFile(ShippedMapRows(), name)
		var row map[string]map[string]map[string]map[string]string
		if err := json.Unmarshal(b, &row); err != nil {
			t.Fatalf("%s: not in SocialDB's shape: %v", name, err)
		}
		for account, tree := range row {
			for id, record := range tree["petal"]["flower"] {
				f, got, _, problems := published.Parse([]byte(record))
				if len(problems) > 0 || got != id || f.MadeBy != account {
					t.Fatalf("%s: %s/%s: problems %v, id %s", name, account, id, problems, got)
				}
				if _, ok := snapshotsapp.ShippedBySHA(f.Snapshot); !ok {
					t.Fatalf("%s: %s draws a snapshot that doesn't ship", name, id)
				}
			}
		}
	}
	if _, err := hiddenmaps.Load(); err != nil {
		t.Fatalf("the shipped hidden maps: %v", err)
	}
}

// The curated marks shipped in petal are a valid list (petal does not start
// with an invalid one), and each entry names a map of an address.
func TestShippedCuratedMarksAreValid(t *testing.T) {
	list, err := CuratedMarks()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) < 3 {
		t.Fatalf("the shipped list has %d entries", len(list))
	}
	for id, e := range list {
		if e.VerifiedBy == "" || id != e.Map {
			t.Fatalf("%s: %+v", id, e)
		}
	}
}
