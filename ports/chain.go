package ports

import (
	"context"
	"fmt"

	"github.com/petal-near/petal/domain/snapshots"
)

// NearContracts reads the NEAR contracts petal's readers read, in the
// domain's words: a DAO's members, its proposals and votes, a pool's
// delegators, a token's balances. The adapter knows the contracts' methods,
// their answers' shapes and their paging. chain is a CAIP-2 id
// (near:mainnet, near:testnet). Errors are petal's: not_found (no such
// account or contract), cannot_read (the contract failed or answered
// something unreadable) or source_failed (the chain could not be reached in
// time), carrying a *ChainError as cause.
type NearContracts interface {
	// Pin starts a reading of chain at its newest final block: every read
	// through the NearReading is at that block, so the snapshot is one
	// consistent moment.
	Pin(ctx context.Context, chain string) (NearReading, error)
	// DAOs lists the DAOs the Sputnik factory of chain has made, at most max,
	// as the factory lists them (not pinned to a block).
	DAOs(ctx context.Context, chain string, max int) ([]string, error)
}

// NearReading is one reading in progress, pinned to one block. It keeps the
// contract calls made through it, which a snapshot names as its source. Its
// methods may be called from several goroutines.
type NearReading interface {
	// Block is the block every read is at.
	Block() snapshots.Block
	// Source is the calls made so far: per contract and method, its
	// arguments when there was one call, else how many there were.
	Source() snapshots.Source

	// DAOProfile is what a Sputnik DAO says of itself (get_config).
	DAOProfile(ctx context.Context, dao string) (snapshots.DAOProfile, error)
	// DAORoles are a DAO's roles that name their members (get_policy).
	DAORoles(ctx context.Context, dao string) ([]snapshots.DAORole, error)
	// DAOProposals reads a DAO's newest proposals, at most max of them, with
	// their votes, page by page.
	DAOProposals(ctx context.Context, dao string, max int, progress Paging) (snapshots.Proposals, error)
	// Delegators reads a staking pool's delegations, at most max of them,
	// page by page. Every staked amount is a whole number of yoctoNEAR.
	Delegators(ctx context.Context, pool string, max int, progress Paging) ([]snapshots.Delegation, error)
	// Token is what a fungible token says of itself (ft_metadata); its
	// decimals are within 0 to snapshots.MaxTokenDecimals.
	Token(ctx context.Context, token string) (snapshots.Token, error)
	// Balances reads each account's balance of token, in its smallest units
	// (whole numbers), in the order of accounts, several at once. progress
	// hears with read 0 first, then after each balance; the first failure
	// ends the read.
	Balances(ctx context.Context, token string, accounts []string, progress Paging) ([]string, error)
}

// Paging hears how far a long read has got: read items of total. A paged
// read calls it with read 0 once it knows total, then after each page.
type Paging func(read, total int)

// ChainError is what the chain said, for code that must tell causes apart
// (an unknown account from an unknown key, say) and for the logs. Cause is
// NEAR's error cause name (UNKNOWN_ACCOUNT, CONTRACT_EXECUTION_ERROR …), or
// a name of petal's for transport failures (TIMEOUT, HTTP_5XX, TRANSPORT).
type ChainError struct {
	Cause   string
	Message string
}

func (e *ChainError) Error() string { return fmt.Sprintf("near rpc: %s: %s", e.Cause, e.Message) }
