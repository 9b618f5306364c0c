package ports

import (
	"context"

	"github.com/petal-near/petal/domain/people"
)

// Random is the source of randomness for tokens and ids (crypto/rand in
// production). The domain never reads global randomness itself.
type Random interface {
	Read(p []byte) (n int, err error)
}

// SessionStore keeps sessions by the SHA-256 of their token.
type SessionStore interface {
	// CreateSession stores a new session.
	CreateSession(ctx context.Context, s people.Session) error
	// Session returns a stored session by id, or errs.NotFound. It does not
	// judge expiry: the caller compares ExpiresAt with its clock.
	Session(ctx context.Context, id string) (people.Session, error)
	// ReplaceSession deletes old and stores s in one transaction.
	ReplaceSession(ctx context.Context, oldID string, s people.Session) error
	// DeleteSession removes a session; a missing one is not an error.
	DeleteSession(ctx context.Context, id string) error
	// SetSessionInvite makes the session hold inviteID.
	SetSessionInvite(ctx context.Context, id, inviteID string) error
}
