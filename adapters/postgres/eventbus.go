package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petal-near/petal/adapters/internal/watchset"
	"github.com/petal-near/petal/ports"
)

// EventBus is the event bus on LISTEN/NOTIFY. One connection per process
// listens on notifyChannel and hands each notification to the watchers of its
// run in this process. Notifications carry ids only. A plain append wakes this
// process's watchers at once and queues its NOTIFY, sent after the append has
// committed, batched with others (publish); a chat's first and last events
// notify inside their own transaction. Either way a notification arrives only
// once its events are readable; one lost to a crash costs other processes'
// viewers up to their safety poll, never an event.
type EventBus struct {
	db  *DB
	log *slog.Logger

	mu       sync.Mutex
	watchers watchset.Sets[*watcher]
	topics   watchset.Sets[chan struct{}] // Signals' listeners
	onStop   func(runID string)
	listener *Listener // notifyChannel, on a connection of its own

	// Batched NOTIFYs of appends (see RunStore.PublishingThrough).
	publishing atomic.Bool
	pending    map[string]int64
	pendingAt  map[string]time.Time // when each pending run first grew
	topicsDue  map[string]struct{}  // Signals' topics to NOTIFY in the next batch
	kick       chan struct{}

	// sentAt is when each NOTIFY this process sent was queued, by payload,
	// until it comes back on this process's own LISTEN: the lag every
	// replica's viewers see, measured without comparing two machines' clocks.
	sentAt   map[string]time.Time
	watching ports.Gauge
	lag      ports.Histogram
}

// maxSentAt bounds sentAt: notifications lost while the listener reconnected
// never come back, so past this many the record starts again.
const maxSentAt = 10_000

type watcher struct {
	ch chan int64
}

var (
	_ ports.EventBus = (*EventBus)(nil)
	_ ports.Signals  = (*EventBus)(nil)
)

// NewEventBus makes the bus; Run must be running for it to deliver.
func NewEventBus(db *DB, log *slog.Logger) *EventBus {
	b := &EventBus{db: db, log: log, listener: NewListener(db, log, notifyChannel),
		pending: map[string]int64{}, pendingAt: map[string]time.Time{}, topicsDue: map[string]struct{}{}, kick: make(chan struct{}, 1),
		sentAt: map[string]time.Time{}}
	b.watchers, b.topics = watchset.New[*watcher](&b.mu), watchset.New[chan struct{}](&b.mu)
	// Wake the watchers already there on each (re)connect, before the bus
	// says it is ready: one that watches after Ready missed nothing, and a -1
	// ("look again") sent it by this connect would hide the seq of the next
	// notification.
	b.listener.On(b.dispatch, b.wakeAll)
	return b.ObservedBy(ports.NoMetrics{})
}

// ObservedBy declares the bus's metrics on m: who waits on it, and how long
// its notifications take to arrive.
func (b *EventBus) ObservedBy(m ports.Metrics) *EventBus {
	b.watching = m.Gauge("petal_event_bus_watchers",
		"Waits on a run's events in this process: each SSE viewer following a run live, and each stop waiting for its run to end.")
	b.lag = m.Histogram("petal_event_bus_notify_lag_seconds",
		"From an append being published to its NOTIFY arriving back on this process's LISTEN (batching, the commit and delivery): what viewers on other replicas wait.",
		[]float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5})
	return b
}

// Ready is closed once the bus listens.
func (b *EventBus) Ready() <-chan struct{} { return b.listener.Ready() }

// Watch implements ports.EventBus.
func (b *EventBus) Watch(runID string) (<-chan int64, func()) {
	w := &watcher{ch: make(chan int64, 1)}
	remove := b.watchers.Add(runID, w)
	b.watching.Add(1)
	var once sync.Once
	return w.ch, func() {
		once.Do(func() {
			b.watching.Add(-1)
			remove()
		})
	}
}

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
		case old := <-w.ch:
			// -1 (look again) wins; else the newer seq.
			if old < 0 || (v >= 0 && old > v) {
				v = old
			}
		default:
		}
	}
}

// RequestStop implements ports.EventBus.
func (b *EventBus) RequestStop(ctx context.Context, runID string) error {
	_, err := b.db.Pool.Exec(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, "s "+runID)
	return err
}

