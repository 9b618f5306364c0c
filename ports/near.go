package ports

import (
	"context"
	"time"

	"github.com/petal-near/petal/domain/credit"
)

// NearAccounts reads what sign-in and paying in NEAR need from NEAR's RPC.
// chain is near:mainnet or near:testnet. Errors as Chain's: errs.NotFound for
// an unknown key, account or transaction; errs.SourceFailed when the RPC
// could not answer (nothing is decided then, and the caller may try again).
type NearAccounts interface {
	// ViewAccessKey reads one access key of an account (view_access_key).
	ViewAccessKey(ctx context.Context, chain, accountID, publicKey string) (AccessKey, error)
	// ViewAccount reads an account (view_account).
	ViewAccount(ctx context.Context, chain, accountID string) (NearAccount, error)
	// Transaction reads a transaction's FINAL outcome (tx, wait_until FINAL).
	Transaction(ctx context.Context, chain, txHash, senderID string) (NearTransaction, error)
}

// AccessKey is an access key's permission.
type AccessKey struct {
	FullAccess   bool
	FunctionCall *FunctionCallPermission // set for a function-call key
}

// FunctionCallPermission is what a function-call key may do.
type FunctionCallPermission struct {
	ReceiverID  string
	MethodNames []string
}

// NearAccount is the part of an account petal reads.
type NearAccount struct {
	AmountYocto string
}

// NearTransaction is a transaction's final outcome, as petal reads it.
type NearTransaction struct {
	Hash       string
	SignerID   string
	ReceiverID string
	// BlockAt is when the block that included the transaction was made
	// (its header's timestamp): what a top-up is priced at.
	BlockAt time.Time
	// Final is true when final_execution_status is FINAL.
	Final bool
	// Succeeded is true when status is SuccessValue (or SuccessReceiptId).
	Succeeded bool
	// Actions are the transaction's own actions. Receipts (gas refunds from
	// "system" among them) are never actions of the transaction.
	Actions []NearAction
}

// NearAction is one action; Kind is Transfer, FunctionCall, CreateAccount …
// and Deposit the yoctoNEAR a Transfer (or FunctionCall) attaches. A
// FunctionCall also names its method and carries its arguments' bytes.
type NearAction struct {
	Kind    string
	Deposit string
	Method  string
	Args    []byte
}

// NearPrice is dollars per NEAR now.
type NearPrice interface {
	// NearUSD is micro-dollars per NEAR; ok false when it can't be read.
	NearUSD(ctx context.Context) (price credit.Micros, ok bool, err error)
}

// NearPriceHistory keeps the NEAR price as it was read over time, so a
// transfer is priced at its block time, not when it is claimed.
type NearPriceHistory interface {
	// RecordNearPrice stores one reading.
	RecordNearPrice(ctx context.Context, q credit.NearQuote) error
	// NearPricesAround reads the last reading at or before at, no older than
	// before, and the first after at, no later than after; nil when none.
	NearPricesAround(ctx context.Context, at time.Time, before, after time.Duration) (prev, next *credit.NearQuote, err error)
	// PruneNearPrices deletes the readings older than olderThan.
	PruneNearPrices(ctx context.Context, olderThan time.Time) (deleted int64, err error)
}
