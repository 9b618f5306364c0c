package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/snapshots"
)

// Two readings of one DAO a month apart: carol left, dave entered, alice
// halved her weight. Through HTTP and MCP alike, with the same answer.
func TestCompareFiguresThroughEveryDoor(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	before := flowerDAOSnapshot() // alice 6 (council), bob 2 (council, community), carol 2 (community); T=10
	after := flowerDAOSnapshot()
	after.Block = snapshots.Block{Height: 9, Hash: "h9", Time: "2026-12-01T12:00:00Z"}
	after.Accounts = []snapshots.Account{
		{ID: "near:mainnet:alice.near", Weight: "3", Groups: []string{"council"}},
		{ID: "near:mainnet:bob.near", Label: "bob", Weight: "2", Groups: []string{"council", "community"}},
		{ID: "near:mainnet:dave.near", Label: "dave", Weight: "3", Groups: []string{"community"}},
	}
	a, b := storeFlowerSnapshot(t, p, before), storeFlowerSnapshot(t, p, after)

	res, body := p.do(t, http.MethodPost, "/api/v1/figures/compare", `{"a":"`+a+`","b":"`+b+`","limit":2}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	// After: 3, 3, 2 (T=8): top1 3/8 = 0.375; Gini ascending 2,3,3: (−2·2 + 0 + 2·3)/(3·8) = 0.083333;
	// HHI (9+9+4)/64 = 0.34375; Nakamoto 2 (3 is not more than 4; 6 is). Before: 0.6, 0.266667, 0.44, 1.
	assert.JSONEq(t, `{"count":0,"total_weight":"-2","top1_share":-0.225,"top10_share":0,"top1pct_share":-0.225,"top1pct_count":0,
		"gini":-0.183334,"nakamoto":1,"hhi":-0.09625}`, mustJSON(t, got["change"]))
	assert.Equal(t, "2026-11-01T12:00:00Z", got["a"].(map[string]any)["as_of"])
	assert.Equal(t, 0.375, got["b"].(map[string]any)["top1_share"])
	// Over T_a·T_b = 80: dave 3·10 − 0 = +30, bob 2·10 − 2·8 = +4; alice 3·10 − 6·8 = −18, carol 0 − 2·8 = −16.
	assert.JSONEq(t, `{"total":2,"accounts":[
		{"id":"near:mainnet:dave.near","label":"dave","weight_before":"0","weight_after":"3","share_before":0,"share_after":0.375,"change":0.375},
		{"id":"near:mainnet:bob.near","label":"bob","weight_before":"2","weight_after":"2","share_before":0.2,"share_after":0.25,"change":0.05}]}`,
		mustJSON(t, got["movers_up"]))
	assert.JSONEq(t, `{"total":2,"accounts":[
		{"id":"near:mainnet:alice.near","label":"","weight_before":"6","weight_after":"3","share_before":0.6,"share_after":0.375,"change":-0.225},
		{"id":"near:mainnet:carol.near","label":"","weight_before":"2","weight_after":"0","share_before":0.2,"share_after":0,"change":-0.2}]}`,
		mustJSON(t, got["movers_down"]))
	assert.Equal(t, float64(1), got["entered"].(map[string]any)["total"])
	assert.Equal(t, float64(1), got["left"].(map[string]any)["total"])
	// council (6+2)/10 → (3+2)/8; community (2+2)/10 → (2+3)/8.
	assert.JSONEq(t, `[{"id":"council","label":"Council","in":"both","share_before":0.8,"share_after":0.625,"change":-0.175,"count_before":2,"count_after":2},
		{"id":"community","label":"Community","in":"both","share_before":0.4,"share_after":0.625,"change":0.225,"count_before":2,"count_after":2},
		{"id":"empty","label":"Nobody","in":"both","share_before":0,"share_after":0,"change":0,"count_before":0,"count_after":0}]`, mustJSON(t, got["groups"]))

	// The same through MCP.
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: p.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	out, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "compare_figures", Arguments: map[string]any{"a": a, "b": b, "limit": 2}})
	require.NoError(t, err)
	require.False(t, out.IsError, "%+v", out.Content)
	var viaMCP map[string]any
	require.NoError(t, json.Unmarshal([]byte(mustJSON(t, out.StructuredContent)), &viaMCP))
	delete(got, "tools_version")
	delete(viaMCP, "tools_version")
	assert.Equal(t, got, viaMCP)

	// Refusals name the field and change nothing.
	other := flowerDAOSnapshot()
	other.Network = "near-staking-pool"
	other.Params = json.RawMessage(`{"chain":"near:mainnet","pool":"p.poolv1.near"}`)
	o := storeFlowerSnapshot(t, p, other)
	for _, c := range []struct {
		body, code, field string
		status            int
	}{
		{`{"a":"` + a + `","b":"` + o + `"}`, "bad_input", "b", 400},
		{`{"a":"` + strings.Repeat("0", 64) + `","b":"` + b + `"}`, "not_found", "a", 404},
		{`{"a":"` + a + `","b":"` + strings.Repeat("0", 64) + `"}`, "not_found", "b", 404},
		{`{"a":"nope","b":"` + b + `"}`, "bad_input", "a", 400},
		{`{"a":"` + a + `"}`, "bad_input", "b", 400},
		{`{"a":"` + a + `","b":"` + b + `","limit":101}`, "bad_input", "limit", 400},
	} {
		res, body := p.do(t, http.MethodPost, "/api/v1/figures/compare", c.body)
		assert.Equal(t, c.status, res.StatusCode, "%s → %s", c.body, body)
		e := decodeFlower(t, body)["error"].(map[string]any)
		assert.Equal(t, c.code, e["code"], c.body)
		assert.Contains(t, e["message"], c.field, c.body)
	}
}
