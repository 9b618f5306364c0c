package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app"
)

func (s *Server) healthRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/v1/health", Access: AccessPlain, Summary: "whether petal can serve: 200 when the database answers, 503 when not", Handler: s.health},
		{Method: http.MethodGet, Path: "/api/v1/info", Access: AccessPlain, Summary: "identity probe: build id and server implementation", Handler: s.info},
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

func (s *Server) info(c echo.Context) error {
	return writeJSON(c, http.StatusOK, infoBody{BuildID: app.BuildID, ServerImplementation: "petal"})
}
