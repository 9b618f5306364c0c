package httpapi

import (
	"net/http"

	"github.com/petal-near/petal/app"
)

// relationRoutes are the relations tools (docs/relations.md): open, read
// from the query.
func (s *Server) relationRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/v1/relations/account-groups", Tool: app.ToolAccountGroups},
		{Method: http.MethodGet, Path: "/api/v1/relations/shared", Tool: app.ToolSharedAccounts},
		{Method: http.MethodGet, Path: "/api/v1/relations/related", Tool: app.ToolRelatedGroups},
		{Method: http.MethodGet, Path: "/api/v1/relations/overview", Tool: app.ToolRelationsOverview},
		{Method: http.MethodGet, Path: "/api/v1/relations/path", Tool: app.ToolPowerPath},
	}
}
