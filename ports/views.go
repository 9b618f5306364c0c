package ports

import (
	"context"
	"time"
)

// KeptView is a person's view as kept: its canonical JSON under its name,
// with the credential of the session that kept it and when.
type KeptView struct {
	Hash string // the view's name (specs.ViewName)
	Body []byte // its canonical JSON
	// Credential is the wallet (wal_…) the keeping session signed in with,
	// "" when the session names none.
	Credential string
	Session    string // the keeping session's id (the hash of its token)
	KeptAt     time.Time
}

// ViewStore keeps people's views (view/v1). Every view anyone has kept stays
// readable by its name, and each person has at most one view of their own.
type ViewStore interface {
	// KeepView makes v the person's view, keeping its body under its name
	// (once: a name already kept keeps its first bytes).
	KeepView(ctx context.Context, person string, v KeptView) error
	// PersonView is the person's kept view, or errs.NotFound.
	PersonView(ctx context.Context, person string) (KeptView, error)
	// View is the canonical JSON of a view anyone kept, by its name, or
	// errs.NotFound.
	View(ctx context.Context, hash string) ([]byte, error)
}
