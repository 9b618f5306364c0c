package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/brave/bravetest"
	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/app/toolkit"
)

// refused checks an error answer's status and code, and returns its hint.
func refused(t *testing.T, res *http.Response, body string, status int, code string) string {
	t.Helper()
	require.Equal(t, status, res.StatusCode, body)
	var e struct {
		Error struct{ Code, Message, Hint string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	assert.Equal(t, code, e.Error.Code, body)
	return e.Error.Hint
}

func mcpSession(t *testing.T, p *testPetal) *sdk.ClientSession {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: p.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// The agent's eyes through HTTP and MCP on the wired service: the chain
// through the fake node, pages served by the test on loopback (with the
// test setting), search through the fake provider, and the brain.
func TestEyesThroughTheDoors(t *testing.T) {
	t.Parallel()
	near := nearrpctest.New(t)
	search := bravetest.New(t)
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<title>Charter</title><h1>The council</h1>%s", strings.Repeat("<p>Seven seats, one vote each.</p>", 1500))
	}))
	defer pages.Close()
	p := startPetal(t, map[string]string{
		"PETAL_NEAR_RPC_MAINNET":   near.URL,
		"PETAL_READ_PAGE_LOOPBACK": "1",
		"PETAL_SEARCH_URL":         search.URL,
		"PETAL_SEARCH_API_KEY":     bravetest.Key,
	})
	b := p.browser(t)

	got := b.ok(t, http.MethodPost, "/api/v1/read-chain", `{"network":"near:mainnet","contract":"marketing.sputnik-dao.near","method":"get_config"}`)
	assert.Equal(t, "json", got["encoding"])
	assert.Equal(t, "marketing", got["result"].(map[string]any)["name"])
	assert.EqualValues(t, nearrpctest.RecordedHeight, got["block"].(map[string]any)["height"])
	got = b.ok(t, http.MethodPost, "/api/v1/read-chain", `{"network":"near:mainnet","contract":"blob.near","method":"get_state"}`)
	assert.Equal(t, "base64", got["encoding"])
	res, body := b.do(t, http.MethodPost, "/api/v1/read-chain", `{"network":"near:mainnet","contract":"broken.sputnik-dao.near","method":"get_last_proposal_id"}`)
	refused(t, res, body, http.StatusUnprocessableEntity, "cannot_read")
	assert.Contains(t, body, "Proposals are corrupted")
	res, body = b.do(t, http.MethodPost, "/api/v1/read-chain", `{"network":"near:mainnet","contract":"a.near","method":"x","colour":"red"}`)
	refused(t, res, body, http.StatusBadRequest, "bad_input")

	page := b.ok(t, http.MethodGet, "/api/v1/read-page?url="+url.QueryEscape(pages.URL+"/charter"), "")
	assert.Equal(t, "Charter", page["title"])
	assert.Contains(t, page["text"], "# The council")
	next, ok := page["next"].(float64)
	require.True(t, ok, "a long page has a next: %v", page["next"])
	page = b.ok(t, http.MethodGet, fmt.Sprintf("/api/v1/read-page?url=%s&start=%d", url.QueryEscape(pages.URL+"/charter"), int(next)), "")
	assert.EqualValues(t, next, page["start"])
	res, body = b.do(t, http.MethodGet, "/api/v1/read-page?url="+url.QueryEscape("http://169.254.169.254/latest/meta-data/"), "")
	refused(t, res, body, http.StatusBadRequest, "bad_input")

	found := b.ok(t, http.MethodGet, "/api/v1/web-search?query="+url.QueryEscape("near dao"), "")
	assert.Len(t, found["results"], 2)
	scraped := scrapeOf(t, p)
	assert.Equal(t, 1.0, metricValue(t, scraped, "petal_web_fetches_total", `kind="page"`, `outcome="ok"`), "the second page came from what was read")
	assert.Equal(t, 1.0, metricValue(t, scraped, "petal_web_fetches_total", `kind="search"`, `outcome="ok"`))
	assert.Positive(t, metricValue(t, scraped, "petal_web_fetched_bytes_total", `kind="page"`))
	assert.Equal(t, 1.0, metricValue(t, scraped, "petal_web_fetch_refusals_total", `reason="link_local"`))

	idx := b.ok(t, http.MethodGet, "/api/v1/brain", "")
	assert.Equal(t, toolkit.BuildID, idx["commit"])
	assert.Equal(t, "doctrine", idx["files"].([]any)[0].(map[string]any)["kind"])
	route := b.ok(t, http.MethodGet, "/api/v1/brain/route?q="+url.QueryEscape("what does the gini coefficient mean"), "")
	assert.Equal(t, "figures", route["files"].([]any)[0].(map[string]any)["id"])
	route = b.ok(t, http.MethodGet, "/api/v1/brain/route?answers=get_accounts,get_owner_id", "")
	assert.Equal(t, "recipe-staking-pool", route["files"].([]any)[0].(map[string]any)["id"])
	file := b.ok(t, http.MethodGet, "/api/v1/brain/files/figures", "")
	assert.Contains(t, file["markdown"], "Nakamoto")
	res, body = b.do(t, http.MethodGet, "/api/v1/brain/files/nope", "")
	refused(t, res, body, http.StatusNotFound, "not_found")

	// MCP answers what HTTP answers.
	cs := mcpSession(t, p)
	r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "read_chain", Arguments: map[string]any{
		"network": "near:mainnet", "contract": "usdt.tether-token.near", "method": "ft_balance_of", "args": map[string]any{"account_id": "alice.near"}}})
	require.NoError(t, err)
	require.False(t, r.IsError, "%v", r.Content)
	assert.Contains(t, r.Content[0].(*sdk.TextContent).Text, `"result":"1250000000"`)
	r, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "brain_route", Arguments: map[string]any{"q": "I was rate limited"}})
	require.NoError(t, err)
	assert.Contains(t, r.Content[0].(*sdk.TextContent).Text, `"id":"refusals"`)
}

