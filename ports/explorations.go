package ports

import (
	"context"
	"time"

	"github.com/petal-near/petal/domain/explorations"
)

// ExplorationStore keeps explorations, their steps, notes and links, the
// answers kept for Idempotency-Key, and the readings posted to them.
type ExplorationStore interface {
	CreateExploration(ctx context.Context, e explorations.Exploration) error
	// Exploration is one by id, or errs.NotFound.
	Exploration(ctx context.Context, id string) (explorations.Exploration, error)
	// OwnedBy is at most limit of owner's explorations, the newest first
	// (created_at, then id, descending), after the one after names (none
	// when after.IsStart()).
	OwnedBy(ctx context.Context, owner string, after explorations.ListCursor, limit int) ([]explorations.Exploration, error)
	// Claim makes owner the owner of an unowned exploration. claimed is false
	// when it already had an owner (then nothing changes).
	Claim(ctx context.Context, id, owner string, at time.Time) (claimed bool, err error)
	// AddStep numbers step after the exploration's last and stores it; past
	// explorations.MaxSteps it stores nothing and answers
	// explorations.TooMany (the count and the insert are one transaction).
	AddStep(ctx context.Context, step explorations.Step) (explorations.Step, error)
	// AddNote stores note; past explorations.MaxNotes, as AddStep.
	AddNote(ctx context.Context, note explorations.Note) error
	// Steps is at most limit steps numbered after afterSeq, in order.
	Steps(ctx context.Context, id string, afterSeq, limit int) ([]explorations.Step, error)
	// Notes is at most limit notes after the note (afterAt, afterID) in the
	// notes' order (created_at, then id); afterID "" starts at the first.
	Notes(ctx context.Context, id string, afterAt time.Time, afterID string, limit int) ([]explorations.Note, error)

	// CreateLink stores l; when the exploration already holds
	// explorations.MaxLiveLinks links not revoked it stores nothing and
	// answers explorations.TooManyLinks (the count and the insert are one
	// transaction), or errs.NotFound for no such exploration.
	CreateLink(ctx context.Context, l explorations.Link) error
	// LinkByToken finds a link by its token's hash, or errs.NotFound.
	LinkByToken(ctx context.Context, tokenSHA256 string) (explorations.Link, error)
	// Links is at most limit of the exploration's links, revoked ones
	// included, the oldest first (created_at, then id), after the one after
	// names.
	Links(ctx context.Context, explorationID string, after explorations.ListCursor, limit int) ([]explorations.Link, error)
	// RevokeLink ends a link of the exploration (once: a second revoke keeps
	// the first time), or errs.NotFound.
	RevokeLink(ctx context.Context, explorationID, linkID string, at time.Time) (explorations.Link, error)

	// ReserveIdempotency claims (caller, key) for a request whose body has
	// fingerprint. When the pair was claimed before, it returns that claim:
	// its fingerprint and the answer kept (nil while the first request runs).
	ReserveIdempotency(ctx context.Context, caller, key, fingerprint string, at time.Time) (prior *IdempotentAnswer, err error)
	// KeepIdempotentAnswer records the answer of a reserved request.
	KeepIdempotentAnswer(ctx context.Context, caller, key string, answer []byte) error
	// ReleaseIdempotency forgets a reservation whose request failed, so the
	// key can be used again.
	ReleaseIdempotency(ctx context.Context, caller, key string) error

	// RecordPostedReading ties a posted reading to an exploration. isNew says
	// whether the reading counts against the daily cap.
	RecordPostedReading(ctx context.Context, explorationID, sha256 string, isNew bool, at time.Time) error
	// ReservePostedReading takes a place for a new posted reading under the
	// day's caps (the site's, the address's and the owner's, counted since
	// slot.Since), atomically across replicas: refused names the cap that is
	// full ("site", "address" or "owner"), and then nothing is stored.
	ReservePostedReading(ctx context.Context, slot PostedSlot, caps PostedCaps) (refused string, err error)
	// ReleasePostedReading gives back a place whose reading was not stored.
	ReleasePostedReading(ctx context.Context, explorationID, sha256 string) error
	// PostedReadingsSince counts new posted readings since t.
	PostedReadingsSince(ctx context.Context, t time.Time) (int, error)
}

// IdempotentAnswer is what was kept for an Idempotency-Key.
type IdempotentAnswer struct {
	Fingerprint string
	Answer      []byte // nil while the first request is still running
}

// PostedSlot is a new posted reading's place in the day's count.
type PostedSlot struct {
	Exploration, SHA256 string
	Address             string // the poster's rate-limit key
	Owner               string // the exploration's owner ("" for an unowned one)
	At, Since           time.Time
}

// PostedCaps are the day's caps on new posted readings.
type PostedCaps struct{ Site, PerAddress, PerOwner int }

// DataBudget counts the bytes that callers who aren't signed in store each
// UTC day, in one place every replica shares.
type DataBudget interface {
	// Spend adds n bytes to day's count when the count stays within limit;
	// ok is false, and nothing is counted, when it would not.
	Spend(ctx context.Context, day time.Time, n, limit int64) (ok bool, err error)
	// Refund takes back n bytes a write spent and then did not store.
	Refund(ctx context.Context, day time.Time, n int64) error
	// Spent is day's count.
	Spent(ctx context.Context, day time.Time) (int64, error)
}
