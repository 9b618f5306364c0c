package httpapi

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/siteapp"
	"github.com/petal-near/petal/app/toolkit"
)

func (s *Server) healthRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/v1/health", Access: AccessOpen, Sessionless: true, Summary: "whether petal can serve: 200 when the database answers, 503 when not", Handler: s.health,
			Answers: []Answer{{JSON: siteapp.Health{}, Says: "petal can serve"}, {Status: http.StatusServiceUnavailable, JSON: siteapp.Health{}, Says: "petal cannot serve: what failed"}}},
		{Method: http.MethodGet, Path: "/api/v1/info", Access: AccessOpen, Sessionless: true, Summary: "identity probe: build id and server implementation", Handler: s.info, Answers: answersJSON(infoBody{})},
	}
}

func (s *Server) health(c echo.Context) error {
	h := s.deps.Health.Check(c.Request().Context())
	status := http.StatusOK
	if !h.OK {
		status = http.StatusServiceUnavailable
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	return writeJSON(c, status, h)
}

type infoBody struct {
	BuildID              string `json:"build_id"`
	ServerImplementation string `json:"server_implementation"`
}

// infoJSON is info's answer, the same for the life of the process: an identity
// probe is asked often (by monitors, by the middleware benchmark), so it is
// encoded once.
var infoJSON = sync.OnceValue(func() []byte {
	b, _ := json.Marshal(infoBody{BuildID: toolkit.BuildID, ServerImplementation: "petal"})
	return b
})

func (s *Server) info(c echo.Context) error {
	return writeJSONBytes(c, http.StatusOK, infoJSON())
}
