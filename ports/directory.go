package ports

import (
	"context"
	"time"
)

// DAODirectory keeps the Sputnik factory's list of DAOs per chain, read from
// the chain at most daily, so find_target can match words against it.
type DAODirectory interface {
	// DAOs is the list kept for chain and when it was read; a list never
	// read is empty with a zero time.
	DAOs(ctx context.Context, chain string) (accounts []string, readAt time.Time, err error)
	// ReplaceDAOs replaces the list kept for chain, all at once.
	ReplaceDAOs(ctx context.Context, chain string, accounts []string, readAt time.Time) error
}
