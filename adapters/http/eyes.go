package httpapi

import (
	"net/http"

	"github.com/petal-near/petal/app/eyesapp"
	"github.com/petal-near/petal/app/relationsapp"
)

// eyesRoutes are the reading tools' routes (each OnTheirMachine: a public
// site refuses them) and the brain's (kept everywhere).
func (s *Server) eyesRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/v1/read-chain", Tool: eyesapp.ToolReadChain},
		{Method: http.MethodGet, Path: "/api/v1/read-page", Tool: eyesapp.ToolReadPage},
		{Method: http.MethodGet, Path: "/api/v1/web-search", Tool: eyesapp.ToolSearch},
		{Method: http.MethodGet, Path: "/api/v1/look-up", Tool: relationsapp.ToolLookUp},
		{Method: http.MethodGet, Path: "/api/v1/search", Tool: relationsapp.ToolSearchPetals},
		{Method: http.MethodGet, Path: "/api/v1/brain", Tool: eyesapp.ToolBrainIndex},
		{Method: http.MethodGet, Path: "/api/v1/brain/route", Tool: eyesapp.ToolBrainRoute},
		{Method: http.MethodGet, Path: "/api/v1/brain/files/:id", Tool: eyesapp.ToolBrainFile},
	}
}
