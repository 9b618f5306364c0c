package memory

import (
	"context"
	"slices"
	"sync"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// Views is ports.ViewStore in one process's memory, for app tests; serve
// keeps views in PostgreSQL. It passes porttest.ViewStoreContract.
type Views struct {
	mu     sync.Mutex
	person map[string]ports.KeptView
	bodies map[string][]byte // by name, the first bytes kept under it
}

var _ ports.ViewStore = (*Views)(nil)

// NewViews makes an empty store.
func NewViews() *Views {
	return &Views{person: map[string]ports.KeptView{}, bodies: map[string][]byte{}}
}

// KeepView implements ports.ViewStore.
func (s *Views) KeepView(_ context.Context, person string, v ports.KeptView) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.bodies[v.Hash]; !ok {
		s.bodies[v.Hash] = slices.Clone(v.Body)
	}
	v.Body = s.bodies[v.Hash]
	s.person[person] = v
	return nil
}

// PersonView implements ports.ViewStore.
func (s *Views) PersonView(_ context.Context, person string) (ports.KeptView, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.person[person]
	if !ok {
		return ports.KeptView{}, errs.New(errs.NotFound, "this person keeps no view")
	}
	v.Body = slices.Clone(v.Body)
	return v, nil
}

// View implements ports.ViewStore.
func (s *Views) View(_ context.Context, hash string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.bodies[hash]
	if !ok {
		return nil, errs.New(errs.NotFound, "no view is kept under this name")
	}
	return slices.Clone(b), nil
}

// Len is how many people keep a view, so a test can say a refusal kept none.
func (s *Views) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.person)
}
