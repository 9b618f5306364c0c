package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

// The throwaway wallet key's warning, logged while serving POST
// /api/v1/auth/verify, carries that request's request_id.
func TestTheThrowawayKeysWarningCarriesItsRequest(t *testing.T) {
	t.Parallel()
	rpc := nearrpctest.New(t)
	p := startProcess(t, pgtest.New(t), map[string]string{
		"PETAL_API": "https://petal.example", "PETAL_NEAR_RPC_MAINNET": rpc.URL, "PETAL_NEAR_RPC_TESTNET": rpc.URL,
		"PETAL_ONECLICK_URL": "http://127.0.0.1:1", "PETAL_MAP_SYNC_MIN": "0", "PETAL_MAP_MARKS_MIN": "0", "PETAL_WALLET_KEY": "",
	})
	priv, account := goKey(t, rpc, "ann.testnet", "full")
	proof := signChallenge(t, p.testPetal, priv, account)
	res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", proof), "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	id := res.Header.Get("X-Request-Id")
	require.NotEmpty(t, id)
	var warning map[string]any
	for line := range strings.Lines(p.logs.String()) {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) == nil && strings.HasPrefix(l["msg"].(string), "PETAL_WALLET_KEY is not set") {
			warning = l
		}
	}
	require.NotNil(t, warning, "the warning is logged:\n%s", p.logs.String())
	assert.Equal(t, id, warning["request_id"], "the warning names the request that made the key")
}

// A process holds its pool and two listeners, each a session of its own, as
// docs/operations.md sizes max_connections for (pool + 2).
func TestAProcessHoldsItsPoolAndTwoListeners(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	startProcess(t, db, map[string]string{"PETAL_DB_POOL_SIZE": "2", "PETAL_MAP_SYNC_MIN": "0", "PETAL_MAP_MARKS_MIN": "0",
		"PETAL_NEAR_RPC_MAINNET": "http://127.0.0.1:1", "PETAL_NEAR_RPC_TESTNET": "http://127.0.0.1:1", "PETAL_ONECLICK_URL": "http://127.0.0.1:1"})
	var listeners int
	require.NoError(t, db.Pool.QueryRow(t.Context(),
		`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'listen %'`).Scan(&listeners))
	assert.Equal(t, 2, listeners, "the event bus's and the map's")
}
