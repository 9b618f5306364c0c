package httpapi

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/publishapp"
	"github.com/petal-near/petal/domain/errs"
)

// publishRoutes are publishing flowers to NEAR and the published flowers
// (docs/publishing.md). Preparing and publishing act on the signed-in
// person's wallet, so a browser page of another site is refused them.
func (s *Server) publishRoutes() []Route {
	prepare := Route{Method: http.MethodPost, Path: "/api/v1/publish/prepare", Tool: publishapp.ToolPreparePublish}
	prepare.Handler = s.sameOrigin(s.toolHandler(prepare))
	publish := Route{Method: http.MethodPost, Path: "/api/v1/publish", Tool: publishapp.ToolPublishFlower}
	publish.Handler = s.sameOrigin(s.toolHandler(publish))
	// Corrections act on the person's wallet too.
	prepareCorrection := Route{Method: http.MethodPost, Path: "/api/v1/corrections/prepare", Tool: publishapp.ToolPrepareCorrection}
	prepareCorrection.Handler = s.sameOrigin(s.toolHandler(prepareCorrection))
	submitCorrection := Route{Method: http.MethodPost, Path: "/api/v1/corrections", Tool: publishapp.ToolSubmitCorrection}
	submitCorrection.Handler = s.sameOrigin(s.toolHandler(submitCorrection))
	return []Route{
		{Method: http.MethodPost, Path: "/api/v1/quote", Tool: publishapp.ToolQuotePayment},
		prepare,
		publish,
		prepareCorrection,
		submitCorrection,
		{Method: http.MethodGet, Path: "/api/v1/flowers", Tool: publishapp.ToolListFlowers},
		{Method: http.MethodGet, Path: "/api/v1/flowers/:id", Tool: publishapp.ToolGetFlower},
		{Method: http.MethodGet, Path: "/api/v1/flowers/:id/svg", Access: AccessOpen, Handler: s.publishedFlowerSVG, Head: true, Query: []string{"view"},
			Answers: []Answer{svgAnswer, notModified},
			Summary: "the published flower's SVG, drawn through the view its address names (?view=<whole hash>, none: the default; an unknown view is not_found); immutable, ETag its render_sha256"},
	}
}

// sameOrigin refuses a browser request from another site before h runs.
func (s *Server) sameOrigin(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.checkOrigin(c); err != nil {
			return err
		}
		return h(c)
	}
}

// publishedFlowerSVG is GET /api/v1/flowers/:id/svg. Its address names
// everything the picture depends on (the flower, immutable by its id, and
// the view), so it is kept a year.
func (s *Server) publishedFlowerSVG(c echo.Context) error {
	for name := range c.QueryParams() {
		if name != "view" {
			return errs.Newf(errs.BadInput, "unknown query parameter %s", name).WithHint("the only one is view=<a view's whole hash>")
		}
	}
	rendered, err := s.deps.Publish.FlowerSVG(c.Request().Context(), c.Param("id"), c.QueryParam("view"))
	if err != nil {
		return err
	}
	h := c.Response().Header()
	etag := `"` + rendered.RenderSHA256 + `"`
	h.Set("ETag", etag)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Spec-Sha256", rendered.SpecSHA256)
	h.Set("X-Content-Type-Options", "nosniff")
	// The picture is data, never a page: nothing in it may run, even opened alone.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	if match := c.Request().Header.Get("If-None-Match"); match != "" && strings.Contains(match, etag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, "image/svg+xml; charset=utf-8", []byte(rendered.SVG))
}
