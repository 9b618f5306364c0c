package agentjobsapp

import (
	"sync"

	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// How a signal wakes one person's waiters in this process: a few at once,
// and each that takes a job wakes two more, so a burst of jobs is met by a
// widening front of takers while a lone job wakes a few waiters, not every
// one of hundreds (each woken waiter is a take statement on the database).
const (
	wakeFirst  = 8
	wakeOnTake = 2
	// maxWaitsHere bounds one person's open waits in one process (their
	// goroutines and connections): every worker of every agent they may have.
	maxWaitsHere = agentjobs.MaxWorkersPerAgent * agentjobs.MaxAgentsPerPerson
)

// waitHub keeps this process's waiters per person and hands them the
// person's signals. It holds only who waits here (goroutines of open
// requests): nothing other replicas need.
type waitHub struct {
	signals ports.Signals
	mu      sync.Mutex
	owners  map[string]*ownerWaiters
}

type ownerWaiters struct {
	waiters []*hubWaiter // oldest wake first
	stop    func()
	// again: a wake-up found every waiter already trying, so one of them
	// tries once more when it's done (its try may have begun before the job
	// it was woken for committed).
	again bool
}

type hubWaiter struct {
	ch    chan struct{}
	woken bool // poked and not yet back to waiting
}

func newWaitHub(signals ports.Signals) *waitHub {
	return &waitHub{signals: signals, owners: map[string]*ownerWaiters{}}
}

// join adds a waiter for owner: ch delivers its wake-ups; done says it
// tried and waits again; leave removes it.
func (h *waitHub) join(owner string) (ch <-chan struct{}, done func(), leave func(), err error) {
	w := &hubWaiter{ch: make(chan struct{}, 1)}
	h.mu.Lock()
	o := h.owners[owner]
	if o != nil && len(o.waiters) >= maxWaitsHere {
		h.mu.Unlock()
		return nil, nil, nil, errs.Newf(errs.RateLimited, "at most %d waits of one person open at once here", maxWaitsHere).
			WithHint("one wait per worker is enough").WithRetryAfter(5)
	}
	if o == nil {
		o = &ownerWaiters{}
		h.owners[owner] = o
		sig, stop := h.signals.Listen(jobsTopic(owner))
		quit := make(chan struct{})
		o.stop = func() { stop(); close(quit) }
		go func() {
			for {
				select {
				case <-sig:
					h.wake(owner, wakeFirst)
				case <-quit:
					return
				}
			}
		}()
	}
	o.waiters = append(o.waiters, w)
	h.mu.Unlock()
	done = func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		w.woken = false
		if o.again {
			o.again = false
			w.woken = true
			poke(w.ch)
		}
	}
	var once sync.Once
	leave = func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			for i, x := range o.waiters {
				if x == w {
					o.waiters = append(o.waiters[:i], o.waiters[i+1:]...)
					break
				}
			}
			if len(o.waiters) == 0 && h.owners[owner] == o {
				delete(h.owners, owner)
				o.stop()
			}
		})
	}
	return w.ch, done, leave, nil
}

// wake pokes up to n of owner's waiters that aren't trying already, and
// moves them to the back, so the next wake-up goes to others.
func (h *waitHub) wake(owner string, n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	o := h.owners[owner]
	if o == nil {
		return
	}
	var poked, rest []*hubWaiter
	busy := false
	for _, w := range o.waiters {
		switch {
		case len(poked) < n && !w.woken:
			w.woken = true
			poke(w.ch)
			poked = append(poked, w)
		default:
			busy = busy || w.woken
			rest = append(rest, w)
		}
	}
	if len(poked) < n && busy {
		o.again = true
	}
	o.waiters = append(rest, poked...)
}

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
