package ports

import (
	"context"

	"github.com/petal-near/petal/domain/corrections"
)

// FlowerCorrections keeps corrections of published flowers (correction/v1),
// each once by its id.
type FlowerCorrections interface {
	// Keep stores a correction unless one with its id is kept already (then
	// nothing changes and kept is false); KeptAt is set by the store. Its
	// flower must be kept (errs.NotFound otherwise). It returns the
	// correction as kept, the earlier one when it was there.
	Keep(ctx context.Context, c corrections.Kept) (stored corrections.Kept, kept bool, err error)
	// Get is one kept correction by id, or errs.NotFound.
	Get(ctx context.Context, id string) (corrections.Kept, error)
	// OfFlowers are the newest (kept_at, then id, descending) of each
	// flower's corrections, at most limit a flower; a flower with none is
	// absent.
	OfFlowers(ctx context.Context, flowers []string, limit int) (map[string][]corrections.Kept, error)
	// Count is how many corrections of flower are kept, counting no further
	// than corrections.MaxCounted.
	Count(ctx context.Context, flower string) (int, error)
}
