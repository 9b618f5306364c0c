package ports

import "context"

// FTHolderIndex names a NEAR fungible token's largest holders from an
// indexer (FastNEAR's API): NEP-141 has no holder list, so a token's holders
// can't be read from the chain itself. It gives account ids only, largest
// first; a reading reads each balance on chain at its pinned block. Errors:
// bad_input (no index for the chain), not_found (the index knows no such
// token), source_failed (the index could not be read in time).
type FTHolderIndex interface {
	TopHolders(ctx context.Context, chain, token string) ([]string, error)
}
