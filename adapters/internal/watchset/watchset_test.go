package watchset

import (
	"sync"
	"testing"
)

// A removal works once however often it is called, and the key goes with
// its last waiter.
func TestRemoveOnceAndDropTheEmptyKey(t *testing.T) {
	var mu sync.Mutex
	s := New[int](&mu)
	removeOne, removeTwo := s.Add("run", 1), s.Add("run", 2)
	removeOne()
	removeOne()
	if got := len(s.Of("run")); got != 1 {
		t.Fatalf("after one removal, twice: %d waiters", got)
	}
	removeTwo()
	if _, ok := s.by["run"]; ok || len(s.by) != 0 {
		t.Fatalf("the key outlived its last waiter: %v", s.by)
	}
	again := s.Add("run", 1)
	removeOne() // an old removal leaves the new waiter alone
	if got := len(s.Of("run")); got != 1 {
		t.Fatalf("a spent removal took a new waiter: %d", got)
	}
	again()
}
