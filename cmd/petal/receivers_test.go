package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/app/config"
)

// TestAStartThatTakesRealMoneyReadsItsReceivers: a public site (or an
// https:// one with a model key) starts only when view_account reads its receiver; a receiver
// the chain doesn't know, or a chain that doesn't answer, stops the start
// naming the variable. A site that takes no real money reads nothing.
func TestAStartThatTakesRealMoneyReadsItsReceivers(t *testing.T) {
	t.Parallel()
	rpc := nearrpctest.New(t)
	account := func(id string, known bool) {
		params, _ := json.Marshal(map[string]string{"request_type": "view_account", "finality": "final", "account_id": id})
		answer := `{"jsonrpc":"2.0","id":"x","result":{"amount":"1","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":1,"storage_paid_at":0,"block_height":1,"block_hash":"11111111111111111111111111111111"}}`
		if !known {
			answer = `{"jsonrpc":"2.0","id":"x","error":{"name":"HANDLER_ERROR","cause":{"name":"UNKNOWN_ACCOUNT","info":{}},"code":-32000,"message":"Server error","data":"no account"}}`
		}
		rpc.Add(nearrpctest.Recording{Method: "query", Params: params, Response: json.RawMessage(answer)})
	}
	account("petals.near", true)
	account("petlas.near", false)
	near := nearrpc.New(nearrpc.Options{URLs: map[string]string{"near:mainnet": rpc.URL, "near:testnet": rpc.URL}, Attempts: 1})
	configFor := func(env map[string]string) config.Config {
		cfg, err := config.LoadConfig(func(k string) string { return env[k] })
		require.NoError(t, err)
		return cfg
	}

	require.NoError(t, config.CheckReceivers(t.Context(), configFor(map[string]string{"PETAL_PUBLIC": "1"}), near))
	assert.Equal(t, 1, rpc.CountCalls("query"), "the mainnet receiver, read once")

	err := config.CheckReceivers(t.Context(), configFor(map[string]string{"PETAL_PUBLIC": "1", "PETAL_RECEIVER_MAINNET": "petlas.near"}), near)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PETAL_RECEIVER_MAINNET: petlas.near can't be read on mainnet")

	err = config.CheckReceivers(t.Context(), configFor(map[string]string{"NEAR_AI_API_KEY": "k", "PETAL_API": "https://petals.example",
		"PETAL_RECEIVER_MAINNET": "petlas.near"}), near)
	require.Error(t, err, "a site with a model key takes real money too")

	before := rpc.CountCalls("query")
	require.NoError(t, config.CheckReceivers(t.Context(), configFor(map[string]string{"PETAL_RECEIVER_MAINNET": "petlas.near"}), near),
		"a site with the recorded model and not public reads nothing")
	require.NoError(t, config.CheckReceivers(t.Context(), configFor(map[string]string{"NEAR_AI_API_KEY": "k", "PETAL_RECEIVER_MAINNET": "petlas.near"}), near),
		"a server with a key but no https:// address (a developer's, a test's) reads nothing")
	assert.Equal(t, before, rpc.CountCalls("query"))

	rpc.Inject(nearrpctest.Fault{Method: "query", Status: 503})
	err = config.CheckReceivers(t.Context(), configFor(map[string]string{"PETAL_PUBLIC": "1"}), near)
	require.Error(t, err, "a chain that doesn't answer can't vouch for the receiver")
	assert.Contains(t, err.Error(), "PETAL_RECEIVER_MAINNET")

	_, err = config.LoadConfig(func(k string) string {
		return map[string]string{"PETAL_RECEIVER_TESTNET": "Not An Account"}[k]
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PETAL_RECEIVER_TESTNET")
}
