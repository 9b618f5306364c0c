package ports

import (
	"context"

	"github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/domain/snapshots"
)

// EVMTokens reads ERC-20 tokens on EVM chains, in the domain's words: a
// token's metadata and supply, its Transfer and DelegateVotesChanged logs,
// and what it says of accounts (balanceOf, getVotes). The adapter knows
// JSON-RPC, the ABI, the providers' range limits and their failover. chain is
// a CAIP-2 id (eip155:100). Errors are petal's: bad_input (a chain with no
// RPC setting), not_found (no contract at the address), cannot_read (the
// contract is no ERC-20, or past a cap) or source_failed (no endpoint
// answered in time).
type EVMTokens interface {
	// PinEVM starts a reading of chain at its newest finalized block: every
	// read through the EVMReading is at that block.
	PinEVM(ctx context.Context, chain string) (EVMReading, error)
	// EVMChains are the chains with an RPC setting, in id order.
	EVMChains() []uint64
}

// EVMReading is one reading in progress, pinned to one finalized block. It
// counts the calls made through it, which a snapshot names as its source.
type EVMReading interface {
	// Block is the block every read is at.
	Block() snapshots.Block
	// Source is the calls made so far, per contract and method.
	Source() snapshots.Source

	// Token is what an ERC-20 says of itself at the block (name, symbol,
	// decimals, totalSupply); its decimals are within 0 to
	// snapshots.MaxTokenDecimals.
	Token(ctx context.Context, token evm.Address) (evm.Token, error)
	// Transfers reads token's Transfer logs from block from to the pinned
	// block, in chain order, handing each to apply; apply's error ends the
	// read. Past maxLogs logs it is cannot_read. progress hears after each
	// range of blocks read.
	Transfers(ctx context.Context, token evm.Address, from uint64, maxLogs int, apply func(evm.Transfer) error, progress BlockProgress) error
	// VotesChanges reads token's DelegateVotesChanged logs as Transfers does.
	VotesChanges(ctx context.Context, token evm.Address, from uint64, maxLogs int, apply func(evm.VotesChanged) error, progress BlockProgress) error
	// BalancesOf is balanceOf of each account at the block, in order.
	BalancesOf(ctx context.Context, token evm.Address, accounts []evm.Address) ([]evm.Amount, error)
	// VotesOf is getVotes of each account at the block, in order.
	VotesOf(ctx context.Context, token evm.Address, accounts []evm.Address) ([]evm.Amount, error)

	// BaalTokens is a Baal's shares (voting) and loot (non-voting) tokens,
	// as its sharesToken() and lootToken() say at the block; not_found with
	// no contract there, cannot_read when the contract is no Baal.
	BaalTokens(ctx context.Context, dao evm.Address) (shares, loot evm.Address, err error)
	// BaalEvents reads a Baal's proposal events (submissions, sponsorships,
	// votes, processings, cancellings, governance configs) from block from to
	// the pinned block, in chain order, each with its block's time and a
	// submission with its transaction's sender; past maxLogs it is
	// cannot_read.
	BaalEvents(ctx context.Context, dao evm.Address, from uint64, maxLogs int, apply func(evm.BaalEvent) error, progress BlockProgress) error
}

// BlockProgress hears how far a read of logs has got: blocks read of total,
// and the logs read so far.
type BlockProgress func(read, total uint64, logs int)
