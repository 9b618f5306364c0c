// Package watchset holds an event bus's waiters by key (a run, a topic), for
// the event bus adapters (memory and postgres) alike.
package watchset

import "sync"

// Sets are waiters by key, guarded by the bus's own lock (the bus holds it
// while it reads them). Each waiter added gets back its removal, which does
// its work once however often it is called and drops the key with its last
// waiter, so an idle bus holds nothing.
type Sets[T comparable] struct {
	mu *sync.Mutex
	by map[string]map[T]struct{}
}

// New makes sets guarded by mu.
func New[T comparable](mu *sync.Mutex) Sets[T] {
	return Sets[T]{mu: mu, by: map[string]map[T]struct{}{}}
}

// Add registers v under key and returns its removal.
func (s Sets[T]) Add(key string, v T) (remove func()) {
	s.mu.Lock()
	set := s.by[key]
	if set == nil {
		set = map[T]struct{}{}
		s.by[key] = set
	}
	set[v] = struct{}{}
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			delete(set, v)
			if len(set) == 0 {
				delete(s.by, key)
			}
		})
	}
}

// Of is key's waiters (none: an empty set); the caller holds the lock.
func (s Sets[T]) Of(key string) map[T]struct{} { return s.by[key] }

// All calls f with every waiter of every key; the caller holds the lock.
func (s Sets[T]) All(f func(T)) {
	for _, set := range s.by {
		for v := range set {
			f(v)
		}
	}
}
