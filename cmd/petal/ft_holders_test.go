package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/fastnear/fastneartest"
)

// near-ft-holders: the names from FastNEAR's index (a fake in its wire
// shape), every balance from the chain (the fake node's recordings) at the
// pinned block; the index's own balances count for nothing.
func TestNearFTHoldersAreTheIndexsNamesWithTheChainsBalances(t *testing.T) {
	t.Parallel()
	index := fastneartest.New(t)
	stale, wrong := "1", "999999999999"
	index.Set("usdt.tether-token.near",
		fastneartest.Holder{AccountID: "carol.near", Balance: &wrong},
		fastneartest.Holder{AccountID: "alice.near"},
		fastneartest.Holder{AccountID: "bob.near", Balance: &stale}, // holds nothing by now
	)
	p, fake := chainPetal(t, map[string]string{"PETAL_FASTNEAR_MAINNET": index.URL})
	status, out := p.getSnapshot(t, `{"network":"near-ft-holders","params":{"token":"usdt.tether-token.near"},"fresh":true}`)
	require.Equal(t, http.StatusOK, status, out)
	snap := p.body(t, out["sha256"].(string))
	assert.Equal(t, map[string]any{"chain": "near:mainnet", "token": "usdt.tether-token.near"}, snap["params"])
	accts := accountsByID(t, snap)
	assert.Len(t, accts, 2, "an account holding nothing at the block is no holder")
	assert.Equal(t, "1250", accts["near:mainnet:alice.near"]["weight"])
	assert.Equal(t, "99.000001", accts["near:mainnet:carol.near"]["weight"], "the chain's balance, not the index's")
	assert.Equal(t, "USDt top holders", snap["title"])
	assert.Contains(t, snap["about"], "the top holders only")
	assert.Equal(t, true, snap["detail"].(map[string]any)["top_only"])
	assert.Equal(t, 3, fake.CountCalls("ft_balance_of"), "every named account read on chain")

	status, out = p.getSnapshot(t, `{"network":"near-ft-holders","params":{"token":"nothing.near"},"fresh":true}`)
	assert.Equal(t, http.StatusNotFound, status, out)
}
