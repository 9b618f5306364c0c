package memory

import (
	"context"
	"sync"
	"time"

	"github.com/petal-near/petal/ports"
)

// Semaphore hands out leased slots in one process (ports.Semaphore). Several
// processes on one database need the postgres adapter instead.
type Semaphore struct {
	clock ports.Clock
	mu    sync.Mutex
	next  uint64
	held  map[string]map[uint64]heldSlot // by name, then by slot
}

type heldSlot struct {
	key   string
	until time.Time
}

var _ ports.Semaphore = (*Semaphore)(nil)

// NewSemaphore makes a semaphore with no slot held, reading time from clock.
func NewSemaphore(clock ports.Clock) *Semaphore {
	return &Semaphore{clock: clock, held: map[string]map[uint64]heldSlot{}}
}

// Acquire implements ports.Semaphore.
func (s *Semaphore) Acquire(_ context.Context, name, key string, limit int, lease time.Duration) (func(context.Context) error, error) {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	slots := s.held[name]
	if slots == nil {
		slots = map[uint64]heldSlot{}
		s.held[name] = slots
	}
	for id, h := range slots {
		if !now.Before(h.until) {
			delete(slots, id)
		}
	}
	for _, h := range slots {
		if h.key == key {
			return nil, ports.ErrKeyBusy
		}
	}
	if len(slots) >= limit {
		return nil, ports.ErrSlotsTaken
	}
	s.next++
	id := s.next
	slots[id] = heldSlot{key: key, until: now.Add(lease)}
	return func(context.Context) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.held[name], id)
		return nil
	}, nil
}
