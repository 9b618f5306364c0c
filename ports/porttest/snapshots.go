// Package porttest holds one contract suite per port, which every adapter
// implementing the port runs in its own tests (go-cloud's drivertest shape).
package porttest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// SnapshotStoreContract runs the SnapshotStore contract against the stores
// newStore makes (a fresh, empty one per call).
func SnapshotStoreContract(t *testing.T, newStore func(t *testing.T) ports.SnapshotStore) {
	sample := func(n int, target string, height uint64) ports.StoredSnapshot {
		return ports.StoredSnapshot{
			SHA256:    fmt.Sprintf("%064x", n),
			Network:   "near-dao-members",
			TargetKey: target,
			Block:     snapshots.Block{Height: height, Hash: fmt.Sprintf("hash%d", n), Time: "2026-11-01T12:00:00Z"},
			Origin:    "this_site",
			Count:     n,
			Title:     fmt.Sprintf("Reading %d", n),
			About:     "a test reading",
			Gzipped:   []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, byte(n)},
		}
	}

	t.Run("put then get gives back the same bytes and facts", func(t *testing.T) {
		store := newStore(t)
		in := sample(1, "t1", 100)
		in.Origin = "their_machine"
		stored, err := store.Put(t.Context(), in)
		if err != nil || !stored {
			t.Fatalf("first put: stored=%v err=%v", stored, err)
		}
		got, err := store.Get(t.Context(), in.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Gzipped, in.Gzipped) {
			t.Fatalf("body changed: %x vs %x", got.Gzipped, in.Gzipped)
		}
		if got.Network != in.Network || got.TargetKey != in.TargetKey || got.Block != in.Block ||
			got.Origin != in.Origin || got.Count != in.Count || got.Title != in.Title || got.About != in.About {
			t.Fatalf("facts changed:\n got %+v\nwant %+v", got, in)
		}
		if got.StoredAt.IsZero() {
			t.Fatal("stored_at is not set")
		}
	})

	t.Run("the same snapshot twice is stored once", func(t *testing.T) {
		store := newStore(t)
		in := sample(2, "t2", 100)
		if stored, err := store.Put(t.Context(), in); err != nil || !stored {
			t.Fatalf("first put: %v %v", stored, err)
		}
		again := in
		again.Title = "a different title must not overwrite"
		if stored, err := store.Put(t.Context(), again); err != nil || stored {
			t.Fatalf("second put: stored=%v err=%v", stored, err)
		}
		got, _ := store.Get(t.Context(), in.SHA256)
		if got.Title != in.Title {
			t.Fatalf("second put changed the row: %q", got.Title)
		}
	})

	t.Run("a reading this site makes itself becomes this site's, whoever stored it first; never the other way", func(t *testing.T) {
		store := newStore(t)
		posted := sample(4, "t4", 100)
		posted.Origin = "their_machine"
		if stored, err := store.Put(t.Context(), posted); err != nil || !stored {
			t.Fatalf("posted: %v %v", stored, err)
		}
		if _, err := store.Latest(t.Context(), "t4"); !errs.Is(err, errs.NotFound) {
			t.Fatalf("a posted reading is no target's latest: %v", err)
		}
		own := posted
		own.Origin = "this_site"
		if stored, err := store.Put(t.Context(), own); err != nil || stored {
			t.Fatalf("read here too: stored=%v err=%v", stored, err)
		}
		if got, err := store.Latest(t.Context(), "t4"); err != nil || got.Origin != "this_site" || got.SHA256 != own.SHA256 {
			t.Fatalf("after this site read it: %+v %v", got, err)
		}
		for _, origin := range []string{"their_machine", "demo"} {
			again := posted
			again.Origin = origin
			if stored, err := store.Put(t.Context(), again); err != nil || stored {
				t.Fatalf("again: stored=%v err=%v", stored, err)
			}
		}
		if got, _ := store.Get(t.Context(), own.SHA256); got.Origin != "this_site" {
			t.Fatalf("this site's reading went back to %s", got.Origin)
		}
	})

	t.Run("twenty writers of one snapshot at once: exactly one stores it", func(t *testing.T) {
		store := newStore(t)
		in := sample(3, "t3", 100)
		var wg sync.WaitGroup
		var mu sync.Mutex
		storedCount := 0
		for range 20 {
			wg.Go(func() {
				stored, err := store.Put(t.Context(), in)
				if err != nil {
					t.Error(err)
				}
				if stored {
					mu.Lock()
					storedCount++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if storedCount != 1 {
			t.Fatalf("stored %d times", storedCount)
		}
	})

	t.Run("unknown names are not_found", func(t *testing.T) {
		store := newStore(t)
		if _, err := store.Get(t.Context(), fmt.Sprintf("%064x", 999)); !errs.Is(err, errs.NotFound) {
			t.Fatalf("get: %v", err)
		}
		if _, err := store.Latest(t.Context(), "nothing-here"); !errs.Is(err, errs.NotFound) {
			t.Fatalf("latest: %v", err)
		}
	})

	t.Run("latest is the highest block of that target, then the latest stored", func(t *testing.T) {
		store := newStore(t)
		base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		for i, s := range []ports.StoredSnapshot{
			sample(10, "dao", 100),
			sample(11, "dao", 300),
			sample(12, "dao", 200),
			sample(13, "other", 900),
			sample(14, "dao", 300),
		} {
			s.StoredAt = base.Add(time.Duration(i) * time.Minute)
			if _, err := store.Put(t.Context(), s); err != nil {
				t.Fatal(err)
			}
		}
		got, err := store.Latest(t.Context(), "dao")
		if err != nil {
			t.Fatal(err)
		}
		if got.SHA256 != sample(14, "", 0).SHA256 {
			t.Fatalf("latest is %s (count %d)", got.SHA256, got.Count)
		}
	})

	t.Run("a posted reading or the demo is never a target's latest, whatever its block", func(t *testing.T) {
		store := newStore(t)
		own := sample(20, "dao", 100)
		posted, demo := sample(21, "dao", 900), sample(22, "dao", 950)
		posted.Origin, demo.Origin = "their_machine", "demo"
		for _, s := range []ports.StoredSnapshot{own, posted, demo} {
			if _, err := store.Put(t.Context(), s); err != nil {
				t.Fatal(err)
			}
		}
		got, err := store.Latest(t.Context(), "dao")
		if err != nil || got.SHA256 != own.SHA256 || got.Origin != "this_site" {
			t.Fatalf("latest is %s (%s), %v; want this site's own %s", got.SHA256, got.Origin, err, own.SHA256)
		}
		for _, s := range []ports.StoredSnapshot{posted, demo} {
			if got, err := store.Get(t.Context(), s.SHA256); err != nil || got.Origin != s.Origin {
				t.Fatalf("by its name %s: %s, %v", s.SHA256, got.Origin, err)
			}
		}
		only := sample(23, "posted-only", 5)
		only.Origin = "their_machine"
		if _, err := store.Put(t.Context(), only); err != nil {
			t.Fatal(err)
		}
		if _, err := store.Latest(t.Context(), "posted-only"); !errs.Is(err, errs.NotFound) {
			t.Fatalf("a target with only a posted reading has no latest: %v", err)
		}
	})
}

// DAODirectoryContract runs the DAODirectory contract.
func DAODirectoryContract(t *testing.T, newDirectory func(t *testing.T) ports.DAODirectory) {
	t.Run("never read is empty", func(t *testing.T) {
		d := newDirectory(t)
		list, at, err := d.DAOs(t.Context(), "near:mainnet")
		if err != nil || len(list) != 0 || !at.IsZero() {
			t.Fatalf("got %v %v %v", list, at, err)
		}
	})
	t.Run("replace swaps the whole list of one chain", func(t *testing.T) {
		d := newDirectory(t)
		t1 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		if err := d.ReplaceDAOs(t.Context(), "near:mainnet", []string{"b.sputnik-dao.near", "a.sputnik-dao.near"}, t1); err != nil {
			t.Fatal(err)
		}
		if err := d.ReplaceDAOs(t.Context(), "near:testnet", []string{"x.sputnikv2.testnet"}, t1); err != nil {
			t.Fatal(err)
		}
		t2 := t1.Add(25 * time.Hour)
		if err := d.ReplaceDAOs(t.Context(), "near:mainnet", []string{"c.sputnik-dao.near", "a.sputnik-dao.near", "a.sputnik-dao.near"}, t2); err != nil {
			t.Fatal(err)
		}
		list, at, err := d.DAOs(t.Context(), "near:mainnet")
		if err != nil || !at.Equal(t2) || fmt.Sprint(list) != "[a.sputnik-dao.near c.sputnik-dao.near]" {
			t.Fatalf("mainnet: %v %v %v", list, at, err)
		}
		list, _, _ = d.DAOs(t.Context(), "near:testnet")
		if fmt.Sprint(list) != "[x.sputnikv2.testnet]" {
			t.Fatalf("testnet: %v", list)
		}
	})
}
