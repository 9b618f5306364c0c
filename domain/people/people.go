// Package people is who is calling: persons (prs_<hex>), anonymous handles
// (anon_<hex>), the sessions that carry them, the wallets bound to a person,
// and NEP-413 proof checking. It is pure: randomness and the time come in.
package people

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// SessionLifetime is how long a session lasts from when it is made.
const SessionLifetime = 30 * 24 * time.Hour

// Subject prefixes.
const (
	PersonPrefix    = "prs_"
	AnonymousPrefix = "anon_"
)

var (
	subjectPattern  = regexp.MustCompile(`^(prs|anon)_[0-9a-f]{32}$`)
	sessionIDFormat = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// NewPersonID makes a private person id, prs_<32 hex>.
func NewPersonID(random io.Reader) (string, error) { return newHandle(random, PersonPrefix) }

// NewAnonymousHandle makes an anonymous subject, anon_<32 hex>.
func NewAnonymousHandle(random io.Reader) (string, error) { return newHandle(random, AnonymousPrefix) }

func newHandle(random io.Reader, prefix string) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("people: random: %w", err)
	}
	return prefix + hex.EncodeToString(b[:]), nil
}

// ValidSubject reports whether s is a person id or an anonymous handle.
func ValidSubject(s string) bool { return subjectPattern.MatchString(s) }

// IsPerson reports whether subject is a signed-in person.
func IsPerson(subject string) bool {
	return strings.HasPrefix(subject, PersonPrefix) && ValidSubject(subject)
}

// Session is one browser's (or client's) standing with the site. Only the
// SHA-256 of its token is ever stored: ID is that hash in hex.
type Session struct {
	ID        string // hex SHA-256 of the token
	Subject   string // prs_… or anon_…
	InviteID  string // the invite this session holds, "" for none
	WalletID  string // the wallet it signed in with, "" for an anonymous session
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Signed reports whether the session belongs to a person.
func (s Session) Signed() bool { return IsPerson(s.Subject) }

// Expired reports whether the session is over at now.
func (s Session) Expired(now time.Time) bool { return !now.Before(s.ExpiresAt) }

// NewToken makes an opaque 256-bit token (base64url, no padding) and its
// stored hash. The token is handed out once and never kept.
func NewToken(random io.Reader) (token, hash string, err error) {
	var b [32]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", "", fmt.Errorf("people: random: %w", err)
	}
	token = base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashToken(token), nil
}

// HashToken is the stored form of a token: hex SHA-256 of its text.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// ValidSessionID reports whether id has the shape of a stored session id.
func ValidSessionID(id string) bool { return sessionIDFormat.MatchString(id) }

// NewSession makes a session for subject at now, with its token.
func NewSession(random io.Reader, subject string, now time.Time) (token string, s Session, err error) {
	if !ValidSubject(subject) {
		return "", Session{}, fmt.Errorf("people: %q is not a subject", subject)
	}
	token, hash, err := NewToken(random)
	if err != nil {
		return "", Session{}, err
	}
	now = now.UTC()
	return token, Session{ID: hash, Subject: subject, CreatedAt: now, ExpiresAt: now.Add(SessionLifetime)}, nil
}

// Replacement is the session that replaces old for subject at sign-in: a new
// token, a fresh 30 days, and the invite old held.
func Replacement(random io.Reader, old Session, subject, walletID string, now time.Time) (string, Session, error) {
	token, s, err := NewSession(random, subject, now)
	if err != nil {
		return "", Session{}, err
	}
	s.InviteID = old.InviteID
	s.WalletID = walletID
	return token, s, nil
}
