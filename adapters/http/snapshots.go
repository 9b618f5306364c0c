package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app"
	"github.com/petal-near/petal/domain/errs"
)

// Snapshot routes: the networks, find_target, get_snapshot and
// describe_snapshot are tool doors; the body route serves a snapshot's
// canonical JSON straight from storage.
func (s *Server) snapshotRoutes() []Route {
	if s.deps.Snapshots == nil {
		return nil
	}
	return []Route{
		{Method: http.MethodGet, Path: "/api/v1/networks", Tool: "list_networks"},
		{Method: http.MethodGet, Path: "/api/v1/networks/:id", Tool: "get_network"},
		{Method: http.MethodGet, Path: "/api/v1/find", Tool: "find_target"},
		{Method: http.MethodPost, Path: "/api/v1/snapshots", Tool: "get_snapshot"},
		{Method: http.MethodGet, Path: "/api/v1/snapshots/:sha256", Handler: s.snapshotBody, Head: true,
			Summary: "a snapshot's canonical JSON, application/json, gzip-encoded when accepted (as stored, never recompressed); immutable cache headers and an ETag"},
		{Method: http.MethodGet, Path: "/api/v1/snapshots/:sha256/describe", Tool: "describe_snapshot"},
	}
}

// immutable is how long a snapshot may be cached: its name is its content,
// so it never changes.
const immutable = "public, max-age=31536000, immutable"

func (s *Server) snapshotBody(c echo.Context) error {
	sha := c.Param("sha256")
	if err := app.CheckSHA256("sha256", sha); err != nil {
		return err
	}
	etag := `"` + sha + `"`
	h := c.Response().Header()
	h.Set("Vary", "Accept-Encoding")
	if etagMatches(c.Request().Header.Get("If-None-Match"), etag) {
		h.Set("ETag", etag)
		h.Set("Cache-Control", immutable)
		return c.NoContent(http.StatusNotModified)
	}
	gz, err := s.deps.Snapshots.Body(c.Request().Context(), sha)
	if err != nil {
		return err
	}
	h.Set("ETag", etag)
	h.Set("Cache-Control", immutable)
	h.Set("X-Content-Type-Options", "nosniff")
	if acceptsGzip(c.Request().Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(len(gz)))
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, gz)
	}
	body, err := app.Gunzip(gz)
	if err != nil {
		return errs.New(errs.Internal, "a stored snapshot could not be read").WithCause(err)
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, body)
}

// acceptsGzip reads Accept-Encoding: gzip (or *) with a q above zero.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "gzip" && name != "x-gzip" && name != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.ToLower(params), " ", "")
		if v, ok := strings.CutPrefix(q, "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil && f == 0 {
				return false
			}
		}
		return true
	}
	return false
}

func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}
