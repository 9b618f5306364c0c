package nearrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// view_access_key, view_account and tx: what sign-in and paying in NEAR read.

var _ ports.NearAccounts = (*Client)(nil)

type accessKeyResult struct {
	Nonce      uint64          `json:"nonce"`
	Permission json.RawMessage `json:"permission"`
}

// ViewAccessKey implements ports.NearAccounts.
func (c *Client) ViewAccessKey(ctx context.Context, chain, accountID, publicKey string) (ports.AccessKey, error) {
	var raw json.RawMessage
	err := c.call(ctx, chain, "query", map[string]any{
		"request_type": "view_access_key",
		"finality":     "final",
		"account_id":   accountID,
		"public_key":   publicKey,
	}, &raw)
	if err != nil {
		return ports.AccessKey{}, err
	}
	// Older nodes answer an unknown key with a result carrying an error string.
	if err := resultError(raw); err != nil {
		if errs.Is(err, errs.CannotRead) {
			return ports.AccessKey{}, sourceFailed(err, "BAD_ANSWER", "the chain's RPC gave an answer petal can't read")
		}
		return ports.AccessKey{}, err
	}
	var r accessKeyResult
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Permission) == 0 {
		return ports.AccessKey{}, sourceFailed(fmt.Errorf("view_access_key result: %v", err), "BAD_ANSWER", "the chain's RPC gave an answer petal can't read")
	}
	var s string
	if json.Unmarshal(r.Permission, &s) == nil {
		return ports.AccessKey{FullAccess: s == "FullAccess"}, nil
	}
	var fc struct {
		FunctionCall *struct {
			ReceiverID  string   `json:"receiver_id"`
			MethodNames []string `json:"method_names"`
		} `json:"FunctionCall"`
	}
	if err := json.Unmarshal(r.Permission, &fc); err != nil || fc.FunctionCall == nil {
		return ports.AccessKey{}, sourceFailed(fmt.Errorf("permission %s", r.Permission), "BAD_ANSWER", "the chain's RPC gave an answer petal can't read")
	}
	return ports.AccessKey{FunctionCall: &ports.FunctionCallPermission{ReceiverID: fc.FunctionCall.ReceiverID, MethodNames: fc.FunctionCall.MethodNames}}, nil
}

// ViewAccount implements ports.NearAccounts.
func (c *Client) ViewAccount(ctx context.Context, chain, accountID string) (ports.NearAccount, error) {
	var raw json.RawMessage
	err := c.call(ctx, chain, "query", map[string]any{
		"request_type": "view_account",
		"finality":     "final",
		"account_id":   accountID,
	}, &raw)
	if err != nil {
		return ports.NearAccount{}, err
	}
	if err := resultError(raw); err != nil {
		return ports.NearAccount{}, err
	}
	var r struct {
		Amount string `json:"amount"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Amount == "" {
		return ports.NearAccount{}, sourceFailed(fmt.Errorf("view_account result: %v", err), "BAD_ANSWER", "the chain's RPC gave an answer petal can't read")
	}
	return ports.NearAccount{AmountYocto: r.Amount}, nil
}

type txResult struct {
	FinalExecutionStatus string                     `json:"final_execution_status"`
	Status               map[string]json.RawMessage `json:"status"`
	Transaction          struct {
		SignerID   string            `json:"signer_id"`
		ReceiverID string            `json:"receiver_id"`
		Hash       string            `json:"hash"`
		Actions    []json.RawMessage `json:"actions"`
	} `json:"transaction"`
	TransactionOutcome struct {
		BlockHash string `json:"block_hash"`
	} `json:"transaction_outcome"`
}

// Transaction implements ports.NearAccounts.
func (c *Client) Transaction(ctx context.Context, chain, txHash, senderID string) (ports.NearTransaction, error) {
	var r txResult
	err := c.call(ctx, chain, "tx", map[string]any{
		"tx_hash":           txHash,
		"sender_account_id": senderID,
		"wait_until":        "FINAL",
	}, &r)
	if err != nil {
		return ports.NearTransaction{}, err
	}
	if r.Transaction.Hash == "" || r.Status == nil {
		return ports.NearTransaction{}, sourceFailed(fmt.Errorf("tx result without transaction or status"), "BAD_ANSWER", "the chain's RPC gave an answer petal can't read")
	}
	out := ports.NearTransaction{
		Hash:       r.Transaction.Hash,
		SignerID:   r.Transaction.SignerID,
		ReceiverID: r.Transaction.ReceiverID,
		Final:      r.FinalExecutionStatus == "FINAL",
	}
	// The block that included the transaction says when it was made.
	if r.TransactionOutcome.BlockHash == "" {
		return ports.NearTransaction{}, sourceFailed(fmt.Errorf("tx result without its block"), "BAD_ANSWER", "the chain's RPC gave an answer petal can't read")
	}
	var b blockResult
	if err := c.call(ctx, chain, "block", map[string]any{"block_id": r.TransactionOutcome.BlockHash}, &b); err != nil {
		return ports.NearTransaction{}, err
	}
	var ns int64
	if _, err := fmt.Sscan(b.Header.TimestampNanosec, &ns); err != nil || ns <= 0 {
		return ports.NearTransaction{}, sourceFailed(fmt.Errorf("block header %+v", b.Header), "BAD_ANSWER", "the chain's RPC gave a block petal can't read")
	}
	out.BlockAt = time.Unix(0, ns).UTC()
	_, okValue := r.Status["SuccessValue"]
	_, okReceipt := r.Status["SuccessReceiptId"]
	out.Succeeded = okValue || okReceipt
	for _, a := range r.Transaction.Actions {
		// An action is an object such as {"Transfer":{"deposit":"…"}} or a bare
		// string such as "CreateAccount".
		var bare string
		if json.Unmarshal(a, &bare) == nil {
			out.Actions = append(out.Actions, ports.NearAction{Kind: bare})
			continue
		}
		var obj map[string]struct {
			Deposit    string `json:"deposit"`
			MethodName string `json:"method_name"`
			Args       []byte `json:"args"` // base64 in the answer
		}
		if err := json.Unmarshal(a, &obj); err != nil || len(obj) != 1 {
			out.Actions = append(out.Actions, ports.NearAction{Kind: "Unknown"})
			continue
		}
		for kind, v := range obj {
			out.Actions = append(out.Actions, ports.NearAction{Kind: kind, Deposit: v.Deposit, Method: v.MethodName, Args: v.Args})
		}
	}
	return out, nil
}
