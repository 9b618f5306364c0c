package main

import (
	"encoding/json"
	"net/http"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMCPTakesOneCallPerPost(t *testing.T) {
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
