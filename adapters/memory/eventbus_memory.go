package memory

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sync"

	"github.com/petal-near/petal/adapters/internal/watchset"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// EventHub is what a set of in-memory event buses share: appends to its run
// stores, and stop requests, reach every bus on it.
type EventHub struct {
	mu    sync.Mutex
	buses []*EventBus
}

// NewEventHub makes a hub with no buses yet.
func NewEventHub() *EventHub { return &EventHub{} }

// Bus makes a bus on the hub, standing for one process.
func (h *EventHub) Bus() *EventBus {
	b := &EventBus{hub: h}
	b.watchers = watchset.New[*watcher](&b.mu)
	h.mu.Lock()
	h.buses = append(h.buses, b)
	h.mu.Unlock()
	return b
}

func (h *EventHub) each(f func(*EventBus)) {
	h.mu.Lock()
	buses := slices.Clone(h.buses)
	h.mu.Unlock()
	for _, b := range buses {
		f(b)
	}
}

func (h *EventHub) appended(runID string, seq int64) {
	h.each(func(b *EventBus) {
		b.mu.Lock()
		defer b.mu.Unlock()
		for w := range b.watchers.Of(runID) {
			w.offer(seq)
		}
	})
}

// EventBus is one process's view of an EventHub.
type EventBus struct {
	hub      *EventHub
	mu       sync.Mutex
	watchers watchset.Sets[*watcher]
	onStop   func(runID string)
}

type watcher struct{ ch chan int64 }

// offer gives v to a watcher, replacing an unread older value, so a slow
// watcher only ever finds the newest.
func (w *watcher) offer(v int64) {
	for {
		select {
		case w.ch <- v:
			return
		default:
		}
		select {
		case <-w.ch:
		default:
		}
	}
}

var _ ports.EventBus = (*EventBus)(nil)

// Watch implements ports.EventBus.
func (b *EventBus) Watch(runID string) (<-chan int64, func()) {
	w := &watcher{ch: make(chan int64, 1)}
	return w.ch, b.watchers.Add(runID, w)
}

// RequestStop implements ports.EventBus: every bus on the hub hears it.
func (b *EventBus) RequestStop(_ context.Context, runID string) error {
	b.hub.each(func(o *EventBus) {
		o.mu.Lock()
		f := o.onStop
		o.mu.Unlock()
		if f != nil {
			go f(runID)
		}
	})
	return nil
}

// OnStop implements ports.EventBus.
func (b *EventBus) OnStop(f func(runID string)) {
	b.mu.Lock()
	b.onStop = f
	b.mu.Unlock()
}

// Attestations keeps attestation reports in memory, byte for byte.
type Attestations struct {
	mu      sync.Mutex
	reports map[string][]byte
}

var _ ports.Attestations = (*Attestations)(nil)

// NewAttestations makes an empty report store.
func NewAttestations() *Attestations { return &Attestations{reports: map[string][]byte{}} }

// Put implements ports.Attestations.
func (a *Attestations) Put(_ context.Context, body []byte) (string, error) {
	sum := sha256.Sum256(body)
	name := hex.EncodeToString(sum[:])
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.reports[name]; !ok {
		a.reports[name] = bytes.Clone(body)
	}
	return name, nil
}

// Get implements ports.Attestations.
func (a *Attestations) Get(_ context.Context, sha string) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	b, ok := a.reports[sha]
	if !ok {
		return nil, errs.Newf(errs.NotFound, "no attestation report %s", sha)
	}
	return bytes.Clone(b), nil
}
