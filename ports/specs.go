package ports

import "context"

// SpecStore keeps flower specs by their name (the SHA-256 of their canonical
// JSON), so a short draft link (/d/:hash) can find one again. Keeping the
// same spec twice keeps it once.
type SpecStore interface {
	// Keep stores a spec's canonical JSON under its name, with the snapshot it
	// draws. kept is false when it was already there.
	Keep(ctx context.Context, sha256, snapshot string, canonical []byte) (kept bool, err error)
	// Get returns the canonical JSON kept under a name, or errs.NotFound.
	Get(ctx context.Context, sha256 string) ([]byte, error)
}
