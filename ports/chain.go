package ports

import (
	"context"
	"fmt"

	"github.com/petal-near/petal/domain/snapshots"
)

// Chain reads NEAR networks, named by CAIP-2 id (near:mainnet, near:testnet).
// Errors are petal's: not_found (no such account or contract), cannot_read
// (the contract failed or answered something unreadable) or source_failed
// (the chain could not be reached in time), carrying a *ChainError as cause.
type Chain interface {
	// FinalBlock is the newest final block. A reading pins all its calls to
	// it, so the snapshot is one consistent moment.
	FinalBlock(ctx context.Context, chain string) (snapshots.Block, error)
	// CallFunction calls a view method with JSON args (nil sends {}) at block
	// height at (0: the final block) and returns the method's raw result,
	// usually UTF-8 JSON.
	CallFunction(ctx context.Context, chain string, at uint64, contract, method string, args any) ([]byte, error)
}

// ChainError is what the chain said, for code that must tell causes apart
// (an unknown account from an unknown key, say) and for the logs. Cause is
// NEAR's error cause name (UNKNOWN_ACCOUNT, CONTRACT_EXECUTION_ERROR …), or
// a name of petal's for transport failures (TIMEOUT, HTTP_5XX, TRANSPORT).
type ChainError struct {
	Cause   string
	Message string
}

func (e *ChainError) Error() string { return fmt.Sprintf("near rpc: %s: %s", e.Cause, e.Message) }
