package nearrpc

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// The key of the recordings (domain/people/testdata's NEP-413 vector key).
const recordedKey = "ed25519:9C6hybhQ6Aycep9jaUnP6uL9ZYvDjUp1aSkFWPUFJtpj"

func TestViewAccessKey(t *testing.T) {
	c, _ := newClient(t)
	ctx := t.Context()
	k, err := c.ViewAccessKey(ctx, "near:mainnet", "alice.testnet", recordedKey)
	require.NoError(t, err)
	assert.Equal(t, ports.AccessKey{FullAccess: true}, k)

	k, err = c.ViewAccessKey(ctx, "near:mainnet", "bob.testnet", recordedKey)
	require.NoError(t, err)
	assert.False(t, k.FullAccess)
	require.NotNil(t, k.FunctionCall)
	assert.Equal(t, "app.testnet", k.FunctionCall.ReceiverID)
	assert.Equal(t, []string{"post"}, k.FunctionCall.MethodNames)

	// An unknown key, in the old shape (a result carrying an error) and the new.
	for _, account := range []string{"carol.testnet", "dave.testnet"} {
		_, err = c.ViewAccessKey(ctx, "near:mainnet", account, recordedKey)
		assert.True(t, errs.Is(err, errs.NotFound), "%s: %v", account, err)
		assert.Equal(t, "UNKNOWN_ACCESS_KEY", chainCause(t, err), account)
	}
	_, err = c.ViewAccessKey(ctx, "near:mainnet", "79b5562e8fe654f94078b112e8a98ba7901f853ae695bed7e0e3910bad049664", recordedKey)
	assert.True(t, errs.Is(err, errs.NotFound))
	assert.Equal(t, "UNKNOWN_ACCOUNT", chainCause(t, err))
}

func TestViewAccount(t *testing.T) {
	c, _ := newClient(t)
	a, err := c.ViewAccount(t.Context(), "near:mainnet", "alice.testnet")
	require.NoError(t, err)
	assert.Equal(t, "5123456789012345678901234", a.AmountYocto)
	_, err = c.ViewAccount(t.Context(), "near:mainnet", "79b5562e8fe654f94078b112e8a98ba7901f853ae695bed7e0e3910bad049664")
	assert.True(t, errs.Is(err, errs.NotFound))
}

func TestTransaction(t *testing.T) {
	c, fake := newClient(t)
	ctx := t.Context()
	tx, err := c.Transaction(ctx, "near:mainnet", "DDgQS9a6irPgbjEdCTieYMqFDxFxZhQXJiFTSxXbkzPe", "alice.testnet")
	require.NoError(t, err)
	assert.Equal(t, ports.NearTransaction{Hash: "DDgQS9a6irPgbjEdCTieYMqFDxFxZhQXJiFTSxXbkzPe", SignerID: "alice.testnet", ReceiverID: "petals.testnet",
		BlockAt: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC), // the recorded block's header timestamp
		Final:   true, Succeeded: true, Actions: []ports.NearAction{{Kind: "Transfer", Deposit: "2000000000000000000000000"}}}, tx,
		"the gas refund is a receipt, never an action of the transaction")

	tx, err = c.Transaction(ctx, "near:mainnet", "CfHQSGJWwvVhU3xeYRn6fhHafjjQbDro4AsvfZ5DaqpR", "alice.testnet")
	require.NoError(t, err)
	assert.Equal(t, []ports.NearAction{{Kind: "CreateAccount"}, {Kind: "Transfer", Deposit: "500000000000000000000000"}}, tx.Actions, "a bare-string action")

	tx, err = c.Transaction(ctx, "near:mainnet", "E9wkGASnAztFKCBuEgCGh31s8u85EwJXKRBKsmPGPF6", "alice.testnet")
	require.NoError(t, err)
	assert.Equal(t, []ports.NearAction{{Kind: "FunctionCall", Deposit: "0", Method: "ping", Args: []byte("{}")}}, tx.Actions, "a call's method and its arguments' bytes")

	tx, err = c.Transaction(ctx, "near:mainnet", "EZMbUfKHsYWvS8pJW78pZJTnx4qaWQ7fe6d9RCnPZsnQ", "alice.testnet")
	require.NoError(t, err)
	assert.False(t, tx.Succeeded)

	_, err = c.Transaction(ctx, "near:mainnet", "CsPxP6wysLdGmh4UEy4nvmQnVbjagbJSpiqiaf9GSREy", "alice.testnet")
	assert.True(t, errs.Is(err, errs.NotFound), "%v", err)

	fake.Inject(nearrpctest.Fault{Method: "tx", Status: http.StatusBadGateway})
	_, err = c.Transaction(ctx, "near:mainnet", "DDgQS9a6irPgbjEdCTieYMqFDxFxZhQXJiFTSxXbkzPe", "alice.testnet")
	assert.True(t, errs.Is(err, errs.SourceFailed), "%v", err)

	fake.Inject(nearrpctest.Fault{Method: "block", Status: http.StatusBadGateway})
	_, err = c.Transaction(ctx, "near:mainnet", "DDgQS9a6irPgbjEdCTieYMqFDxFxZhQXJiFTSxXbkzPe", "alice.testnet")
	assert.True(t, errs.Is(err, errs.SourceFailed), "its block can't be read, so its time isn't known: %v", err)
}
