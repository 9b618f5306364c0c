package ports

import "context"

// SocialDB reads NEAR Social's key-value contract (social.near on mainnet,
// v1.social08.testnet on testnet), where people publish flowers under their
// own account at <account>/petal/flower/<id>. Every read is a view call at
// finality final. chain is near:mainnet or near:testnet. Errors as
// NearAccounts': errs.SourceFailed when the chain could not be read (nothing
// is decided then), errs.CannotRead for an answer too large or not in
// SocialDB's shape.
type SocialDB interface {
	// Get reads the values at keys (SocialDB paths such as
	// alice.near/petal/flower/<id>, or alice.near/petal/flower/* for every
	// flower of one account): each leaf found, in path order. A path with
	// nothing under it gives nothing (a deleted value included). At most
	// maxBytes of answer are read; past that it is errs.CannotRead.
	Get(ctx context.Context, chain string, keys []string, maxBytes int) ([]SocialValue, error)
	// Keys lists the leaves matching patterns (such as */petal/flower/* or
	// alice.near/petal/flower/*) with the block each was last written at, in
	// path order, reading at most maxBytes of answer.
	Keys(ctx context.Context, chain string, patterns []string, maxBytes int) ([]SocialKey, error)
	// Accounts is a page of the accounts that hold data in SocialDB, in the
	// contract's own order, from fromIndex: how a reader goes through every
	// account a page at a time (Keys with their patterns) rather than asking
	// one view call to walk them all. Fewer than limit means the last page.
	Accounts(ctx context.Context, chain string, fromIndex, limit int) ([]string, error)
}

// SocialValue is one leaf of SocialDB: its whole path (account first) and
// its string value.
type SocialValue struct {
	Path  string
	Value string
}

// SocialKey is one leaf's path and the block height it was written at.
type SocialKey struct {
	Path        string
	BlockHeight uint64
}
