package agentjobsapp

import (
	"context"
	"sync"
	"testing"
	"time"
)

// localSignals is ports.Signals within one process, for the hub's tests.
type localSignals struct {
	mu sync.Mutex
	ls map[string]map[chan struct{}]bool
}

func (s *localSignals) Listen(topic string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	if s.ls == nil {
		s.ls = map[string]map[chan struct{}]bool{}
	}
	if s.ls[topic] == nil {
		s.ls[topic] = map[chan struct{}]bool{}
	}
	s.ls[topic][ch] = true
	s.mu.Unlock()
	return ch, func() { s.mu.Lock(); delete(s.ls[topic], ch); s.mu.Unlock() }
}

func (s *localSignals) Signal(_ context.Context, topic string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.ls[topic] {
		poke(ch)
	}
	return nil
}

func woken(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-time.After(2 * time.Second):
		return false
	}
}

func TestTheHubWakesAFewAndNeverLosesAWakeUp(t *testing.T) {
	sig := &localSignals{}
	h := newWaitHub(sig)
	type w struct {
		ch          <-chan struct{}
		done, leave func()
	}
	var ws []w
	for range wakeFirst + 4 {
		ch, done, leave, err := h.join("prs_a")
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, w{ch, done, leave})
	}
	_ = sig.Signal(t.Context(), jobsTopic("prs_a"))
	n := 0
	for _, x := range ws {
		select {
		case <-x.ch:
			n++
		case <-time.After(200 * time.Millisecond):
		}
	}
	if n != wakeFirst {
		t.Fatalf("a signal woke %d waiters, not %d", n, wakeFirst)
	}
	// Every waiter is trying now (the woken ones haven't said they're done,
	// the rest are poked by a second signal); a third finds none free, so the
	// first to finish tries again.
	_ = sig.Signal(t.Context(), jobsTopic("prs_a"))
	time.Sleep(50 * time.Millisecond)
	for _, x := range ws[wakeFirst:] {
		<-x.ch
	}
	_ = sig.Signal(t.Context(), jobsTopic("prs_a"))
	time.Sleep(50 * time.Millisecond)
	ws[0].done()
	if !woken(ws[0].ch) {
		t.Fatal("the wake-up that found everyone busy was lost")
	}
	for _, x := range ws {
		x.leave()
	}
	if len(h.owners) != 0 {
		t.Fatal("the last to leave stops listening")
	}
}
