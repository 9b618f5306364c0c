package app

import (
	"testing"

	"github.com/petal-near/petal/domain/snapshots"
)

func TestSnapshotCacheKeepsTheMostRecentWithinItsLimit(t *testing.T) {
	of := func(n int) *snapshots.Snapshot { return &snapshots.Snapshot{Accounts: make([]snapshots.Account, n)} }
	c := newSnapshotCache(5)
	c.put("a", of(3))
	c.put("b", of(2))
	c.put("c", of(1)) // 6 > 5: a, the least recently used, goes
	if _, ok := c.get("a"); ok {
		t.Fatal("a should have been evicted")
	}
	if _, ok := c.get("b"); !ok { // b is now the most recent
		t.Fatal("b should be kept")
	}
	c.put("d", of(2)) // c, b, d: 5
	c.put("e", of(3)) // 8: c goes, then b
	for name, want := range map[string]bool{"b": false, "c": false, "d": true, "e": true} {
		if _, ok := c.get(name); ok != want {
			t.Fatalf("%s kept = %v, want %v", name, ok, want)
		}
	}
	c.put("huge", of(6)) // larger than the whole cache: never kept
	if _, ok := c.get("huge"); ok || c.held != 5 {
		t.Fatalf("huge kept, or held %d", c.held)
	}
}
