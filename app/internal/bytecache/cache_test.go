package bytecache

import (
	"bytes"
	"testing"

	"github.com/petal-near/petal/domain/snapshots"
)

func TestBodyCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	c := NewByteCache[string, []byte](40, 40/4, func(b []byte) int { return len(b) })
	c.Put("a", bytes.Repeat([]byte{1}, 10))
	c.Put("b", bytes.Repeat([]byte{2}, 10))
	c.Put("c", bytes.Repeat([]byte{3}, 10))
	c.Put("d", bytes.Repeat([]byte{4}, 10))
	if _, ok := c.Get("a"); !ok { // a is now the most recent
		t.Fatal("a should be cached")
	}
	c.Put("e", bytes.Repeat([]byte{5}, 10)) // over 40 bytes: b goes
	if _, ok := c.Get("b"); ok {
		t.Fatal("b should have been evicted")
	}
	for _, k := range []string{"a", "c", "d", "e"} {
		if _, ok := c.Get(k); !ok {
			t.Fatalf("%s should be cached", k)
		}
	}
	c.Put("huge", bytes.Repeat([]byte{6}, 11)) // more than a quarter: not kept
	if _, ok := c.Get("huge"); ok || c.BytesHeld() != 40 {
		t.Fatalf("a huge body is not cached (size %d)", c.BytesHeld())
	}
}

func TestSnapshotCacheKeepsTheMostRecentWithinItsLimit(t *testing.T) {
	of := func(n int) *snapshots.Snapshot { return &snapshots.Snapshot{Accounts: make([]snapshots.Account, n)} }
	c := NewByteCache[string, *snapshots.Snapshot](5, 5, func(s *snapshots.Snapshot) int { return len(s.Accounts) })
	c.Put("a", of(3))
	c.Put("b", of(2))
	c.Put("c", of(1)) // 6 > 5: a, the least recently used, goes
	if _, ok := c.Get("a"); ok {
		t.Fatal("a should have been evicted")
	}
	if _, ok := c.Get("b"); !ok { // b is now the most recent
		t.Fatal("b should be kept")
	}
	c.Put("d", of(2)) // c, b, d: 5
	c.Put("e", of(3)) // 8: c goes, then b
	for name, want := range map[string]bool{"b": false, "c": false, "d": true, "e": true} {
		if _, ok := c.Get(name); ok != want {
			t.Fatalf("%s kept = %v, want %v", name, ok, want)
		}
	}
	c.Put("huge", of(6)) // larger than the whole cache: never kept
	if _, ok := c.Get("huge"); ok || c.BytesHeld() != 5 {
		t.Fatalf("huge kept, or held %d", c.BytesHeld())
	}
}

// The decoded cache counts bytes, not accounts: one account whose attrs is
// 8 MiB weighs 8 MiB.
func TestSnapshotFootprintCountsAttrs(t *testing.T) {
	small := snapshots.Snapshot{Accounts: []snapshots.Account{{ID: "near:mainnet:a.near", Weight: "1"}}}
	big := small
	big.Accounts = []snapshots.Account{{ID: "near:mainnet:a.near", Weight: "1", Attrs: bytes.Repeat([]byte("0"), 8<<20)}}
	if s, b := snapshots.Footprint(&small), snapshots.Footprint(&big); s > 1<<10 || b < 8<<20 {
		t.Fatalf("footprints: small %d, big %d", s, b)
	}
}
