package agentapp

import (
	"context"
	"sync"
	"time"

	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// Viewer receives a run's events as Follow finds them.
type Viewer interface {
	// Event is one stored event.
	Event(runs.Event) error
	// CaughtUp is called once, after the replay and before live events.
	CaughtUp() error
	// Heartbeat is called every runs.HeartbeatEvery while nothing else is sent.
	Heartbeat() error
}

// replayPage is how many events one read of the log returns.
const replayPage = 1000

// safetyPoll reads the log now and then even without a notification, in case
// one was lost between the listener's reconnects.
const safetyPoll = 5 * time.Second

// Follow replays run id's log from seq from, then follows it live until the
// run ends or ctx does. Each event reaches v once, in order. Viewing changes
// nothing about the run. The viewers of one run in this process share one
// follower (runTail): it alone watches the bus and polls the log, and wakes
// them when the log grows, so a thousand idle viewers cost one read every
// safetyPoll, not a thousand.
func (a *AgentService) Follow(ctx context.Context, id string, from int64, v Viewer) error {
	// Open the follower, and take its wake-up, before reading: nothing
	// appended in between is missed.
	tail := a.tails.open(id)
	defer a.tails.close(id)
	wake := tail.changed()

	cursor := from
	ended, err := a.catchUp(ctx, id, &cursor, -1, tail, v, true)
	if err != nil {
		return err
	}
	if err := v.CaughtUp(); err != nil {
		return err
	}
	if ended {
		return nil
	}
	every := time.Duration(a.heartbeat.Load())
	beat := time.NewTicker(every)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-beat.C:
			if err := v.Heartbeat(); err != nil {
				return err
			}
			continue
		}
		wake = tail.changed()
		sent := cursor
		ended, err := a.catchUp(ctx, id, &cursor, tail.newest(), tail, v, false)
		if err != nil {
			return err
		}
		if ended {
			return nil
		}
		if cursor > sent {
			beat.Reset(every)
		}
	}
}

// catchUp sends every event from *cursor on and reports whether the run has
// ended with them. want is the newest seq known to exist (-1: unknown). In the
// replay, an empty read asks the run whether it has ended (a cursor at the end
// of a finished run); live, the end shows as a terminal event.
func (a *AgentService) catchUp(ctx context.Context, id string, cursor *int64, want int64, tail *runTail, v Viewer, replay bool) (bool, error) {
	for {
		evs, err := tail.since(ctx, *cursor, want)
		if err != nil {
			return false, err
		}
		if len(evs) == 0 {
			if replay {
				return a.endedAt(ctx, id, *cursor)
			}
			return false, nil
		}
		for _, e := range evs {
			if e.Seq < *cursor {
				continue
			}
			if err := deliver(tail, v, e); err != nil {
				return false, err
			}
			*cursor = e.Seq + 1
		}
		if evs[len(evs)-1].Terminal() {
			// A chat's end; the run has ended if nothing came after it.
			if ended, err := a.endedAt(ctx, id, *cursor); ended || err != nil {
				return ended, err
			}
		}
		if len(evs) < replayPage && !replay {
			return false, nil
		}
		want = -1
	}
}

// endedAt reports whether the run has ended and its log ends before cursor.
func (a *AgentService) endedAt(ctx context.Context, id string, cursor int64) (bool, error) {
	run, err := a.store.Get(ctx, id)
	if err != nil {
		return false, err
	}
	return run.Status.Ended() && run.NextSeq <= cursor, nil
}

// tailCache keeps, per run watched in this process, one follower: the run's
// recent events, the one bus watch and the one safety poll its viewers
// share.
type tailCache struct {
	store ports.RunStore
	bus   ports.EventBus
	mu    sync.Mutex
	runs  map[string]*runTail
}

type runTail struct {
	id    string
	store ports.RunStore
	refs  int
	stop  func() // ends the follower (the last viewer left)

	mu     sync.RWMutex
	events []runs.Event  // contiguous and ascending, the last one next-1
	frames []*frame      // events' wire forms, made once for all viewers (agent_frames.go)
	next   int64         // the seq the tail reads on from; -1 until known
	wake   chan struct{} // closed (and replaced) when events grow
	stale  bool          // a read failed: viewers read the log themselves
}

// tailKeep is how many recent events a tail holds.
const tailKeep = 4096

func newTailCache(store ports.RunStore, bus ports.EventBus) *tailCache {
	return &tailCache{store: store, bus: bus, runs: map[string]*runTail{}}
}

// open returns run id's tail, starting its follower for the first viewer.
func (c *tailCache) open(id string) *runTail {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.runs[id]
	if t == nil {
		t = &runTail{id: id, store: c.store, next: -1, wake: make(chan struct{})}
		// Watch now, before the first viewer reads the log.
		updates, unwatch := c.bus.Watch(id)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); t.follow(ctx, updates) }()
		t.stop = func() { cancel(); unwatch(); <-done }
		c.runs[id] = t
	}
	t.refs++
	return t
}

