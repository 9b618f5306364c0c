package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/mcp"
	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

// sampleTools is a small tool set of the shapes the registry holds: a plain
// tool, a long one with progress, one that fails, and one that runs on the
// person's own machine.
type sampleTools struct{}

// The sample tools' answers, typed as every tool's are (WithIO).
type (
	echoed struct {
		Text string `json:"text"`
	}
	counted struct {
		Counted int `json:"counted"`
	}
	handed struct {
		Handed bool `json:"handed"`
	}
	read struct {
		Read bool `json:"read"`
	}
	nothing struct{}
)

func (sampleTools) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{Name: "echo", Description: "says back what it is given"},
			func(_ context.Context, _ toolkit.Call, in struct {
				Text string `json:"text"`
			}) (echoed, error) {
				return echoed{Text: in.Text}, nil
			}),
		toolkit.WithIO(toolkit.Tool{Name: "count", Description: "counts to three, saying each step", Long: true},
			func(_ context.Context, call toolkit.Call, _ struct{}) (counted, error) {
				total := 3
				for i := 1; i <= total; i++ {
					call.Progress(toolkit.Progress{Stage: "counting", Message: "step", Done: &i, Total: &total})
				}
				return counted{Counted: total}, nil
			}),
		toolkit.WithIO(toolkit.Tool{Name: "fails", Description: "always refuses its input"},
			func(context.Context, toolkit.Call, struct{}) (nothing, error) {
				return nothing{}, errs.New(errs.BadInput, "field x: expected a number", "send a number")
			}),
		toolkit.WithIO(toolkit.Tool{Name: "handing", Description: "Petals' agent's own", AgentOnly: true},
			func(context.Context, toolkit.Call, struct{}) (handed, error) { return handed{Handed: true}, nil }),
		toolkit.WithIO(toolkit.Tool{Name: "outside", Description: "reads the chain", OnTheirMachine: true},
			func(context.Context, toolkit.Call, struct{}) (read, error) { return read{Read: true}, nil }),
	}
}

func newRegistry(t testing.TB, public bool, perMin int) *toolkit.Registry {
	t.Helper()
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	cfg.Public = public
	cfg.ToolCallsPerMinute = perMin
	return toolkit.NewRegistry(cfg, memory.NewRateLimiter(memory.SystemClock{}), []toolkit.ToolSet{sampleTools{}})
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// connect serves door on in-memory transports and returns a Go SDK client on it.
func connect(t *testing.T, door *mcp.Server, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = door.Serve(ctx, st) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close(); cancel(); <-done })
	return cs
}

// connectHTTP serves door's Streamable HTTP handler on a real listener.
func connectHTTP(t *testing.T, door *mcp.Server, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	srv := httptest.NewServer(door)
	t.Cleanup(srv.Close)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func errorOf(t *testing.T, res *sdk.CallToolResult) errs.Detail {
	t.Helper()
	require.True(t, res.IsError, "expected a tool error")
	require.Len(t, res.Content, 1)
	text, ok := res.Content[0].(*sdk.TextContent)
	require.True(t, ok)
	var body errs.Body
	require.NoError(t, json.Unmarshal([]byte(text.Text), &body))
	return body.Error
}

func TestToolsListIsTheRegistry(t *testing.T) {
	for name, public := range map[string]bool{"local site": false, "public site": true} {
		t.Run(name, func(t *testing.T) {
			reg := newRegistry(t, public, 60)
			cs := connect(t, mcp.New(reg, quietLog()), nil)
			res, err := cs.ListTools(t.Context(), nil)
			require.NoError(t, err)
			offered := reg.Offered()
			require.Len(t, res.Tools, len(offered))
			for i, tool := range res.Tools {
				assert.Equal(t, offered[i].Name, tool.Name)
				assert.Equal(t, offered[i].Description, tool.Description)
				in, _ := json.Marshal(tool.InputSchema)
				assert.JSONEq(t, string(offered[i].Input), string(in), tool.Name)
				// The tool's output schema, and tools_version, which every result carries.
				var out map[string]any
				b, _ := json.Marshal(tool.OutputSchema)
				require.NoError(t, json.Unmarshal(b, &out))
				if props, ok := out["properties"].(map[string]any); ok {
					assert.Equal(t, map[string]any{"type": "string", "description": "the tool set's version"}, props["tools_version"], tool.Name)
					delete(props, "tools_version")
				}
				b, _ = json.Marshal(out)
				assert.JSONEq(t, string(offered[i].Output), string(b), tool.Name)
			}
			names := []string{}
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
			}
			assert.Equal(t, !public, contains(names, "outside"), "a public site does not list tools that reach outside")
		})
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestCallsGoThroughTheRegistry(t *testing.T) {
	reg := newRegistry(t, false, 60)
	for name, cs := range map[string]*sdk.ClientSession{
		"memory": connect(t, mcp.New(reg, quietLog()), nil),
		"http":   connectHTTP(t, mcp.New(reg, quietLog()), nil),
	} {
		t.Run(name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
			require.NoError(t, err)
			require.False(t, res.IsError)
			b, _ := json.Marshal(res.StructuredContent)
			assert.JSONEq(t, `{"tools_version":"`+toolkit.ToolsVersion+`","text":"hello"}`, string(b), "every result says which tool set answered")

			res, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x", "extra": 1}})
			require.NoError(t, err)
			e := errorOf(t, res)
			assert.Equal(t, errs.BadInput, e.Code)
			assert.Contains(t, e.Message, "extra")

			res, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "fails", Arguments: map[string]any{}})
			require.NoError(t, err)
			e = errorOf(t, res)
			assert.Equal(t, errs.Detail{Code: errs.BadInput, Message: "field x: expected a number", Hint: "send a number"}, e)
		})
	}
}

