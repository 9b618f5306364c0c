package httpapi

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/mapsapp"
	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/domain/specs"
)

// mapRoutes are the shared map's (docs/map.md): lists answered from the
// process's index as encoded bytes, and each drawing's still picture.
func (s *Server) mapRoutes() []Route {
	if s.deps.Maps == nil {
		return nil
	}
	page := []string{"view", "cursor", "limit"}
	return []Route{
		{Method: http.MethodGet, Path: "/api/v1/map", Handler: s.mapList(s.deps.Maps.Map), Query: page, Answers: answersJSON(mapAnswer{}),
			Summary: "the map in one answer: { made, source, views, groups, pairs, next_cursor }, every view the oldest first (view: a view's hash to draw through; cursor, limit: paging)"},
		{Method: http.MethodGet, Path: "/api/v1/map/views", Handler: s.mapList(s.deps.Maps.Views), Query: page, Answers: answersJSON(mapViewsAnswer{}),
			Summary: "{ views, next_cursor }: the same views in the same order, each without its reading"},
		{Method: http.MethodGet, Path: "/api/v1/map/:sha/svg", Handler: s.mapPicture, Query: []string{"look", "view", "paint", "names", "form", "scheme"}, Head: true,
			Answers: []Answer{svgAnswer, notModified},
			Summary: "a view's still picture by its spec's sha256, drawn through the view its address names (form=tile: the flower alone in a square, for a card; scheme=dark: on a dark page's colours); immutable with a look, ETag its render_sha256; no per-address limit"},
		{Method: http.MethodGet, Path: "/api/v1/maps", Handler: s.mapList(s.deps.Maps.Maps), Query: page, Answers: answersJSON(mapsAnswer{}),
			Summary: "{ maps, next_cursor }: one card per map, the newest first by its newest drawing"},
		{Method: http.MethodGet, Path: "/api/v1/maps/:id", Handler: s.oneMap, Query: []string{"view"}, Answers: answersJSON(oneMapAnswer{}),
			Summary: "{ map }: one card by its id URL-encoded (an EVM address in any case), hidden maps too with hidden: { why, decided }; not_found for an address with nothing on the map"},
		{Method: http.MethodGet, Path: "/api/v1/maps/:id/history", Handler: s.mapHistory, Answers: answersJSON(mapsapp.MapHistory{}),
			Summary: "{ map, readings, chart }: the map's readings the oldest first, each with its block time, headline figures (count, top1_share, nakamoto, gini) and previous (the same reader's reading before, to compare_figures with); chart, an SVG of them; not_found for a map that isn't on the map"},
		{Method: http.MethodGet, Path: "/api/v1/maps/:id/proposals", Handler: s.mapProposals, Answers: answersJSON(proposalsAnswer{}),
			Summary: "{ proposals }: the map's proposals/v2 from its newest near-dao-proposals reading; not_found when none was read"},
	}
}

// The map's answers, which the app encodes once per index (MapService): the
// same fields, for the document.
type (
	mapAnswer struct {
		Made       string      `json:"made"`
		Source     string      `json:"source"`
		Views      []maps.View `json:"views"`
		NextCursor *string     `json:"next_cursor"`
		// Groups and pairs are relations_overview's first page (written
		// encoded by MapService; typed here for the document).
		Groups []relationsapp.OverviewGroup `json:"groups"`
		Pairs  []relationsapp.OverviewPair  `json:"pairs"`
	}
	mapViewsAnswer struct {
		Views      []maps.View `json:"views"`
		NextCursor *string     `json:"next_cursor"`
	}
	mapsAnswer struct {
		Maps       []maps.Card `json:"maps"`
		NextCursor *string     `json:"next_cursor"`
	}
	oneMapAnswer struct {
		Map maps.Card `json:"map"`
	}
	proposalsAnswer struct {
		Proposals maps.Proposals `json:"proposals"`
	}
)

func (s *Server) mapPage(c echo.Context) (mapsapp.MapPage, error) {
	p := mapsapp.MapPage{View: c.QueryParam("view"), Cursor: c.QueryParam("cursor")}
	if sess, ok := s.session(c); ok {
		p.Subject = sess.Subject
	}
	if l := c.QueryParam("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil {
			return p, errs.New(errs.BadInput, "limit must be a whole number", "from 1 to 500; leave it out for 100")
		}
		if n == 0 {
			n = -1 // asked for none: out of range, not the default
		}
		p.Limit = n
	}
	return p, nil
}

