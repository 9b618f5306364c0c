package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
)

// viewAccount records view_account for account on the fake node: its
// balance, or UNKNOWN_ACCOUNT when amount is empty.
func viewAccount(near *nearrpctest.Server, account, amount string) {
	params, _ := json.Marshal(map[string]any{"request_type": "view_account", "finality": "final", "account_id": account})
	var resp string
	if amount == "" {
		resp = `{"jsonrpc":"2.0","id":"dontcare","error":{"name":"HANDLER_ERROR","cause":{"name":"UNKNOWN_ACCOUNT","info":{"requested_account_id":"` + account +
			`","block_hash":"4kbcD3NeZ7Gf8VQ5cFmLQAk1VtUTXK6wzCZnhZqK1nUj","block_height":131000000}},"code":-32000,"message":"Server error","data":"account ` + account + ` does not exist while viewing"}}`
	} else {
		resp = `{"jsonrpc":"2.0","id":"dontcare","result":{"amount":"` + amount + `","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":500,"storage_paid_at":0,"block_height":131000000,"block_hash":"4kbcD3NeZ7Gf8VQ5cFmLQAk1VtUTXK6wzCZnhZqK1nUj"}}`
	}
	near.Add(nearrpctest.Recording{Method: "query", Params: params, Response: json.RawMessage(resp)})
}

type lookUpBody struct {
	Account *string `json:"account"`
	Map     struct {
		Maps []struct{ ID string } `json:"maps"`
	} `json:"map"`
	ChainSays *struct {
		Exists bool            `json:"exists"`
		Amount *string         `json:"amount_yocto"`
		Kind   *string         `json:"kind"`
		Detail json.RawMessage `json:"detail"`
	} `json:"chain_says"`
	Next struct {
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	} `json:"next"`
}

// look_up against the fake NEAR node: a DAO, a pool, a token, an unknown
// account and a name; through HTTP and MCP alike.
func TestLookUpThroughTheDoors(t *testing.T) {
	t.Parallel()
	near := nearrpctest.New(t)
	viewAccount(near, "marketing.sputnik-dao.near", "5000000000000000000000000")
	viewAccount(near, "astro-stakers.poolv1.near", "7000000000000000000000000")
	viewAccount(near, "usdt.tether-token.near", "9000000000000000000000000")
	viewAccount(near, "nobody-here.near", "")
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": near.URL})
	_, err := p.DB.Pool.Exec(t.Context(), `INSERT INTO published_flowers (id, network, maker, map, snapshot_sha256, record, name, made_at, status, came)
VALUES (repeat('a', 64), 'near:mainnet', 'maker.near', 'near:mainnet:marketing.sputnik-dao.near', repeat('b', 64),
        '{"about":"Sputnik DAO members on NEAR"}', 'Who runs marketing', now(), 'ok', 'record')`)
	require.NoError(t, err)

	look := func(q string) lookUpBody {
		t.Helper()
		res, body := p.do(t, http.MethodGet, "/api/v1/look-up?query="+url.QueryEscape(q), "")
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		var b lookUpBody
		require.NoError(t, json.Unmarshal([]byte(body), &b), body)
		return b
	}

	dao := look("marketing.sputnik-dao.near")
	require.NotNil(t, dao.ChainSays)
	assert.True(t, dao.ChainSays.Exists)
	assert.Equal(t, "sputnik_dao", *dao.ChainSays.Kind)
	assert.Contains(t, string(dao.ChainSays.Detail), `"name":"marketing"`)
	require.Len(t, dao.Map.Maps, 1)
	assert.Equal(t, "near:mainnet:marketing.sputnik-dao.near", dao.Map.Maps[0].ID)
	assert.Equal(t, "get_snapshot", dao.Next.Tool)
	assert.Contains(t, string(dao.Next.Args), "near-dao-members")

	pool := look("astro-stakers.poolv1.near")
	assert.Equal(t, "staking_pool", *pool.ChainSays.Kind)
	assert.JSONEq(t, "5", string(pool.ChainSays.Detail), "its number of accounts")
	assert.Contains(t, string(pool.Next.Args), "near-staking-pool")
	assert.Empty(t, pool.Map.Maps)

	token := look("near:mainnet:usdt.tether-token.near")
	assert.Equal(t, "fungible_token", *token.ChainSays.Kind)
	assert.Equal(t, "usdt.tether-token.near", *token.Account)

	nobody := look("nobody-here.near")
	assert.False(t, nobody.ChainSays.Exists)
	assert.Nil(t, nobody.ChainSays.Kind)
	assert.Equal(t, "find_target", nobody.Next.Tool)

	name := look("who runs marketing")
	assert.Nil(t, name.Account)
	assert.Nil(t, name.ChainSays)
	assert.Len(t, name.Map.Maps, 1)
	assert.Equal(t, "find_target", name.Next.Tool)

	res, body := p.do(t, http.MethodGet, "/api/v1/look-up?query=x&chain=near:devnet", "")
	refused(t, res, body, http.StatusBadRequest, "bad_input")

	cs := mcpSession(t, p)
	r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "look_up", Arguments: map[string]any{"query": "astro-stakers.poolv1.near"}})
	require.NoError(t, err)
	require.False(t, r.IsError, "%v", r.Content)
	assert.Contains(t, r.Content[0].(*sdk.TextContent).Text, `"kind":"staking_pool"`)
}

// A public site refuses look_up through HTTP and MCP (not listed there),
// reading nothing.
func TestLookUpOnAPublicSite(t *testing.T) {
	t.Parallel()
	near := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_PUBLIC": "1", "PETAL_NEAR_RPC_MAINNET": near.URL})
	res, body := p.do(t, http.MethodGet, "/api/v1/look-up?query=marketing.sputnik-dao.near", "")
	assert.Contains(t, refused(t, res, body, http.StatusForbidden, "not_on_this_site"), "/connect")

	cs := mcpSession(t, p)
	listed, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	for _, tool := range listed.Tools {
		assert.NotEqual(t, "look_up", tool.Name, "/mcp does not list look_up")
	}
	r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "look_up", Arguments: map[string]any{"query": "a.near"}})
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Contains(t, r.Content[0].(*sdk.TextContent).Text, "not_on_this_site")
	assert.Empty(t, near.Calls(), "nothing was read")
}
