package app

import (
	"bytes"
	"testing"
)

func TestBodyCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	c := newBodyCache(40)
	c.put("a", bytes.Repeat([]byte{1}, 10))
	c.put("b", bytes.Repeat([]byte{2}, 10))
	c.put("c", bytes.Repeat([]byte{3}, 10))
	c.put("d", bytes.Repeat([]byte{4}, 10))
	if _, ok := c.get("a"); !ok { // a is now the most recent
		t.Fatal("a should be cached")
	}
	c.put("e", bytes.Repeat([]byte{5}, 10)) // over 40 bytes: b goes
	if _, ok := c.get("b"); ok {
		t.Fatal("b should have been evicted")
	}
	for _, k := range []string{"a", "c", "d", "e"} {
		if _, ok := c.get(k); !ok {
			t.Fatalf("%s should be cached", k)
		}
	}
	c.put("huge", bytes.Repeat([]byte{6}, 11)) // more than a quarter: not kept
	if _, ok := c.get("huge"); ok || c.size != 40 {
		t.Fatalf("a huge body is not cached (size %d)", c.size)
	}
}
