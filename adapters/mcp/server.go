// Package mcp is petal's MCP door, on the official Go SDK: the tool registry
// served over Streamable HTTP (stateless, mounted by the HTTP door at /mcp) and
// over stdio (`petal mcp`, for agents on the person's own machine). Tool names,
// input schemas and outputs are the registry's, unchanged; calls go through
// Registry.Call, so public mode and the rate limit hold here as on HTTP.
package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

// StdioAddress is the rate-limit key of calls over stdio: one local agent.
const StdioAddress = "stdio"

// Server is the MCP door over one registry.
type Server struct {
	reg  *toolkit.Registry
	log  *slog.Logger
	sdk  *sdk.Server
	http http.Handler
}

// New builds the MCP server: one SDK tool per tool this site offers.
func New(reg *toolkit.Registry, log *slog.Logger) *Server {
	s := &Server{reg: reg, log: log}
	// The SDK narrates every session at info; petal keeps its warnings only.
	sdkLog := slog.New(minLevel{Handler: log.Handler(), min: slog.LevelWarn})
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "petal", Title: "petal", Version: toolkit.ToolsVersion},
		&sdk.ServerOptions{Logger: sdkLog})
	for _, t := range reg.Offered() {
		s.sdk.AddTool(&sdk.Tool{
			Name:         t.Name,
			Description:  t.Description,
			InputSchema:  t.Input,
			OutputSchema: outputWithToolsVersion(t.Output),
			Annotations:  annotations(t.Hints),
		}, s.handler(t.Name))
	}
	// A tool this site does not offer (public mode) is not listed; calling it by
	// name anyway gets the same refusal as the other doors, not "unknown tool".
	s.sdk.AddReceivingMiddleware(s.refuseUnoffered)
	s.http = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk }, &sdk.StreamableHTTPOptions{
		Stateless: true,
		Logger:    sdkLog,
		// The tool routes are open to every site (open CORS, no credentials), so
		// the SDK's DNS-rebinding guard protects nothing here, and it would
		// refuse every request behind a reverse proxy on the same host.
		DisableLocalhostProtection: true,
	})
	return s
}

// ServeHTTP answers one Streamable HTTP request. The HTTP door mounts it at
// /mcp, after refusing batches and putting the caller in the context.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.http.ServeHTTP(w, r) }

// ServeStdio serves one client on stdin and stdout until it hangs up or ctx
// ends. Nothing but protocol messages may go to stdout: logs go to stderr.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.sdk.Run(ctx, &sdk.StdioTransport{})
}

// Serve serves one client on any transport (tests use in-memory ones).
func (s *Server) Serve(ctx context.Context, t sdk.Transport) error { return s.sdk.Run(ctx, t) }

func (s *Server) handler(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		caller, ok := toolkit.CallerFrom(ctx)
		if !ok {
			caller = toolkit.Caller{Address: StdioAddress}
		}
		caller.Door = toolkit.DoorMCP
		call := toolkit.Call{Input: req.Params.Arguments, Caller: caller}
		if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
			call.Progress = progressSender(ctx, req.Session, tok)
		}
		out, err := s.reg.Call(ctx, name, call)
		if err != nil {
			return s.errorResult(ctx, err), nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return s.errorResult(ctx, errs.New(errs.Internal, "the answer could not be encoded").WithCause(err)), nil
		}
		b = withToolsVersion(b)
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: string(b)}},
			StructuredContent: json.RawMessage(b),
		}, nil
	}
}

// progressSender forwards a long tool's progress as notifications/progress.
// progress must grow with every notification, so a step without its own
// count is numbered.
func progressSender(ctx context.Context, ss *sdk.ServerSession, token any) func(toolkit.Progress) {
	var mu sync.Mutex
	var n float64
	return func(p toolkit.Progress) {
		mu.Lock()
		defer mu.Unlock()
		n++
		params := &sdk.ProgressNotificationParams{ProgressToken: token, Message: p.Message, Progress: n}
		if p.Done != nil && float64(*p.Done) > n {
			n = float64(*p.Done)
			params.Progress = n
		}
		if p.Total != nil {
			params.Total = float64(*p.Total)
		}
		if params.Message == "" {
			params.Message = p.Stage
		}
		_ = ss.NotifyProgress(ctx, params)
	}
}

func (s *Server) errorResult(ctx context.Context, err error) *sdk.CallToolResult {
	e, ok := errs.As(err)
	if !ok {
		e = errs.New(errs.Internal, "something went wrong on our side", "try again").WithCause(err)
	}
	if e.Code == errs.Internal {
		s.log.ErrorContext(ctx, "mcp tool call failed", "err", err)
	}
	b, _ := json.Marshal(e.Body())
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(withToolsVersion(b))}}}
}

func (s *Server) refuseUnoffered(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/call" {
			if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok && !s.offers(p.Name) {
				// An agent-only tool (hand_job…) is no tool at all here: the
				// SDK's own unknown-tool answer, as for any other name.
				if t, known := s.reg.Get(p.Name); known && !t.AgentOnly {
					return s.errorResult(ctx, toolkit.NotOnThisSite(p.Name)), nil
				}
			}
		}
		return next(ctx, method, req)
	}
}

func (s *Server) offers(name string) bool {
	for _, t := range s.reg.Offered() {
		if t.Name == name {
			return true
		}
	}
	return false
}

// annotations are a tool's hints as MCP says them. A read is idempotent
// and destroys nothing; MCP's defaults (destructive, open world) are never
// left to stand for a tool that has hints.
func annotations(h *toolkit.ToolHints) *sdk.ToolAnnotations {
	if h == nil {
		return nil
	}
	destructive, openWorld := h.Destructive && !h.ReadOnly, h.OpenWorld
	return &sdk.ToolAnnotations{
		ReadOnlyHint:    h.ReadOnly,
		DestructiveHint: &destructive,
		IdempotentHint:  h.Idempotent || h.ReadOnly,
		OpenWorldHint:   &openWorld,
	}
}

var toolsVersionPrefix = []byte(`{"tools_version":"` + toolkit.ToolsVersion + `"`)

// withToolsVersion puts tools_version first in a JSON object's bytes, as the
// HTTP door does in every JSON answer, so a client can tell which tool set
// answered from the result alone.
func withToolsVersion(b []byte) []byte {
	if len(b) < 2 || b[0] != '{' {
		return b
	}
	out := make([]byte, 0, len(b)+len(toolsVersionPrefix)+1)
	out = append(out, toolsVersionPrefix...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	return append(out, b[1:]...)
}

// outputWithToolsVersion lists tools_version in an output schema that lists
// its properties, since every result carries it.
func outputWithToolsVersion(schema json.RawMessage) json.RawMessage {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return schema
	}
	props, ok := s["properties"].(map[string]any)
	if !ok {
		return schema
	}
	props["tools_version"] = map[string]any{"type": "string", "description": "the tool set's version"}
	b, err := json.Marshal(s)
	if err != nil {
		return schema
	}
	return b
}

// minLevel drops records below min.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(as), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}
