package postgres

import "sync"

// watchSets are a bus's waiters by key (a run, a topic), guarded by the
// bus's lock. Each waiter added gets back its removal, which does its work
// once however often it is called and drops the key with its last waiter, so
// an idle bus holds nothing.
type watchSets[T comparable] struct {
	mu *sync.Mutex
	by map[string]map[T]struct{}
}

func newWatchSets[T comparable](mu *sync.Mutex) watchSets[T] {
	return watchSets[T]{mu: mu, by: map[string]map[T]struct{}{}}
}

// add registers v under key and returns its removal.
func (s watchSets[T]) add(key string, v T) (remove func()) {
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

// of is key's waiters (none: an empty set); the caller holds the lock.
func (s watchSets[T]) of(key string) map[T]struct{} { return s.by[key] }
