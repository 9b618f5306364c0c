package postgres

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
)

// Appends to one run are numbered under that run's row lock, so concurrent
// appenders of one run commit one after another, each waiting out the one
// before it (its commit and WAL flush). The batcher turns that queue into
// group commit: while one append to a run is being written, the appends to
// the same run that arrive on this process wait together and go as the next
// single statement. Across processes nothing changes (the row lock still
// orders them), and a run is written by one process at a time anyway.
//
// Leadership passes on: the caller whose statement finishes hands the waiting
// batch to its first member, so no caller writes for others indefinitely.

// batchWriteTimeout bounds a statement carrying other callers' events, which
// is written on a context detached from the leader's own cancellation: one
// caller leaving must not fail the others' appends.
const batchWriteTimeout = 15 * time.Second

// maxBatchEvents caps one statement; the rest waits for the next.
const maxBatchEvents = 500

type appendCall struct {
	ctx    context.Context
	events []runs.NewEvent
	last   int64
	err    error
	done   chan struct{}      // closed once last and err are set
	lead   chan []*appendCall // receives the batch this call is to write, itself first
}

type runQueue struct {
	pending []*appendCall
}

type appendBatcher struct {
	mu     sync.Mutex
	queues map[string]*runQueue // a run is present while an append to it is being written
	write  func(ctx context.Context, id string, events []runs.NewEvent) (int64, error)
}

func newAppendBatcher(write func(ctx context.Context, id string, events []runs.NewEvent) (int64, error)) *appendBatcher {
	return &appendBatcher{queues: map[string]*runQueue{}, write: write}
}

// append writes events to run id, with whatever else is queued for it, and
// returns the seq of its own last event.
func (b *appendBatcher) append(ctx context.Context, id string, events []runs.NewEvent) (int64, error) {
	c := &appendCall{ctx: ctx, events: events, done: make(chan struct{}), lead: make(chan []*appendCall, 1)}
	b.mu.Lock()
	q, busy := b.queues[id]
	if !busy {
		b.queues[id] = &runQueue{}
		b.mu.Unlock()
		b.lead(id, []*appendCall{c})
		return c.last, c.err
	}
	q.pending = append(q.pending, c)
	b.mu.Unlock()

	select {
	case batch := <-c.lead:
		b.lead(id, batch)
	case <-c.done:
	case <-ctx.Done():
		if b.withdraw(id, c) {
			return 0, ctx.Err()
		}
		// Already taken into a batch: its result is on its way.
		select {
		case batch := <-c.lead:
			b.lead(id, batch)
		case <-c.done:
		}
	}
	<-c.done
	return c.last, c.err
}

// withdraw takes c out of run id's queue if no batch has taken it yet.
func (b *appendBatcher) withdraw(id string, c *appendCall) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	q, ok := b.queues[id]
	if !ok {
		return false
	}
	i := slices.Index(q.pending, c)
	if i < 0 {
		return false
	}
	q.pending = slices.Delete(q.pending, i, i+1)
	return true
}

// lead writes batch, hands the next waiting batch (if any) to its first
// member, then settles batch's callers.
func (b *appendBatcher) lead(id string, batch []*appendCall) {
	b.writeBatch(id, batch)
	b.mu.Lock()
	q := b.queues[id]
	next := q.pending
	if n := batchLen(next); n < len(next) {
		next, q.pending = next[:n], next[n:]
	} else {
		q.pending = nil
	}
	if len(next) == 0 {
		delete(b.queues, id)
	}
	b.mu.Unlock()
	if len(next) > 0 {
		next[0].lead <- next
	}
	for _, c := range batch {
		close(c.done)
	}
}

// batchLen is how many of calls fit in one statement (always at least one).
func batchLen(calls []*appendCall) int {
	total := 0
	for i, c := range calls {
		total += len(c.events)
		if total > maxBatchEvents && i > 0 {
			return i
		}
	}
	return len(calls)
}

func (b *appendBatcher) writeBatch(id string, batch []*appendCall) {
	if len(batch) == 1 {
		c := batch[0]
		c.last, c.err = b.write(c.ctx, id, c.events)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(batch[0].ctx), batchWriteTimeout)
	defer cancel()
	var all []runs.NewEvent
	for _, c := range batch {
		all = append(all, c.events...)
	}
	last, err := b.write(ctx, id, all)
	if err != nil && !errs.Is(err, errs.NotFound) && !errs.Is(err, errs.Conflict) {
		// Something in one caller's events may have failed the statement
		// (the run's absence or end fails every caller alike): write each on
		// its own so one bad append can't fail the others.
		for _, c := range batch {
			c.last, c.err = b.write(ctx, id, c.events)
		}
		return
	}
	first := last - int64(len(all)) + 1
	for _, c := range batch {
		first += int64(len(c.events))
		c.last, c.err = first-1, err
		if err != nil {
			c.last = 0
		}
	}
}
