package memory

import (
	"context"
	"fmt"
	"sync"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// Sessions is ports.SessionStore in one process's memory, for app tests;
// serve keeps sessions in PostgreSQL. It passes porttest.SessionStoreContract.
type Sessions struct {
	mu   sync.Mutex
	byID map[string]people.Session
}

var _ ports.SessionStore = (*Sessions)(nil)

// NewSessions makes an empty store.
func NewSessions() *Sessions { return &Sessions{byID: map[string]people.Session{}} }

// CreateSession implements ports.SessionStore.
func (s *Sessions) CreateSession(_ context.Context, sess people.Session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[sess.ID]; ok {
		return fmt.Errorf("memory: session %s exists", sess.ID)
	}
	s.byID[sess.ID] = sess
	return nil
}

// Session implements ports.SessionStore.
func (s *Sessions) Session(_ context.Context, id string) (people.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.byID[id]
	if !ok {
		return people.Session{}, errs.New(errs.NotFound, "no such session")
	}
	return sess, nil
}

// ReplaceSession implements ports.SessionStore.
func (s *Sessions) ReplaceSession(_ context.Context, oldID string, sess people.Session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[sess.ID]; ok && sess.ID != oldID {
		return fmt.Errorf("memory: session %s exists", sess.ID)
	}
	delete(s.byID, oldID)
	s.byID[sess.ID] = sess
	return nil
}

// DeleteSession implements ports.SessionStore.
func (s *Sessions) DeleteSession(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, id)
	return nil
}

// SetSessionInvite implements ports.SessionStore.
func (s *Sessions) SetSessionInvite(_ context.Context, id, inviteID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.byID[id]
	if !ok {
		return errs.New(errs.NotFound, "no such session")
	}
	sess.InviteID = inviteID
	s.byID[id] = sess
	return nil
}
