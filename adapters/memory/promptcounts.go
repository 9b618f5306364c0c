package memory

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/petal-near/petal/ports"
)

// PromptCounts is ports.PromptCounts in one process's memory, for tests
// that only need the store to exist; serve keeps them in PostgreSQL, where
// every replica sees them.
type PromptCounts struct {
	mu       sync.Mutex
	prefixes map[[3]string]ports.PromptCount // model, prefix, head
	heads    map[[2]string]headSeen
	distrust map[string]ports.BoundDistrust
}

type headSeen struct {
	ports.PromptHead
	at time.Time
}

var _ ports.PromptCounts = (*PromptCounts)(nil)

// NewPromptCounts makes an empty store.
func NewPromptCounts() *PromptCounts {
	return &PromptCounts{prefixes: map[[3]string]ports.PromptCount{}, heads: map[[2]string]headSeen{}, distrust: map[string]ports.BoundDistrust{}}
}

// Record implements ports.PromptCounts.
func (s *PromptCounts) Record(_ context.Context, c ports.PromptCount) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := [3]string{c.Model, c.Prefix, c.Head}
	kept := c
	if old, ok := s.prefixes[key]; ok {
		kept.PromptTokens = max(c.PromptTokens, old.PromptTokens)
		kept.At = latest(c.At, old.At)
	}
	s.prefixes[key] = kept
	hk := [2]string{c.Model, c.Head}
	h, ok := s.heads[hk]
	if !ok {
		h = headSeen{ports.PromptHead{Model: c.Model, Head: c.Head, Upper: c.PromptTokens, Lower: c.PromptTokens - c.MessageBytes}, c.At}
	} else {
		h.Upper, h.Lower, h.at = min(h.Upper, c.PromptTokens), max(h.Lower, c.PromptTokens-c.MessageBytes), latest(h.at, c.At)
	}
	s.heads[hk] = h
	return nil
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Known implements ports.PromptCounts.
func (s *PromptCounts) Known(_ context.Context, models, heads, prefixes []string) (ports.PromptKnown, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out ports.PromptKnown
	if len(prefixes) > ports.MaxKnownPrefixes {
		prefixes = prefixes[len(prefixes)-ports.MaxKnownPrefixes:]
	}
	for _, m := range models {
		for _, h := range heads {
			if seen, ok := s.heads[[2]string{m, h}]; ok {
				out.Heads = append(out.Heads, seen.PromptHead)
			}
		}
		if d, ok := s.distrust[m]; ok {
			out.Distrusted = append(out.Distrusted, d)
		}
	}
	for key, c := range s.prefixes {
		if slices.Contains(models, key[0]) && slices.Contains(prefixes, key[1]) {
			if h, ok := s.heads[[2]string{c.Model, c.Head}]; ok {
				out.Prefixes = append(out.Prefixes, ports.KnownPrefix{Count: c, Head: h.PromptHead})
			}
		}
	}
	return out, nil
}

// Distrust implements ports.PromptCounts.
func (s *PromptCounts) Distrust(_ context.Context, d ports.BoundDistrust) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.distrust[d.Model]; !ok {
		s.distrust[d.Model] = d
	}
	return nil
}

// Trust implements ports.PromptCounts.
func (s *PromptCounts) Trust(_ context.Context, model string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.distrust, model)
	return nil
}

// Prune implements ports.PromptCounts.
func (s *PromptCounts) Prune(_ context.Context, before time.Time) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for k, c := range s.prefixes {
		if c.At.Before(before) {
			delete(s.prefixes, k)
			n++
		}
	}
	for k, h := range s.heads {
		if h.at.Before(before) {
			delete(s.heads, k)
			n++
		}
	}
	return n, nil
}
