package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

// MethodAll is a route that answers every method (ALL /mcp).
const MethodAll = "ALL"

// MCPDoor is the MCP door's Streamable HTTP handler (adapters/mcp), mounted
// at /mcp. It is an interface here because one adapter never imports another.
type MCPDoor interface {
	http.Handler
}

func (s *Server) mcpRoutes() []Route {
	return []Route{{
		Method: MethodAll, Path: "/mcp", Access: AccessOpen, Sessionless: true, // the MCP door reads no cookie
		Summary: "MCP, Streamable HTTP, stateless: the same tools as these routes, one JSON-RPC call per POST",
		Handler: s.mcp,
		Answers: []Answer{{Media: "application/json", Says: "the JSON-RPC answer"}, {Media: "text/event-stream", Says: "the JSON-RPC answer, after the progress notifications, as SSE"},
			{Status: http.StatusAccepted, Says: "a notification, taken"}},
		// GET and DELETE: a stateless server keeps no stream and no session.
		Fails: []int{http.StatusMethodNotAllowed},
	}}
}

// mcp hands the request to the MCP door, after refusing a JSON-RPC batch (the
// contract takes one call per POST) and putting the caller's address where
// the tool handler can find it, so MCP calls share the tool-call limit.
func (s *Server) mcp(c echo.Context) error {
	if s.deps.MCP == nil {
		return errs.New(errs.NotFound, "no MCP door on this server")
	}
	req := c.Request()
	if req.Method == http.MethodPost && req.Body != nil {
		raw, err := io.ReadAll(req.Body)
		if err != nil {
			return decodeError(err)
		}
		if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && t[0] == '[' {
			return errs.New(errs.BadInput, "/mcp takes one JSON-RPC call per POST, not a batch", "send each call in its own POST")
		}
		// A name given twice would be read as its last by the SDK: refused,
		// as every other body is, before the SDK reads it. What lies inside
		// a tool's arguments (a NUL, a name twice) is the tool's to refuse:
		// its arguments are decoded strictly, and the answer is a JSON-RPC
		// tool result with isError and bad_input, as for any bad argument.
		if err, inArguments := toolkit.CheckJSONTextIn(raw, "params", "arguments"); err != nil && !inArguments {
			return err
		}
		req.Body = io.NopCloser(bytes.NewReader(raw))
	}
	ctx := toolkit.WithCaller(req.Context(), toolkit.Caller{Door: toolkit.DoorMCP, Address: ClientAddress(req, s.deps.Config.Public, s.deps.Config.TrustedProxies)})
	w := &mcpErrorWriter{ResponseWriter: c.Response().Writer}
	s.deps.MCP.ServeHTTP(w, req.WithContext(ctx))
	if w.refused != 0 {
		return mcpRefusal(w.refused, w.text.String(), w.Header().Get("Allow"))
	}
	return nil
}

// mcpErrorWriter passes the MCP door's answers through, except the plain-text
// refusals the SDK writes itself (a payload that is not JSON-RPC, a missing
// Accept, a wrong method): those are held back, so the door answers them in
// the contract's error shape instead.
type mcpErrorWriter struct {
	http.ResponseWriter
	refused int          // the SDK's status, when it refused in plain text
	text    bytes.Buffer // the start of its text
}

func (w *mcpErrorWriter) WriteHeader(status int) {
	ct := w.Header().Get("Content-Type")
	if status >= 400 && !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/event-stream") {
		w.refused = status
		w.Header().Del("Content-Type")
		w.Header().Del("X-Content-Type-Options")
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *mcpErrorWriter) Write(p []byte) (int, error) {
	if w.refused != 0 {
		if room := 512 - w.text.Len(); room > 0 {
			w.text.Write(p[:min(len(p), room)])
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the real writer (flushes for SSE).
func (w *mcpErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes a flush on, for the SDK's own streams.
func (w *mcpErrorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.refused == 0 {
		f.Flush()
	}
}

// mcpRefusal is a plain-text refusal of the SDK as petal's error.
func mcpRefusal(status int, text, allow string) error {
	text = strings.TrimSpace(text)
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	const oneCall = `send one JSON-RPC 2.0 request per POST, like {"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	switch {
	case status == http.StatusMethodNotAllowed:
		hint := "POST one JSON-RPC request to /mcp"
		if allow != "" {
			hint = "/mcp takes " + allow
		}
		return errs.New(errs.MethodNotAllowed, "/mcp does not take that method", hint)
	case status >= 500:
		return errs.New(errs.Internal, "the MCP door failed", "try again; if it keeps happening, tell us the X-Request-Id").
			WithCause(fmt.Errorf("mcp sdk: %d %s", status, text))
	case strings.HasPrefix(text, "malformed payload"):
		return errs.New(errs.BadInput, "the body is not a JSON-RPC 2.0 request", oneCall).WithCause(errors.New(text))
	case strings.HasPrefix(text, "JSON RPC not handled"):
		return errs.New(errs.BadInput, "/mcp has no such JSON-RPC method", "see tools/list and tools/call").WithCause(errors.New(text))
	case text != "" && utf8.ValidString(text) && !strings.ContainsAny(text, "{}"):
		return errs.New(errs.BadInput, text, oneCall) // Accept and Content-Type: the SDK's words say it plainly
	}
	return errs.New(errs.BadInput, "the MCP request could not be read", oneCall).WithCause(fmt.Errorf("mcp sdk: %d %s", status, text))
}
