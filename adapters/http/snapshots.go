package httpapi

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/snapshotsapp"
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
			Answers: []Answer{{Media: "application/json", Says: "the snapshot's canonical JSON (snapshot/v1)"}, notModified,
				{Status: http.StatusFound, Says: "with PETAL_BLOB_REDIRECT, to the blob store's signed URL, which serves the stored gzip (for a reader that takes gzip)"}},
			Summary: "a snapshot's canonical JSON, application/json, gzip-encoded when accepted (as stored, never recompressed); immutable cache headers and an ETag"},
		{Method: http.MethodGet, Path: "/api/v1/snapshots/:sha256/describe", Tool: "describe_snapshot"},
	}
}

// immutable is how long a snapshot may be cached: its name is its content,
// so it never changes.
const immutable = "public, max-age=31536000, immutable"

func (s *Server) snapshotBody(c echo.Context) error {
	sha := c.Param("sha256")
	if err := snapshotsapp.CheckSHA256("sha256", sha); err != nil {
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
	if s.deps.SnapshotLinks != nil && acceptsGzip(c.Request().Header.Get("Accept-Encoding")) {
		link, origin, err := s.deps.SnapshotLinks.BodyLink(c.Request().Context(), sha)
		if err != nil {
			return err
		}
		if link != "" {
			// The link runs out after 15 minutes: a cache keeps the
			// redirect for less. Where the body came from rides on it.
			h.Set("Cache-Control", "public, max-age=300")
			h.Set("Petal-Origin", origin)
			if origin == snapshotsapp.OriginDemo {
				h.Set("Petal-Demo", "true")
			}
			return c.Redirect(http.StatusFound, link)
		}
	}
	b, err := s.deps.Snapshots.Body(c.Request().Context(), sha)
	if err != nil {
		return err
	}
	h.Set("ETag", etag)
	h.Set("Cache-Control", immutable)
	h.Set("X-Content-Type-Options", "nosniff")
	// The body is the snapshot's canonical bytes and can say nothing more;
	// where it came from goes beside it.
	h.Set("Petal-Origin", b.Origin)
	if b.Origin == snapshotsapp.OriginDemo {
		h.Set("Petal-Demo", "true")
	}
	if acceptsGzip(c.Request().Header.Get("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(len(b.Gzipped)))
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, b.Gzipped)
	}
	return s.streamInflated(c, b.Gzipped)
}

// streamInflated serves a stored body to a client that takes no gzip by
// inflating it as it is written, never whole in memory: its length is the
// gzip trailer's, which petal wrote itself when it stored the body.
func (s *Server) streamInflated(c echo.Context, gz []byte) error {
	size := snapshotsapp.InflatedLength(gz)
	if size <= 0 || size > snapshotsapp.MaxSnapshotInflated {
		return errs.New(errs.Internal, "a stored snapshot could not be read").WithCause(fmt.Errorf("gzip trailer says %d bytes", size))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return errs.New(errs.Internal, "a stored snapshot could not be read").WithCause(err)
	}
	defer func() { _ = zr.Close() }()
	c.Response().Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	c.Response().Header().Set("Content-Length", strconv.FormatInt(size, 10))
	c.Response().WriteHeader(http.StatusOK)
	if c.Request().Method == http.MethodHead {
		return nil
	}
	if _, err := io.Copy(c.Response(), io.LimitReader(zr, size)); err != nil {
		// The status is sent: the client sees a body shorter than its
		// length, and the log says why.
		if s.deps.Log != nil {
			s.deps.Log.Warn("a snapshot body was cut short", "request_id", c.Response().Header().Get(echo.HeaderXRequestID), "err", err)
		}
	}
	return nil
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
