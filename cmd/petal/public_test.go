package main

import (
	"encoding/json"
	"net/http"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A public site does no work for a visitor that reaches outside it: the tools
// that run on the person's own machine are refused through every door, and
// so is Petal's own agent; what the contract keeps keeps working.
func TestPublicMode(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_PUBLIC": "1", "NEAR_AI_API_KEY": "sk-never-loaded"})
	assert.Empty(t, p.Cfg.ModelKey, "the model key is never loaded")

	h := p.browser(t).ok(t, http.MethodGet, "/api/v1/health", "")
	assert.Equal(t, "none", h["agent_access"])
	assert.Equal(t, "none", h["llm"])
	assert.Equal(t, "held", h["map"])
	assert.Equal(t, true, h["public"])

	refusedHere := func(status int, body string) {
		t.Helper()
		assert.Equal(t, http.StatusForbidden, status, body)
		var e struct{ Error struct{ Code, Hint string } }
		require.NoError(t, json.Unmarshal([]byte(body), &e), body)
		assert.Equal(t, "not_on_this_site", e.Error.Code)
		assert.Contains(t, e.Error.Hint, "/connect")
	}
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", `{"messages":[{"role":"user","content":"draw the council"}]}`, "Accept", "application/json")
	refusedHere(res.StatusCode, body)

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: p.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	listed, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, tool := range listed.Tools {
		names[tool.Name] = true
	}
	assert.Len(t, listed.Tools, len(p.Svc.Server.Registry().Offered()))

	// Every tool that runs on the person's machine, through HTTP and MCP.
	routeOf := map[string]string{}
	for _, r := range p.Svc.Server.Routes() {
		if r.Tool != "" {
			routeOf[r.Tool] = r.Method + " " + r.Path
		}
	}
	for _, tool := range p.Svc.Server.Registry().All() {
		if tool.AgentOnly {
			// Petals' agent's own (hand_job…): no door lists it, in any mode.
			assert.False(t, names[tool.Name], "/mcp does not list %s", tool.Name)
			continue
		}
		if !tool.OnTheirMachine {
			assert.True(t, names[tool.Name], "%s is kept on a public site", tool.Name)
			continue
		}
		assert.False(t, names[tool.Name], "/mcp does not list %s", tool.Name)
		r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool.Name, Arguments: map[string]any{}})
		require.NoError(t, err)
		require.True(t, r.IsError, tool.Name)
		var e struct{ Error struct{ Code, Hint string } }
		require.NoError(t, json.Unmarshal([]byte(r.Content[0].(*sdk.TextContent).Text), &e))
		assert.Equal(t, "not_on_this_site", e.Error.Code, tool.Name)
		if route, ok := routeOf[tool.Name]; ok {
			method, path := splitRoute(route)
			res, body := p.do(t, method, fillParams(path), "{}")
			refusedHere(res.StatusCode, body)
		}
	}

	// Kept: explorations and links, /s, posted readings, the OpenAPI document.
	owner := p.browser(t)
	id := owner.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"kept on a public site?"}`)["id"].(string)
	tok := tokenOf(t, owner.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/links", `{"scope":"continue"}`)["url"].(string))
	sha, snap := reading(t, 7)
	assert.Equal(t, true, p.browser(t).ok(t, http.MethodPut, "/api/v1/explorations/"+tok+"/snapshots/"+sha, string(snap))["stored"])
	res, _ = p.do(t, http.MethodGet, "/s/"+tok, "")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	res, _ = p.do(t, http.MethodGet, "/api/v1/openapi.json", "")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "get_exploration", Arguments: map[string]any{"exploration": tok}})
	require.NoError(t, err)
	assert.False(t, r.IsError)
}

func splitRoute(route string) (string, string) {
	for i := range route {
		if route[i] == ' ' {
			return route[:i], route[i+1:]
		}
	}
	return route, ""
}

// fillParams puts x in each path parameter.
func fillParams(path string) string {
	out := []byte{}
	for i := 0; i < len(path); i++ {
		if path[i] == ':' {
			out = append(out, 'x')
			for i+1 < len(path) && path[i+1] != '/' {
				i++
			}
			continue
		}
		out = append(out, path[i])
	}
	return string(out)
}
