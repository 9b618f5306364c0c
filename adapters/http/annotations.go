package httpapi

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/annotationsapp"
	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/domain/errs"
)

// Annotation routes (docs/annotations.md). An exploration's are tools behind
// the exploration door (session, link or id); a person's own read the
// session alone.
func (s *Server) annotationRoutes() []Route {
	if s.deps.Explorations == nil || s.deps.Annotations == nil {
		return nil
	}
	const base = "/api/v1/explorations"
	return []Route{
		{Method: http.MethodPost, Path: base + "/:ref/annotations", Tool: "add_annotation", Access: AccessSession, PathAs: refIsExploration,
			Handler: s.explorationTool("add_annotation", true)},
		{Method: http.MethodGet, Path: base + "/:ref/annotations", Tool: "list_annotations", Access: AccessSession, PathAs: refIsExploration,
			Handler: s.explorationTool("list_annotations", false)},
		{Method: http.MethodPost, Path: base + "/:ref/layers", Tool: "keep_layer", Access: AccessSession, PathAs: refIsExploration,
			Handler: s.explorationTool("keep_layer", true)},
		{Method: http.MethodGet, Path: base + "/:ref/layers", Tool: "list_layers", Access: AccessSession, PathAs: refIsExploration,
			Handler: s.explorationTool("list_layers", false)},
		{Method: http.MethodPost, Path: base + "/:ref/datasets/fork", Tool: "fork_dataset", Access: AccessSession, PathAs: refIsExploration,
			Handler: s.explorationTool("fork_dataset", true)},
		{Method: http.MethodGet, Path: "/api/v1/me/annotations", Access: AccessSession, Handler: s.myAnnotations, Query: []string{"verb", "about", "cursor", "limit"}, Answers: answersJSON(annotationsapp.AnnotationList{}),
			Summary: "signed in: everything the person and their agents keep about accounts, oldest first (?verb=named: the names drawn on their petals; ?about=, ?cursor=, ?limit=): " +
				"{ annotations: [{ claim, exploration, added_at }], next_cursor }; 401 for a visitor"},
		{Method: http.MethodPost, Path: "/api/v1/me/annotations", Access: AccessSession, Handler: s.addMyAnnotations, Body: annotationsapp.MeAnnotationsInput{}, Answers: answersJSON(annotationsapp.MeAdded{}),
			Summary: "signed in with a wallet, same-origin: { annotations: [claim/v2 without id and by], conversation? }, all or none, their account as by: " +
				"{ exploration, added, existed, ids }; 404 for a conversation that isn't theirs"},
	}
}

// siteClaimRoutes: the site's own claims about a map, the same for every
// viewer, so open to any site and never per person.
func (s *Server) siteClaimRoutes() []Route {
	if s.deps.SiteClaims == nil {
		return nil
	}
	return []Route{{Method: http.MethodGet, Path: "/api/v1/maps/:id/claims", Access: AccessOpen, Handler: s.mapClaims, Answers: answersJSON(relationsapp.MapClaims{}),
		Summary: "{ about, claims }: the site's own checked claims (claim/v3) whose subject is one of the map's accounts or its address, oldest first; " +
			"the same for every viewer; not_found for a map that isn't on the map"}}
}

func (s *Server) mapClaims(c echo.Context) error {
	id, err := url.PathUnescape(c.Param("id"))
	if err != nil {
		return errs.New(errs.NotFound, "no such map")
	}
	out, err := s.deps.SiteClaims.ForMap(c.Request().Context(), id)
	if err != nil {
		return err
	}
	// The same answer for everyone until the next deploy changes the file.
	c.Response().Header().Set("Cache-Control", "public, max-age=300")
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) myAnnotations(c echo.Context) error {
	var q annotationsapp.MeAnnotationsQuery
	for name, vs := range c.QueryParams() {
		if len(vs) != 1 {
			return errs.Newf(errs.BadInput, "query parameter %s is given more than once", name)
		}
		switch v := vs[0]; name {
		case "verb":
			q.Verb = v
		case "about":
			q.About = v
		case "cursor":
			q.Cursor = v
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil {
				return errs.Newf(errs.BadInput, "query parameter limit: expected a whole number, got %q", v)
			}
			q.Limit = n
		default:
			return errs.Newf(errs.BadInput, "unknown query parameter %s", name).WithHint("verb, about, cursor and limit")
		}
	}
	out, err := s.deps.Annotations.Mine(c.Request().Context(), s.caller(c), q)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) addMyAnnotations(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	caller := s.caller(c)
	if caller.Subject == "" {
		return errs.New(errs.Unauthorised, "sign in first")
	}
	if err := s.deps.Registry.Limit(c.Request().Context(), caller.Address); err != nil {
		return err
	}
	var in annotationsapp.MeAnnotationsInput
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	out, err := s.deps.Annotations.AddMine(c.Request().Context(), caller, in)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}
