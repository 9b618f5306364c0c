package jobsapp

import (
	"bytes"
	"crypto/rand"
	"testing"
	"time"
)

// The polls' jitter comes from the process's ports.Random, at most a tenth of
// the poll; without one there is none.
func TestSchedulerJitterIsDrawnFromItsRandom(t *testing.T) {
	s := NewScheduler(nil, "p", nil)
	if got := s.jitter(time.Minute); got != 0 {
		t.Fatalf("no random, jitter %v", got)
	}
	s.JitterFrom(bytes.NewReader([]byte{7, 0, 0, 0, 0, 0, 0, 0}))
	if got := s.jitter(time.Minute); got != 7 {
		t.Fatalf("jitter %v, want the 7 ns drawn", got)
	}
	s.JitterFrom(rand.Reader)
	for range 100 {
		if got := s.jitter(time.Minute); got < 0 || got > 6*time.Second {
			t.Fatalf("jitter %v past a tenth of the poll", got)
		}
	}
}
