package snapshotsapp_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
)

func testSnapshot() snapshots.Snapshot {
	return snapshots.Snapshot{
		Schema: snapshots.Schema, Network: "near-dao-members",
		Params: json.RawMessage(`{"chain":"near:mainnet","dao":"marketing.sputnik-dao.near"}`),
		Chain:  snapshots.Mainnet,
		Block:  snapshots.Block{Height: 1, Hash: "h", Time: "2026-11-01T12:00:00Z"},
		Title:  "Members of marketing.sputnik-dao.near", About: "roles",
		Groups: []snapshots.Group{{ID: "council", Label: "Council"}},
		Accounts: []snapshots.Account{
			{ID: "near:mainnet:alice.near", Label: "alice.near", Weight: "1", Groups: []string{"council"}, Attrs: json.RawMessage(`{"role":"council"}`)},
		},
		Source: snapshots.Source{Calls: []snapshots.Call{{Contract: "marketing.sputnik-dao.near", Method: "get_policy"}}},
	}
}

func TestStoreAndLoadSnapshot(t *testing.T) {
	store := memory.NewSnapshotStore()
	in := testSnapshot()
	sha, stored, err := snapshotsapp.StoreSnapshot(t.Context(), store, in, snapshotsapp.OriginThisSite)
	if err != nil || !stored {
		t.Fatalf("store: %v %v", stored, err)
	}
	wantSHA, _, _ := snapshots.Name(in)
	if sha != wantSHA {
		t.Fatalf("name %s, want %s", sha, wantSHA)
	}
	if _, again, err := snapshotsapp.StoreSnapshot(t.Context(), store, in, snapshotsapp.OriginThisSite); err != nil || again {
		t.Fatalf("second store: stored=%v err=%v", again, err)
	}
	got, err := snapshotsapp.LoadSnapshot(t.Context(), store, sha)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, in) {
		t.Fatalf("loaded snapshot differs:\n%+v\n%+v", got, in)
	}
	row, _ := store.Get(t.Context(), sha)
	if row.TargetKey != `near-dao-members{"chain":"near:mainnet","dao":"marketing.sputnik-dao.near"}` || row.Count != 1 {
		t.Fatalf("row facts: %+v", row)
	}

	// A body that no longer matches its name is never handed out.
	other := testSnapshot()
	other.Title = "tampered"
	_, canonical, _ := snapshots.Name(other)
	gz, _ := snapshotsapp.Gzip(canonical)
	tampered := memory.NewSnapshotStore()
	row.Gzipped = gz
	if _, err := tampered.Put(t.Context(), row); err != nil {
		t.Fatal(err)
	}
	if _, err := snapshotsapp.LoadSnapshot(t.Context(), tampered, sha); !errs.Is(err, errs.Internal) {
		t.Fatalf("tampered body: %v", err)
	}

	if _, err := snapshotsapp.LoadSnapshot(t.Context(), store, "0000000000000000000000000000000000000000000000000000000000000000"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := snapshotsapp.LoadSnapshot(t.Context(), store, "ABC"); !errs.Is(err, errs.BadInput) {
		t.Fatalf("bad name: %v", err)
	}
	bad := testSnapshot()
	bad.Accounts[0].Weight = "1.5e3"
	if _, _, err := snapshotsapp.StoreSnapshot(t.Context(), store, bad, snapshotsapp.OriginThisSite); !errs.Is(err, errs.BadInput) {
		t.Fatalf("invalid snapshot stored: %v", err)
	}
}
