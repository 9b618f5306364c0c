package httpapi

import (
	"bytes"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app"
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
		Method: MethodAll, Path: "/mcp", Access: AccessOpen,
		Summary: "MCP, Streamable HTTP, stateless: the same tools as these routes, one JSON-RPC call per POST",
		Handler: s.mcp,
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
		req.Body = io.NopCloser(bytes.NewReader(raw))
	}
	ctx := app.WithCaller(req.Context(), app.Caller{Door: app.DoorMCP, Address: ClientAddress(req, s.deps.Config.Public, s.deps.Config.TrustedProxies)})
	s.deps.MCP.ServeHTTP(c.Response(), req.WithContext(ctx))
	return nil
}
