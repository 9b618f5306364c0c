package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMCPTakesOneCallPerPost(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`
	res, body := p.do(t, http.MethodPost, "/mcp", batch, "Accept", "application/json, text/event-stream")
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	var e struct {
		Error struct{ Code, Message string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &e))
	assert.Equal(t, "bad_input", e.Error.Code)
	assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"), "/mcp is open to agents on any site")

	// Stateless: there is no stream to GET.
	res, _ = p.do(t, http.MethodGet, "/mcp", "", "Accept", "text/event-stream")
	assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
}

func TestMCPOverTheRealListener(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: p.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	assert.Equal(t, "petal", cs.InitializeResult().ServerInfo.Name)
	_, err = cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
}

// MCP calls and tool routes share one allowance per address.
func TestMCPSharesTheToolCallLimit(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_TOOL_CALLS_PER_MIN": "3"})
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: p.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, body := p.do(t, http.MethodGet, "/api/v1/explorations", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	for range 2 {
		r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "list_explorations", Arguments: map[string]any{}})
		require.NoError(t, err)
		require.False(t, r.IsError)
	}
	r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "list_explorations", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.True(t, r.IsError, "the fourth call in a minute from one address")
	var e struct {
		Error struct {
			Code        string
			RetryAfterS int `json:"retry_after_s"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.Content[0].(*sdk.TextContent).Text), &e))
	assert.Equal(t, "rate_limited", e.Error.Code)
	assert.Positive(t, e.Error.RetryAfterS)
}

// A payload the MCP SDK can't read, a method it doesn't know, a missing
// Accept, a wrong method and a name given twice are all answered in the
// contract's error shape, never the SDK's plain text.
func TestMCPMalformedPayloadsAnswerInTheErrorShape(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	const both = "application/json, text/event-stream"
	cases := []struct {
		name, method, body string
		headers            []string
		status             int
		code, message      string
	}{
		{"not JSON", http.MethodPost, `not json`, []string{"Accept", both}, 400, "bad_input", "not a JSON-RPC 2.0 request"},
		{"cut short", http.MethodPost, `{"jsonrpc":"2.0"`, []string{"Accept", both}, 400, "bad_input", "not a JSON-RPC 2.0 request"},
		{"no version", http.MethodPost, `{}`, []string{"Accept", both}, 400, "bad_input", "not a JSON-RPC 2.0 request"},
		{"a string", http.MethodPost, `"x"`, []string{"Accept", both}, 400, "bad_input", "not a JSON-RPC 2.0 request"},
		{"unknown method", http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"nope"}`, []string{"Accept", both}, 400, "bad_input", "no such JSON-RPC method"},
		{"method twice", http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"nope"}`, []string{"Accept", both}, 400, "bad_input", "field method is given twice"},
		// A name twice inside a tool's arguments is a bad argument, answered as
		// a tool result (TestANULInMCPArgumentsIsAToolError).
		{"no Accept", http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, 400, "bad_input", "Accept must contain"},
		{"plain text", http.MethodPost, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, []string{"Accept", both, "Content-Type", "text/plain"}, 400, "bad_input", "Content-Type must be"},
		{"DELETE", http.MethodDelete, ``, nil, 405, "method_not_allowed", "does not take that method"},
	}
	for _, tc := range cases {
		res, body := p.do(t, tc.method, "/mcp", tc.body, tc.headers...)
		assert.Equal(t, tc.status, res.StatusCode, "%s: %s", tc.name, body)
		assert.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "application/json"), "%s: %s", tc.name, res.Header.Get("Content-Type"))
		var e struct {
			ToolsVersion string `json:"tools_version"`
			Error        struct{ Code, Message, Hint string }
		}
		require.NoError(t, json.Unmarshal([]byte(body), &e), "%s: %s", tc.name, body)
		assert.Equal(t, tc.code, e.Error.Code, tc.name)
		assert.Contains(t, e.Error.Message, tc.message, tc.name)
		assert.NotEmpty(t, e.Error.Hint, tc.name)
		assert.NotEmpty(t, e.ToolsVersion, tc.name)
	}
	// A well-formed call still streams its answer.
	res, body := p.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Accept", both)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"describe_snapshot"`)
}
