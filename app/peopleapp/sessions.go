package peopleapp

import (
	"context"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// SessionService opens, reads, replaces and closes sessions. A session is an
// opaque 256-bit token handed out once (the cookie); only its SHA-256 is
// stored. Its subject is a person (prs_…) or an anonymous handle (anon_…).
//
// Other areas use it through the HTTP door's helpers (adapters/http:
// caller, ensureSession, checkOrigin); they rarely need it directly.
type SessionService struct {
	store  ports.SessionStore
	clock  ports.Clock
	random ports.Random
}

// NewSessionService makes the session service.
func NewSessionService(store ports.SessionStore, clock ports.Clock, random ports.Random) *SessionService {
	return &SessionService{store: store, clock: clock, random: random}
}

// Resolve reads the session a token names. ok is false for an empty, unknown
// or expired token; err is only a store failure.
func (s *SessionService) Resolve(ctx context.Context, token string) (sess people.Session, ok bool, err error) {
	if token == "" || len(token) > 128 {
		return people.Session{}, false, nil
	}
	sess, err = s.store.Session(ctx, people.HashToken(token))
	if errs.Is(err, errs.NotFound) {
		return people.Session{}, false, nil
	}
	if err != nil {
		return people.Session{}, false, err
	}
	if sess.Expired(s.clock.Now()) {
		return people.Session{}, false, nil
	}
	return sess, true, nil
}

// OpenAnonymous opens a new anonymous session and returns its token, shown
// this once.
func (s *SessionService) OpenAnonymous(ctx context.Context) (string, people.Session, error) {
	subject, err := people.NewAnonymousHandle(s.random)
	if err != nil {
		return "", people.Session{}, err
	}
	token, sess, err := people.NewSession(s.random, subject, s.clock.Now())
	if err != nil {
		return "", people.Session{}, err
	}
	if err := s.store.CreateSession(ctx, sess); err != nil {
		return "", people.Session{}, err
	}
	return token, sess, nil
}

// Replace ends old and opens a session for subject in its place, keeping the
// invite old held. Sign-in does the same inside its own transaction.
func (s *SessionService) Replace(ctx context.Context, old people.Session, subject, walletID string) (string, people.Session, error) {
	token, sess, err := people.Replacement(s.random, old, subject, walletID, s.clock.Now())
	if err != nil {
		return "", people.Session{}, err
	}
	if err := s.store.ReplaceSession(ctx, old.ID, sess); err != nil {
		return "", people.Session{}, err
	}
	return token, sess, nil
}

// Close ends a session (logout). Closing one that is gone is not an error.
func (s *SessionService) Close(ctx context.Context, id string) error {
	return s.store.DeleteSession(ctx, id)
}

// HoldInvite makes the session hold an invite.
func (s *SessionService) HoldInvite(ctx context.Context, sessionID, inviteID string) error {
	return s.store.SetSessionInvite(ctx, sessionID, inviteID)
}
