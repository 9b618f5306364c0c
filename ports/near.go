package ports

import (
	"context"

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
	// Final is true when final_execution_status is FINAL.
	Final bool
	// Succeeded is true when status is SuccessValue (or SuccessReceiptId).
	Succeeded bool
	// Actions are the transaction's own actions. Receipts (gas refunds from
	// "system" among them) are never actions of the transaction.
	Actions []NearAction
}

// NearAction is one action; Kind is Transfer, FunctionCall, CreateAccount …
// and Deposit the yoctoNEAR a Transfer (or FunctionCall) attaches.
type NearAction struct {
	Kind    string
	Deposit string
}

// NearPrice is dollars per NEAR now.
type NearPrice interface {
	// NearUSD is micro-dollars per NEAR; ok false when it can't be read.
	NearUSD(ctx context.Context) (price credit.Micros, ok bool, err error)
}
