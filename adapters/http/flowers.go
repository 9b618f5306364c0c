package httpapi

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

func (s *Server) flowerRoutes() []Route {
	render := Route{Method: http.MethodPost, Path: "/api/v1/render", Tool: flowersapp.ToolRenderFlower, Query: []string{"format"},
		Summary: "format=svg answers the SVG alone as image/svg+xml (ETag: its render_sha256); json or nothing, the tool's JSON",
		Answers: []Answer{svgAnswer}}
	render.Handler = s.renderFlower(render)
	return []Route{
		{Method: http.MethodPost, Path: "/api/v1/figures", Tool: flowersapp.ToolComputeFigures},
		{Method: http.MethodPost, Path: "/api/v1/figures/compare", Tool: flowersapp.ToolCompareFigures},
		{Method: http.MethodPost, Path: "/api/v1/figures/voting-blocs", Tool: flowersapp.ToolVotingBlocs},
		{Method: http.MethodPost, Path: "/api/v1/specs/propose", Tool: flowersapp.ToolProposeSpec},
		{Method: http.MethodPost, Path: "/api/v1/specs/validate", Tool: flowersapp.ToolValidateSpec},
		render,
		{Method: http.MethodGet, Path: "/d/:hash", Access: AccessPlain, Handler: s.draft, Head: true,
			Answers: []Answer{{Status: http.StatusFound, Says: "to /draft?spec=…"}, {Status: http.StatusNotFound, Media: "text/plain", Says: "no draft has that hash"},
				{Status: http.StatusNotFound, Media: "text/html", Says: "no draft has that hash, as a page for a browser"}},
			Summary: "a short draft link: 302 to /draft?spec=<the spec's canonical JSON>, hashed again on read; 404 in plain text for an unknown hash"},
	}
}

// renderFlower is render_flower's door: the tool's JSON, or with
// ?format=svg the picture alone as image/svg+xml.
func (s *Server) renderFlower(r Route) echo.HandlerFunc {
	return func(c echo.Context) error {
		format := c.QueryParam("format")
		switch format {
		case "", "json", "svg":
		default:
			return errs.New(errs.BadInput, "format must be svg or json", "leave it out for JSON")
		}
		tool, _ := s.deps.Registry.Get(r.Tool)
		input, err := s.toolInput(c, tool, r)
		if err != nil {
			return err
		}
		out, err := s.deps.Registry.Call(c.Request().Context(), r.Tool, toolkit.Call{Input: input, Caller: s.caller(c)})
		if err != nil {
			return err
		}
		rendered, ok := out.(flowersapp.Rendered)
		if !ok {
			return errs.New(errs.Internal, "render_flower answered something other than a rendering")
		}
		h := c.Response().Header()
		if rendered.Personal {
			// A person's own names: for them alone, and never kept by a cache.
			h.Set("Cache-Control", "private, no-store")
		}
		if format != "svg" {
			return writeJSON(c, http.StatusOK, rendered)
		}
		h.Set("ETag", `"`+rendered.RenderSHA256+`"`)
		h.Set("X-Spec-Sha256", rendered.SpecSHA256)
		h.Set("X-Content-Type-Options", "nosniff")
		// The picture is data, never a page: nothing in it may run, even opened alone.
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
		return c.Blob(http.StatusOK, "image/svg+xml; charset=utf-8", []byte(rendered.SVG))
	}
}

// draft is /d/:hash: 302 to the draft page with the kept spec, or 404 in
// plain text.
func (s *Server) draft(c echo.Context) error {
	body, err := s.deps.Flowers.Draft(c.Request().Context(), c.Param("hash"))
	if errs.Is(err, errs.NotFound) && s.deps.Maps != nil {
		// A flower synced from SocialDB or shipped is on the map, not kept.
		if spec, merr := s.deps.Maps.DraftSpec(c.Request().Context(), c.Param("hash")); merr == nil {
			body, err = spec, nil
		}
	}
	if err != nil {
		if errs.Is(err, errs.NotFound) {
			if wantsHTML(c.Request()) { // a person who followed a link reads a page
				return s.errorPage(c, errs.New(errs.NotFound, "no draft has that address",
					"a draft link is the address /make or the map gave; check it was copied whole"), "make")
			}
			c.Response().Header().Set("Cache-Control", "no-store")
			return c.String(http.StatusNotFound, "not found: no draft has that hash\n")
		}
		return err
	}
	// The spec is named by its content, so the link never changes what it opens.
	c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	return c.Redirect(http.StatusFound, "/draft?spec="+url.QueryEscape(string(body)))
}
