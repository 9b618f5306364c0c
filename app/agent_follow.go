package app

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
// nothing about the run.
func (a *AgentService) Follow(ctx context.Context, id string, from int64, v Viewer) error {
	// Watch before reading, so nothing appended in between is missed.
	updates, cancel := a.bus.Watch(id)
	defer cancel()
	tail := a.tails.open(id)
	defer a.tails.close(id)

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
	poll := time.NewTicker(safetyPoll)
	defer poll.Stop()
	for {
		want := int64(-1)
		select {
		case <-ctx.Done():
			return nil
		case want = <-updates:
		case <-poll.C:
		case <-beat.C:
			if err := v.Heartbeat(); err != nil {
				return err
			}
			continue
		}
		sent := cursor
		ended, err := a.catchUp(ctx, id, &cursor, want, tail, v, false)
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
			if err := v.Event(e); err != nil {
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

// tailCache keeps the recent events of runs being watched in this process, so
// a thousand viewers of one run cost one read of the log per event, not a
// thousand.
type tailCache struct {
	store ports.RunStore
	mu    sync.Mutex
	runs  map[string]*runTail
}

type runTail struct {
	id     string
	store  ports.RunStore
	refs   int
	mu     sync.Mutex
	events []runs.Event // contiguous and ascending
}

// tailKeep is how many recent events a tail holds.
const tailKeep = 4096

func newTailCache(store ports.RunStore) *tailCache {
	return &tailCache{store: store, runs: map[string]*runTail{}}
}

func (c *tailCache) open(id string) *runTail {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.runs[id]
	if t == nil {
		t = &runTail{id: id, store: c.store}
		c.runs[id] = t
	}
	t.refs++
	return t
}

func (c *tailCache) close(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.runs[id]; t != nil {
		t.refs--
		if t.refs <= 0 {
			delete(c.runs, id)
		}
	}
}

// since returns up to replayPage events from seq from. want is the newest seq
// known to exist: when the tail already holds it, no read is made.
func (t *runTail) since(ctx context.Context, from, want int64) ([]runs.Event, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	first, next := int64(-1), int64(-1)
	if len(t.events) > 0 {
		first, next = t.events[0].Seq, t.events[len(t.events)-1].Seq+1
	}
	if len(t.events) == 0 || from < first || from > next {
		// Outside what the tail holds (a replay from far back): read the
		// log directly, and start the tail afresh when it reaches the end.
		evs, err := t.store.Events(ctx, t.id, from, replayPage)
		if err != nil {
			return nil, err
		}
		if len(evs) < replayPage {
			t.events = append([]runs.Event(nil), evs...)
		}
		return evs, nil
	}
	if want < 0 || want >= next {
		more, err := t.store.Events(ctx, t.id, next, replayPage)
		if err != nil {
			return nil, err
		}
		t.events = append(t.events, more...)
		if len(t.events) > tailKeep {
			t.events = append([]runs.Event(nil), t.events[len(t.events)-tailKeep:]...)
		}
		first = t.events[0].Seq
	}
	i := int(from - first)
	if i >= len(t.events) {
		return nil, nil
	}
	out := t.events[i:]
	if len(out) > replayPage {
		out = out[:replayPage]
	}
	return append([]runs.Event(nil), out...), nil
}