func (c *tailCache) close(id string) {
	c.mu.Lock()
	t := c.runs[id]
	var stop func()
	if t != nil {
		t.refs--
		if t.refs <= 0 {
			delete(c.runs, id)
			stop = t.stop
		}
	}
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// follow reads the log when the bus says it grew, and every safetyPoll in
// case a notification was lost, until ctx ends.
func (t *runTail) follow(ctx context.Context, updates <-chan int64) {
	t.refresh(ctx, -1) // find where the log ends, to read on from there
	poll := time.NewTicker(safetyPoll)
	defer poll.Stop()
	for {
		want := int64(-1)
		select {
		case <-ctx.Done():
			return
		case want = <-updates:
		case <-poll.C:
		}
		t.refresh(ctx, want)
	}
}

// refresh reads what the log holds past the tail (unless the tail already
// holds want) and wakes the viewers when it grew.
func (t *runTail) refresh(ctx context.Context, want int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	failed := func() {
		if ctx.Err() == nil {
			// Each viewer reads for itself, and meets the error.
			t.stale = true
			t.broadcast()
		}
	}
	if t.next < 0 {
		run, err := t.store.Get(ctx, t.id)
		if err != nil {
			failed()
			return
		}
		t.next = run.NextSeq
	}
	if want >= 0 && want < t.next && !t.stale {
		return
	}
	grew := false
	for {
		more, err := t.store.Events(ctx, t.id, t.next, replayPage)
		if err != nil {
			failed()
			return
		}
		if len(more) > 0 {
			t.add(more)
			grew = true
		}
		if len(more) < replayPage {
			break
		}
	}
	if grew || t.stale {
		t.stale = false
		t.broadcast()
	}
}

// changed is closed the next time the tail grows.
func (t *runTail) changed() <-chan struct{} {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.wake
}

// newest is the newest seq the tail holds: what a woken viewer may read
// without touching the log (-1: read it).
func (t *runTail) newest() int64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.next < 0 || t.stale {
		return -1
	}
	return t.next - 1
}

// broadcast wakes every viewer waiting on changed; t.mu is held.
func (t *runTail) broadcast() {
	close(t.wake)
	t.wake = make(chan struct{})
}

// add appends events that follow on from the tail; t.mu is held.
func (t *runTail) add(more []runs.Event) {
	t.events = append(t.events, more...)
	for range more {
		t.frames = append(t.frames, &frame{})
	}
	if len(t.events) > tailKeep {
		t.events = append([]runs.Event(nil), t.events[len(t.events)-tailKeep:]...)
		t.frames = append([]*frame(nil), t.frames[len(t.frames)-tailKeep:]...)
	}
	t.next = t.events[len(t.events)-1].Seq + 1
}

// since returns up to replayPage events from seq from. want is the newest seq
// known to exist: when the tail already holds it, no read is made.
func (t *runTail) since(ctx context.Context, from, want int64) ([]runs.Event, error) {
	// A woken viewer's usual read: what the tail already holds, shared.
	if evs, ok := t.held(from, want); ok {
		return evs, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	first := t.next - int64(len(t.events))
	if t.next < 0 || from < first || from > t.next {
		// Outside what the tail holds (a replay from far back): read the
		// log directly, and start the tail afresh when it reaches the end.
		evs, err := t.store.Events(ctx, t.id, from, replayPage)
		if err != nil {
			return nil, err
		}
		if len(evs) > 0 && len(evs) < replayPage && evs[len(evs)-1].Seq+1 >= t.next {
			t.events, t.frames = nil, nil
			t.add(evs)
		}
		return evs, nil
	}
	if want < 0 || want >= t.next {
		more, err := t.store.Events(ctx, t.id, t.next, replayPage)
		if err != nil {
			return nil, err
		}
		if len(more) > 0 {
			t.add(more)
			t.broadcast()
		}
		first = t.next - int64(len(t.events))
	}
	i := int(from - first)
	if i < 0 {
		// The tail moved past from while growing: read it directly.
		return t.store.Events(ctx, t.id, from, replayPage)
	}
	return t.slice(i), nil
}

// held returns the events from seq from when the tail holds them and want,
// under the read lock only (every viewer of a run wakes at once).
func (t *runTail) held(from, want int64) ([]runs.Event, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	first := t.next - int64(len(t.events))
	if t.next < 0 || t.stale || want < 0 || want >= t.next || from < first || from > t.next {
		return nil, false
	}
	return t.slice(int(from - first)), true
}

// slice is up to replayPage events from index i, shared with the tail
// rather than copied (a thousand viewers wake per event): the tail never
// changes an event it holds, and only appends past a reader's length or
// moves to a new array, so a reader's capped slice stays as it was. t.mu is
// held.
func (t *runTail) slice(i int) []runs.Event {
	if i >= len(t.events) {
		return nil
	}
	out := t.events[i:]
	if len(out) > replayPage {
		out = out[:replayPage]
	}
	return out[:len(out):len(out)]
}
