package ports

import (
	"context"
	"time"

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

// SealedWallet is a wallet as stored: its account id sealed.
type SealedWallet struct {
	ID          string
	PersonID    string
	Network     string
	AddressHash []byte // HMAC of near:<network>:<account>: how a binding is found
	Sealed      []byte // AES-GCM of the account id
	ProvedAt    time.Time
}

// SignIn is one successful NEP-413 sign-in, to be written in one transaction.
type SignIn struct {
	Nonce [32]byte
	Now   time.Time
	// NewPersonID is the person made when the wallet is bound to nobody yet.
	NewPersonID string
	// Wallet is the binding (ID used when it is new; PersonID is decided by the store).
	Wallet SealedWallet
	// OldSessionID is the session signing in ("" for none). An anonymous one
	// gives its runs and explorations to the person; its invite moves to the
	// new session.
	OldSessionID string
	// NewSession replaces it; the store sets its Subject, WalletID and InviteID.
	NewSession people.Session
}

// SignedIn is what a sign-in did.
type SignedIn struct {
	PersonID            string
	Session             people.Session
	ClaimedRuns         int
	ClaimedExplorations int
}

// AttachWallet is a signed-in person proving a second wallet (SYS-023).
type AttachWallet struct {
	Nonce    [32]byte
	Now      time.Time
	PersonID string
	// Wallet is the binding to add (ID used when it is new).
	Wallet SealedWallet
}

// Attached is what attaching did.
type Attached struct {
	WalletID string
	// Already is true when the wallet was the person's before (its proof is
	// renewed; nothing else changes).
	Already bool
}

// PeopleStore keeps sign-in challenges, persons and their wallets.
type PeopleStore interface {
	// CreateChallenge stores a new NEP-413 challenge.
	CreateChallenge(ctx context.Context, c people.Challenge) error
	// Challenge reads a challenge by nonce, or errs.NotFound.
	Challenge(ctx context.Context, nonce [32]byte) (people.Challenge, error)
	// SignIn, in one transaction: uses the nonce up (errs.Unauthorised when it
	// is unknown, used or expired by then), finds or makes the person the
	// wallet is bound to, moves an anonymous old session's runs and
	// explorations to them, and replaces the old session with the new one,
	// keeping its invite.
	SignIn(ctx context.Context, in SignIn) (SignedIn, error)
	// AttachWallet, in one transaction: uses the nonce up (errs.Unauthorised
	// when it is unknown, used or expired by then) and binds the wallet to the
	// person. A wallet bound to another person is errs.Conflict and the whole
	// transaction is undone: nothing is merged and the nonce stays unused.
	AttachWallet(ctx context.Context, in AttachWallet) (Attached, error)
	// Wallets are a person's wallets, oldest first.
	Wallets(ctx context.Context, personID string) ([]SealedWallet, error)
	// WalletByHash finds a binding by its keyed hash, or errs.NotFound.
	WalletByHash(ctx context.Context, hash []byte) (SealedWallet, error)
	// TipPercent is a person's tip, nil when they set none.
	TipPercent(ctx context.Context, personID string) (*int, error)
	// SetTipPercent sets (nil: clears) a person's tip.
	SetTipPercent(ctx context.Context, personID string, percent *int) error
}