func (s *Server) mapList(list func(ctx context.Context, p mapsapp.MapPage) ([]byte, error)) echo.HandlerFunc {
	return func(c echo.Context) error {
		p, err := s.mapPage(c)
		if err != nil {
			return err
		}
		b, err := list(c.Request().Context(), p)
		if err != nil {
			return err
		}
		listCaching(c, p)
		return writeJSONBytes(c, http.StatusOK, b)
	}
}

// listCaching: a list changes whenever a flower lands, so it is always
// asked again; a signed-in person's is theirs alone (drawn through their own
// view without ?view=, and its picture addresses carry their names' hash).
func listCaching(c echo.Context, p mapsapp.MapPage) {
	if p.Subject != "" {
		c.Response().Header().Set("Cache-Control", "private, no-cache")
		return
	}
	c.Response().Header().Set("Cache-Control", "no-cache")
}

// mapID is the :id of a map's route, unescaped: a client sends it
// URL-encoded (encodeURIComponent writes its colons as %3A).
func mapID(c echo.Context) string {
	id, err := url.PathUnescape(c.Param("id"))
	if err != nil {
		return c.Param("id")
	}
	return id
}

func (s *Server) oneMap(c echo.Context) error {
	p, err := s.mapPage(c)
	if err != nil {
		return err
	}
	b, err := s.deps.Maps.OneMap(c.Request().Context(), mapID(c), p)
	if err != nil {
		return err
	}
	listCaching(c, p)
	return writeJSONBytes(c, http.StatusOK, b)
}

func (s *Server) mapHistory(c echo.Context) error {
	b, err := s.deps.Maps.History(c.Request().Context(), mapID(c))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-cache")
	return writeJSONBytes(c, http.StatusOK, b)
}

func (s *Server) mapProposals(c echo.Context) error {
	b, err := s.deps.Maps.Proposals(c.Request().Context(), mapID(c))
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-cache")
	return writeJSONBytes(c, http.StatusOK, b)
}

// mapPicture serves a drawing's picture. With a look in its address the
// bytes can never change, so it is kept a year; without one (an older
// address) it is the default look today, kept five minutes.
func (s *Server) mapPicture(c echo.Context) error {
	sha := c.Param("sha")
	if err := snapshotsapp.CheckSHA256("sha", sha); err != nil {
		return errs.New(errs.NotFound, "no drawing on the map has that hash", "use a picture address as the map's lists give it")
	}
	q := c.Request().URL.Query()
	names := q.Get("names")
	if names != "" && snapshotsapp.CheckSHA256("names", names) != nil {
		return errs.New(errs.NotFound, "no drawing on the map has that address", "use a picture address as the map's lists give it")
	}
	var drawn specs.Look
	switch q.Get("form") {
	case "", "full":
	case "tile":
		drawn.Form = specs.FormTile
	default:
		return errs.New(errs.BadInput, "form must be full or tile", "leave form out for the full picture")
	}
	switch q.Get("scheme") {
	case "", "light":
	case "dark":
		drawn.Dark = true
	default:
		return errs.New(errs.BadInput, "scheme must be light or dark", "leave scheme out for the light picture")
	}
	p, err := s.deps.Maps.PictureDrawn(c.Request().Context(), s.caller(c).Subject, sha, q.Get("look"), q.Get("view"), q.Get("paint"), names, drawn)
	if err != nil {
		return err
	}
	etag := `"` + p.RenderSHA256 + `"`
	h := c.Response().Header()
	h.Set("ETag", etag)
	switch {
	case p.Personal:
		// An address with a person's names: theirs alone, whoever asks.
		h.Set("Cache-Control", "private, no-store")
	case q.Get("look") != "":
		h.Set("Cache-Control", immutable)
	default:
		h.Set("Cache-Control", "public, max-age=300")
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	if etagMatches(c.Request().Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, "image/svg+xml; charset=utf-8", p.SVG)
}
