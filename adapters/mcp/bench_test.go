package mcp_test

import (
	"net/http/httptest"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/petal-near/petal/adapters/mcp"
)

// BenchmarkToolCall is the MCP door's own cost for one tools/call of a tool
// that does nothing, in memory and over Streamable HTTP on a real loopback
// listener (stateless: each POST is a fresh session).
func BenchmarkToolCall(b *testing.B) {
	cfgReg := func() *mcp.Server { return mcp.New(newRegistry(b, false, 1<<30), quietLog()) }
	args := &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	b.Run("in memory", func(b *testing.B) {
		door := cfgReg()
		ct, st := sdk.NewInMemoryTransports()
		go func() { _ = door.Serve(b.Context(), st) }()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(b.Context(), ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		b.ReportAllocs()
		for b.Loop() {
			if res, err := cs.CallTool(b.Context(), args); err != nil || res.IsError {
				b.Fatal(err)
			}
		}
	})
	b.Run("streamable http", func(b *testing.B) {
		srv := httptest.NewServer(cfgReg())
		defer srv.Close()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).
			Connect(b.Context(), &sdk.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		b.ReportAllocs()
		for b.Loop() {
			if res, err := cs.CallTool(b.Context(), args); err != nil || res.IsError {
				b.Fatal(err)
			}
		}
	})
}
