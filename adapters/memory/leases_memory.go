package memory

import (
	"context"
	"sync"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// Leases keeps process leases in memory, timed by clock.
type Leases struct {
	clock ports.Clock
	mu    sync.Mutex
	beats map[string]time.Time // process id → last heartbeat
}

var _ ports.Leases = (*Leases)(nil)

// NewLeases makes an empty lease keeper reading time from clock.
func NewLeases(clock ports.Clock) *Leases {
	return &Leases{clock: clock, beats: map[string]time.Time{}}
}

// Register implements ports.Leases.
func (l *Leases) Register(_ context.Context, p ports.Process) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.beats[p.ID] = l.clock.Now()
	return nil
}

// Heartbeat implements ports.Leases.
func (l *Leases) Heartbeat(_ context.Context, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.beats[id]; !ok {
		return errs.Newf(errs.NotFound, "no lease %s", id)
	}
	l.beats[id] = l.clock.Now()
	return nil
}

// Remove implements ports.Leases.
func (l *Leases) Remove(_ context.Context, id string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.beats, id)
	return nil
}

// Alive implements ports.Leases.
func (l *Leases) Alive(_ context.Context, id string, staleAfter time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.alive(id, staleAfter), nil
}

func (l *Leases) alive(id string, staleAfter time.Duration) bool {
	beat, ok := l.beats[id]
	return ok && beat.After(l.clock.Now().Add(-staleAfter))
}

// Age makes a lease's last heartbeat d older, for tests of lapsed leases.
func (l *Leases) Age(id string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if beat, ok := l.beats[id]; ok {
		l.beats[id] = beat.Add(-d)
	}
}

// aliveNow is Alive for the ledger's sweep.
func (l *Leases) aliveNow(id string, staleAfter time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.alive(id, staleAfter)
}
