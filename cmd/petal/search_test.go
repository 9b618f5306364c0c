package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
)

// search_petals is kept on a public site, through HTTP and MCP alike, and a
// visitor finds the map there, never a person's notes.
func TestSearchPetalsOnAPublicSite(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_PUBLIC": "1"})
	_, err := p.DB.Pool.Exec(t.Context(), `INSERT INTO published_flowers (id, network, maker, map, snapshot_sha256, record, name, made_at, status, came)
VALUES (repeat('a', 64), 'near:mainnet', 'maker.near', 'near:mainnet:marketing.sputnik-dao.near', repeat('b', 64),
        '{"about":"Sputnik DAO members on NEAR"}', 'Who runs marketing', now(), 'ok', 'record')`)
	require.NoError(t, err)
	_, err = p.DB.Pool.Exec(t.Context(), `INSERT INTO explorations (id, owner, question, title, created_at, updated_at)
VALUES ('exp_x', 'prs_someone', 'marketing secrets', '', now(), now())`)
	require.NoError(t, err)

	res, body := p.do(t, http.MethodGet, "/api/v1/search?q="+url.QueryEscape("who runs mark")+"&limit=5", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var ans struct {
		Results []struct{ Kind, ID, Snippet string } `json:"results"`
		Next    *string                              `json:"next_cursor"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &ans))
	require.Len(t, ans.Results, 2, body)
	assert.Nil(t, ans.Next)
	for _, r := range ans.Results {
		assert.Contains(t, []string{"map", "flower"}, r.Kind)
		assert.Contains(t, r.Snippet, "**")
	}

	res, body = p.do(t, http.MethodGet, "/api/v1/search?q=marketing&kinds=map,people", "")
	refused(t, res, body, http.StatusBadRequest, "bad_input")
	assert.Contains(t, body, "kinds")

	cs := mcpSession(t, p)
	listed, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	found := false
	for _, tool := range listed.Tools {
		found = found || tool.Name == "search_petals"
	}
	assert.True(t, found, "/mcp lists search_petals on a public site")
	r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "search_petals", Arguments: map[string]any{"q": "secrets"}})
	require.NoError(t, err)
	require.False(t, r.IsError)
	assert.Contains(t, r.Content[0].(*sdk.TextContent).Text, `"results":[]`, "a visitor never finds a person's exploration")
}

// Petals' agent is offered search_petals and look_up, and announces each
// with its stage (reading_map, fetching) before the call.
func TestTheAgentSearchesAndLooksUpWithTheirStages(t *testing.T) {
	t.Parallel()
	near := nearrpctest.New(t)
	viewAccount(near, "marketing.sputnik-dao.near", "5000000000000000000000000")
	model := nearaitest.New(t,
		nearaitest.Completion("e1", "deepseek-ai/DeepSeek-V3.1", "", nearaitest.Call{Name: "search_petals", Args: `{"q":"marketing"}`}),
		nearaitest.Completion("e2", "deepseek-ai/DeepSeek-V3.1", "", nearaitest.Call{Name: "look_up", Args: `{"query":"marketing.sputnik-dao.near"}`}),
		nearaitest.Completion("e3", "deepseek-ai/DeepSeek-V3.1", "It is a Sputnik DAO."),
	)
	env := modelEnv(model)
	env["PETAL_NEAR_RPC_MAINNET"] = near.URL
	p := startPetal(t, env)
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", `{"messages":[{"role":"user","content":"what is the marketing DAO?"}]}`, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	cookie := sessionCookie(t, res)
	var started map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &started))

	var stages []string
	for _, e := range p.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+started["run_id"], "", "Cookie", cookie).rest(t) {
		switch e.Name {
		case "stage":
			stages = append(stages, e.json(t)["stage"].(string))
		case "tool_result":
			assert.Equal(t, true, e.json(t)["ok"])
		}
	}
	assert.Equal(t, []string{"thinking", "reading_map", "thinking", "fetching", "thinking"}, stages)
	// Reached for, each tool (and its stage's) is offered on the rounds after.
	offered := offeredOn(model.Completions()[2])
	assert.True(t, offered["search_petals"] && offered["brain_route"], "the map's stage, after search_petals: %v", offered)
	assert.True(t, offeredOn(model.Completions()[0])["more_tools"], "the way to every tool, from the first round")
	assert.Contains(t, fmt.Sprint(model.Completions()[2].Body["messages"]), "sputnik_dao", "look_up's answer reached the model")
}