func TestLongToolsSendProgress(t *testing.T) {
	reg := newRegistry(t, false, 60)
	for _, door := range []string{"memory", "http"} {
		t.Run(door, func(t *testing.T) {
			var mu sync.Mutex
			var got []sdk.ProgressNotificationParams
			opts := &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, *r.Params)
			}}
			var cs *sdk.ClientSession
			if door == "memory" {
				cs = connect(t, mcp.New(reg, quietLog()), opts)
			} else {
				cs = connectHTTP(t, mcp.New(reg, quietLog()), opts)
			}
			params := &sdk.CallToolParams{Name: "count", Arguments: map[string]any{}}
			params.SetProgressToken("tok-1")
			res, err := cs.CallTool(t.Context(), params)
			require.NoError(t, err)
			require.False(t, res.IsError)
			// Notifications travel before the result on the same stream, but the
			// client hands them to its handler on its own goroutine.
			require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 3 }, 10*time.Second, time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			for i, p := range got {
				assert.Equal(t, "tok-1", p.ProgressToken)
				assert.Equal(t, float64(i+1), p.Progress)
				assert.Equal(t, float64(3), p.Total)
			}
		})
	}
}

func TestPublicSiteRefusesToolsThatReachOutside(t *testing.T) {
	reg := newRegistry(t, true, 60)
	cs := connect(t, mcp.New(reg, quietLog()), nil)
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "outside", Arguments: map[string]any{}})
	require.NoError(t, err)
	e := errorOf(t, res)
	assert.Equal(t, errs.NotOnThisSite, e.Code)
	assert.Contains(t, e.Hint, "/connect")
}

// An agent-only tool is no tool at all over MCP: not listed, and called by
// name it gets the SDK's unknown-tool answer, as a name nobody has does.
func TestAgentOnlyToolsAreNoToolsOverMCP(t *testing.T) {
	reg := newRegistry(t, false, 60)
	cs := connect(t, mcp.New(reg, quietLog()), nil)
	list, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	for _, tool := range list.Tools {
		assert.NotEqual(t, "handing", tool.Name)
		if tool.Name == "echo" {
			b, _ := json.Marshal(tool.OutputSchema)
			assert.Contains(t, string(b), `"tools_version"`, "the output schema lists what every result carries")
		}
	}
	_, agentOnly := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "handing", Arguments: map[string]any{}})
	_, nobody := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
	require.Error(t, agentOnly)
	require.Error(t, nobody)
	assert.Equal(t, strings.ReplaceAll(nobody.Error(), "no_such_tool", "handing"), agentOnly.Error())
}

func TestMCPCallsShareTheToolCallLimit(t *testing.T) {
	reg := newRegistry(t, false, 2)
	cs := connect(t, mcp.New(reg, quietLog()), nil)
	for range 2 {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		require.NoError(t, err)
		require.False(t, res.IsError)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
	require.NoError(t, err)
	e := errorOf(t, res)
	assert.Equal(t, errs.RateLimited, e.Code)
	assert.Positive(t, e.RetryAfterS)
}

// The HTTP door puts each request's address in its context; the limit then
// counts per address, as on the tool routes.
func TestHTTPCallerAddressReachesTheRegistry(t *testing.T) {
	reg := newRegistry(t, false, 1)
	door := mcp.New(reg, quietLog())
	call := func(addr string) *sdk.CallToolResult {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			door.ServeHTTP(w, r.WithContext(toolkit.WithCaller(r.Context(), toolkit.Caller{Address: addr})))
		}))
		defer srv.Close()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).
			Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, nil)
		require.NoError(t, err)
		defer cs.Close()
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
		require.NoError(t, err)
		return res
	}
	assert.False(t, call("192.0.2.1").IsError)
	assert.Equal(t, errs.RateLimited, errorOf(t, call("192.0.2.1")).Code)
	assert.False(t, call("192.0.2.2").IsError, "another address has its own allowance")
}
