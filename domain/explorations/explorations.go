// Package explorations is a person's (or an anonymous session's) project: the
// question, the steps and notes of an investigation, and the links that share
// it with read or continue scope. It decides who may do what; storage and
// doors live elsewhere.
package explorations

import (
	"encoding/hex"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
)

// Limits on what a person writes.
const (
	MaxQuestion       = 2000
	MaxTitle          = 200
	MaxNote           = 10_000
	MaxIdempotencyKey = 200
	DefaultListLimit  = 20
	MaxListLimit      = 100
)

// IDPrefix starts every exploration id; a ref without it is a link's token.
const IDPrefix = "exp_"

// Exploration is one project. Owner is the session subject (prs_… or anon_…)
// that made or claimed it; empty for one made through a door without a
// session (MCP), which its id opens to whoever holds it, as an unowned run is.
type Exploration struct {
	ID        string
	Owner     string
	Question  string
	Title     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Step is one saved spec of an investigation, in order.
type Step struct {
	ID          string
	Exploration string
	Seq         int
	SpecSHA256  string
	Spec        []byte // canonical JSON of the spec when it was sent inline, else nil
	Note        string
	CreatedAt   time.Time
}

// Note is a line of text kept with the project.
type Note struct {
	ID          string
	Exploration string
	Text        string
	CreatedAt   time.Time
}

// Scope is what a link lets its holder do.
type Scope string

// Link scopes.
const (
	ScopeRead     Scope = "read"
	ScopeContinue Scope = "continue"
)

// ParseScope reads a scope as sent.
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case ScopeRead, ScopeContinue:
		return Scope(s), nil
	}
	return "", errs.Newf(errs.BadInput, "scope must be read or continue, not %q", s)
}

// Link shares an exploration. Only the SHA-256 of its token is kept.
type Link struct {
	ID          string
	Exploration string
	Scope       Scope
	TokenSHA256 string
	CreatedAt   time.Time
	RevokedAt   *time.Time
}

// Access is what a caller may do with an exploration.
type Access int

// Access levels, each including the ones before it.
const (
	NoAccess Access = iota
	ReadAccess
	ContinueAccess
	OwnerAccess
)

func (a Access) String() string {
	switch a {
	case ReadAccess:
		return "read"
	case ContinueAccess:
		return "continue"
	case OwnerAccess:
		return "owner"
	}
	return "none"
}

// AccessByID is what a caller reaches with an exploration's id: its owner
// everything; anyone, continue, while nobody owns it; anyone else nothing.
func AccessByID(e Exploration, subject string) Access {
	switch {
	case e.Owner == "":
		return ContinueAccess
	case subject != "" && subject == e.Owner:
		return OwnerAccess
	}
	return NoAccess
}

// AccessByLink is what a link's holder reaches: its scope, never the owner's
// rights, and nothing once it is revoked.
func AccessByLink(l Link) Access {
	if l.RevokedAt != nil {
		return NoAccess
	}
	switch l.Scope {
	case ScopeRead:
		return ReadAccess
	case ScopeContinue:
		return ContinueAccess
	}
	return NoAccess
}

// NotFound is the one answer to anyone without access, whatever the reason
// (no such exploration, another's, a revoked link, too little scope), so the
// answer tells nothing about what exists.
func NotFound() *errs.Error {
	return errs.New(errs.NotFound, "no such exploration", "check the id or link; a revoked link stops working")
}

var (
	idPattern    = regexp.MustCompile(`^exp_[0-9a-f]{32}$`)
	tokenPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)
	notePattern  = regexp.MustCompile(`^not_[0-9a-f]{32}$`)
)

// ValidID reports whether id has an exploration id's shape.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// ValidToken reports whether t has a link token's shape.
func ValidToken(t string) bool { return tokenPattern.MatchString(t) }

// NewID makes an id with prefix and 128 random bits: unguessable, since an
// unowned exploration's id is what opens it.
func NewID(random io.Reader, prefix string) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("explorations: random: %w", err)
	}
	return prefix + hex.EncodeToString(b[:]), nil
}

// NewLinkToken makes a link's token, 32 random bytes in base64url, and the
// hash that is all that is stored: the same secrets as sessions.
func NewLinkToken(random io.Reader) (token, hash string, err error) {
	return people.NewToken(random)
}

// HashToken is a link token's stored form: hex SHA-256 of its text.
func HashToken(token string) string { return people.HashToken(token) }

// CheckQuestion checks a new exploration's question and title.
func CheckQuestion(question, title string) error {
	q := strings.TrimSpace(question)
	switch {
	case q == "":
		return errs.New(errs.BadInput, "question is empty", "say what this exploration asks")
	case utf8.RuneCountInString(q) > MaxQuestion:
		return errs.Newf(errs.BadInput, "question is longer than %d characters", MaxQuestion)
	case utf8.RuneCountInString(title) > MaxTitle:
		return errs.Newf(errs.BadInput, "title is longer than %d characters", MaxTitle)
	}
	return nil
}

// CheckNote checks a note's text (also a step's note, which may be empty).
func CheckNote(field, text string, required bool) error {
	switch {
	case required && strings.TrimSpace(text) == "":
		return errs.Newf(errs.BadInput, "%s is empty", field)
	case utf8.RuneCountInString(text) > MaxNote:
		return errs.Newf(errs.BadInput, "%s is longer than %d characters", field, MaxNote)
	}
	return nil
}

var sha256Pattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ValidSHA256 reports whether s is a lower-case hex SHA-256.
func ValidSHA256(s string) bool { return sha256Pattern.MatchString(s) }

// CheckIdempotencyKey checks an Idempotency-Key header: at most 200 visible
// ASCII characters.
func CheckIdempotencyKey(key string) error {
	if len(key) > MaxIdempotencyKey {
		return errs.Newf(errs.BadInput, "Idempotency-Key is longer than %d characters", MaxIdempotencyKey)
	}
	for _, r := range key {
		if r < 0x21 || r > 0x7e {
			return errs.New(errs.BadInput, "Idempotency-Key may hold only visible ASCII characters")
		}
	}
	return nil
}

// ListLimit reads list_explorations' limit: the default when absent, at most
// MaxListLimit.
func ListLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultListLimit, nil
	case limit < 0 || limit > MaxListLimit:
		return 0, errs.Newf(errs.BadInput, "limit must be between 1 and %d", MaxListLimit)
	}
	return limit, nil
}

// StartOfDayUTC is midnight UTC of t's day, when daily caps start again.
func StartOfDayUTC(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
