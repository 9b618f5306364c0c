package postgres

import (
	"sync"
	"testing"
)

// A removal works once however often it is called, and the key goes with
// its last waiter.
func TestWatchSetsRemoveOnceAndDropTheEmptyKey(t *testing.T) {
	var mu sync.Mutex
	s := newWatchSets[int](&mu)
	removeOne, removeTwo := s.add("run", 1), s.add("run", 2)
	removeOne()
	removeOne()
	if got := len(s.of("run")); got != 1 {
		t.Fatalf("after one removal, twice: %d waiters", got)
	}
	removeTwo()
	if _, ok := s.by["run"]; ok || len(s.by) != 0 {
		t.Fatalf("the key outlived its last waiter: %v", s.by)
	}
	again := s.add("run", 1)
	removeOne() // an old removal leaves the new waiter alone
	if got := len(s.of("run")); got != 1 {
		t.Fatalf("a spent removal took a new waiter: %d", got)
	}
	again()
}
