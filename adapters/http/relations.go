package httpapi

import (
	"net/http"

	"github.com/petal-near/petal/app/relationsapp"
)

// relationRoutes are the relations tools (docs/relations.md): open, read
// from the query.
func (s *Server) relationRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/v1/relations/account-groups", Tool: relationsapp.ToolAccountGroups},
		{Method: http.MethodGet, Path: "/api/v1/relations/shared", Tool: relationsapp.ToolSharedAccounts},
		{Method: http.MethodGet, Path: "/api/v1/relations/related", Tool: relationsapp.ToolRelatedGroups},
		{Method: http.MethodGet, Path: "/api/v1/relations/overview", Tool: relationsapp.ToolRelationsOverview},
		{Method: http.MethodGet, Path: "/api/v1/relations/path", Tool: relationsapp.ToolPowerPath},
	}
}