// Without the test setting the site's own machine is never read, and
// without a key search answers 503 naming the variable.
func TestEyesRefuseByDefault(t *testing.T) {
	t.Parallel()
	var hits int
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer local.Close()
	p := startPetal(t, nil)
	for _, u := range []string{local.URL, strings.Replace(local.URL, "127.0.0.1", "[::1]", 1), "http://10.0.0.1/",
		"http://169.254.169.254/", "file:///etc/passwd", "http://user:pw@example.com/"} {
		res, body := p.do(t, http.MethodGet, "/api/v1/read-page?url="+url.QueryEscape(u), "")
		refused(t, res, body, http.StatusBadRequest, "bad_input")
		assert.NotContains(t, body, "pw@", u)
	}
	assert.Zero(t, hits, "petal never asked its own machine")
	scraped := scrapeOf(t, p)
	assert.Equal(t, 2.0, metricValue(t, scraped, "petal_web_fetch_refusals_total", `reason="loopback"`), scraped)
	for _, reason := range []string{"private", "link_local", "scheme", "credentials"} {
		assert.Equal(t, 1.0, metricValue(t, scraped, "petal_web_fetch_refusals_total", `reason="`+reason+`"`), reason)
	}
	assert.Equal(t, 6.0, metricValue(t, scraped, "petal_web_fetches_total", `kind="page"`, `outcome="refused"`), scraped)

	res, body := p.do(t, http.MethodGet, "/api/v1/web-search?query=near", "")
	hint := refused(t, res, body, http.StatusServiceUnavailable, "source_failed")
	assert.Contains(t, hint, "PETAL_SEARCH_API_KEY")
}