// OnStop implements ports.EventBus.
func (b *EventBus) OnStop(f func(runID string)) {
	b.mu.Lock()
	b.onStop = f
	b.mu.Unlock()
}

// Run listens until ctx ends, reconnecting after a failure. After each
// (re)connect every watcher is told to look again, since notifications sent
// while nobody listened are lost.
func (b *EventBus) Run(ctx context.Context) error {
	done := make(chan struct{})
	go func() { defer close(done); b.publish(ctx) }()
	b.publishing.Store(true)
	defer func() { b.publishing.Store(false); <-done }()
	return b.listener.Run(ctx)
}

// published wakes this process's watchers of runID at once and queues the
// NOTIFY other processes hear.
func (b *EventBus) published(runID string, seq int64) {
	b.mu.Lock()
	for w := range b.watchers.Of(runID) {
		w.offer(seq)
	}
	if seq > b.pending[runID] || b.pending[runID] == 0 {
		b.pending[runID] = seq
	}
	if _, ok := b.pendingAt[runID]; !ok {
		b.pendingAt[runID] = time.Now()
	}
	b.mu.Unlock()
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// publish sends the queued notifications, one statement for all the runs
// that grew since the last one, until ctx ends (then once more).
func (b *EventBus) publish(ctx context.Context) {
	for {
		stopping := false
		select {
		case <-b.kick:
		case <-ctx.Done():
			stopping = true
		}
		b.mu.Lock()
		payloads := make([]string, 0, len(b.pending))
		if len(b.sentAt)+len(b.pending) > maxSentAt {
			clear(b.sentAt)
		}
		for run, seq := range b.pending {
			p := fmt.Sprintf("e %s %d", run, seq)
			payloads = append(payloads, p)
			b.sentAt[p] = b.pendingAt[run]
		}
		for topic := range b.topicsDue {
			payloads = append(payloads, "t "+topic)
		}
		clear(b.pending)
		clear(b.pendingAt)
		clear(b.topicsDue)
		b.mu.Unlock()
		if len(payloads) > 0 {
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_, err := b.db.Pool.Exec(wctx, `SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p`, notifyChannel, payloads)
			cancel()
			if err != nil {
				b.log.Warn("event bus: notifying failed; other processes' viewers will catch up by polling", "err", err)
			}
		}
		if stopping {
			return
		}
	}
}

func (b *EventBus) dispatch(payload string) {
	kind, rest, _ := strings.Cut(payload, " ")
	switch kind {
	case "e":
		runID, seqText, _ := strings.Cut(rest, " ")
		seq, err := strconv.ParseInt(seqText, 10, 64)
		if err != nil {
			return
		}
		b.mu.Lock()
		for w := range b.watchers.Of(runID) {
			w.offer(seq)
		}
		sent, ours := b.sentAt[payload]
		delete(b.sentAt, payload)
		b.mu.Unlock()
		if ours {
			b.lag.Observe(time.Since(sent).Seconds())
		}
	case "t":
		b.signal(rest)
	case "s":
		b.mu.Lock()
		f := b.onStop
		b.mu.Unlock()
		if f != nil {
			go f(rest)
		}
	}
}

func (b *EventBus) wakeAll() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.topics.All(poke)
	b.watchers.All(func(w *watcher) { w.offer(-1) })
}

// Listen implements ports.Signals.
func (b *EventBus) Listen(topic string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	return ch, b.topics.Add(topic, ch)
}

// Signal implements ports.Signals: a NOTIFY every process hears, this one
// included (a topic is a name, never data). While the bus runs, it joins the
// next batch of notifications (one statement for all, sent at once, off the
// caller's path); a process whose bus doesn't run (petal mcp) sends its own.
func (b *EventBus) Signal(ctx context.Context, topic string) error {
	if !b.publishing.Load() {
		_, err := b.db.Pool.Exec(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, "t "+topic)
		return err
	}
	b.mu.Lock()
	b.topicsDue[topic] = struct{}{}
	b.mu.Unlock()
	select {
	case b.kick <- struct{}{}:
	default:
	}
	return nil
}

func (b *EventBus) signal(topic string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.topics.Of(topic) {
		poke(ch)
	}
}

// poke leaves one wake-up in ch; one already waiting covers this one too.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
