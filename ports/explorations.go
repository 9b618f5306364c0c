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
	// OwnedBy is owner's explorations, the newest first.
	OwnedBy(ctx context.Context, owner string, limit int) ([]explorations.Exploration, error)
	// Claim makes owner the owner of an unowned exploration. claimed is false
	// when it already had an owner (then nothing changes).
	Claim(ctx context.Context, id, owner string, at time.Time) (claimed bool, err error)
	// AddStep numbers step after the exploration's last and stores it.
	AddStep(ctx context.Context, step explorations.Step) (explorations.Step, error)
	AddNote(ctx context.Context, note explorations.Note) error
	Steps(ctx context.Context, id string) ([]explorations.Step, error)
	Notes(ctx context.Context, id string) ([]explorations.Note, error)

	CreateLink(ctx context.Context, l explorations.Link) error
	// LinkByToken finds a link by its token's hash, or errs.NotFound.
	LinkByToken(ctx context.Context, tokenSHA256 string) (explorations.Link, error)
	Links(ctx context.Context, explorationID string) ([]explorations.Link, error)
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
	// PostedReadingsSince counts new posted readings since t.
	PostedReadingsSince(ctx context.Context, t time.Time) (int, error)
}

// IdempotentAnswer is what was kept for an Idempotency-Key.
type IdempotentAnswer struct {
	Fingerprint string
	Answer      []byte // nil while the first request is still running
}