// On a public site the reading tools are refused through every door and not
// listed on MCP; the brain is kept.
func TestEyesOnAPublicSite(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_PUBLIC": "1", "PETAL_SEARCH_API_KEY": "kept-out"})
	for _, r := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/v1/read-chain", `{"network":"near:mainnet","contract":"a.near","method":"get_config"}`},
		{http.MethodGet, "/api/v1/read-page?url=https%3A%2F%2Fexample.com%2F", ""},
		{http.MethodGet, "/api/v1/web-search?query=near", ""},
	} {
		res, body := p.do(t, r.method, r.path, r.body)
		assert.Contains(t, refused(t, res, body, http.StatusForbidden, "not_on_this_site"), "/connect")
	}
	res, _ := p.do(t, http.MethodGet, "/api/v1/brain/route?q=figures", "")
	assert.Equal(t, http.StatusOK, res.StatusCode)

	cs := mcpSession(t, p)
	listed, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, tool := range listed.Tools {
		names[tool.Name] = true
	}
	for _, name := range []string{"read_chain", "read_page", "search"} {
		assert.False(t, names[name], "/mcp does not list %s", name)
		r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
		require.NoError(t, err)
		assert.True(t, r.IsError)
		assert.Contains(t, r.Content[0].(*sdk.TextContent).Text, "not_on_this_site")
	}
	for _, name := range []string{"brain_index", "brain_route", "brain_file"} {
		assert.True(t, names[name], "/mcp lists %s", name)
	}
}

// Petals' agent is offered the reading tools (search only with a key), and
// announces each with its stage before the call.
func TestTheAgentReadsTheChainWithItsStage(t *testing.T) {
	t.Parallel()
	near := nearrpctest.New(t)
	model := nearaitest.New(t,
		nearaitest.Completion("e1", "deepseek-ai/DeepSeek-V3.1", "", nearaitest.Call{Name: "read_chain",
			Args: `{"network":"near:mainnet","contract":"marketing.sputnik-dao.near","method":"get_config"}`}),
		nearaitest.Completion("e2", "deepseek-ai/DeepSeek-V3.1", "The DAO calls itself the marketing guild."),
	)
	env := modelEnv(model)
	env["PETAL_NEAR_RPC_MAINNET"] = near.URL
	p := startPetal(t, env)
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", `{"messages":[{"role":"user","content":"what does the marketing DAO say it is?"}]}`, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	cookie := sessionCookie(t, res)
	var started map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &started))

	var kinds, stages []string
	for _, e := range p.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+started["run_id"], "", "Cookie", cookie).rest(t) {
		switch e.Name {
		case "live":
			continue
		case "stage":
			stages = append(stages, e.json(t)["stage"].(string))
		case "tool_result":
			assert.Equal(t, true, e.json(t)["ok"])
		}
		kinds = append(kinds, e.Name)
	}
	assert.Equal(t, []string{"run", "stage", "stage", "tool_call", "tool_result", "stage", "message", "done"}, kinds)
	assert.Equal(t, []string{"thinking", "fetching", "thinking"}, stages)

	// The first round offers the flower's path and more_tools; once the
	// agent reached for read_chain, its stage's tools (the page, not the
	// web's search without a key) are offered on the rounds after.
	assert.True(t, offeredOn(model.Completions()[0])["more_tools"])
	offered := offeredOn(model.Completions()[1])
	for _, name := range []string{"read_chain", "read_page", "look_up"} {
		assert.True(t, offered[name], "the agent is offered %s", name)
	}
	assert.False(t, offered["search"], "no search key: the agent is not offered search")
	assert.Contains(t, fmt.Sprint(model.Completions()[1].Body["messages"]), "Marketing guild", "the chain's answer reached the model")
}

// offeredOn is the tools a completion request offered, by name.
func offeredOn(r nearaitest.Request) map[string]bool {
	offered := map[string]bool{}
	tools, _ := r.Body["tools"].([]any)
	for _, tool := range tools {
		offered[tool.(map[string]any)["function"].(map[string]any)["name"].(string)] = true
	}
	return offered
}
