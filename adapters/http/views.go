package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/viewsapp"
	"github.com/petal-near/petal/domain/errs"
)

// viewRoutes are people's views (docs/people.md): a person's own, read and
// kept with their session, and any kept view by its hash, to anyone.
func (s *Server) viewRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/v1/me/view", Access: AccessSession, Handler: s.myView, Answers: answersJSON(viewsapp.ViewAnswer{}), Takes: []Credential{Anyone, Session},
			Summary: "{ view, hash }: the person's own view (view/v1), or the default for a visitor and anyone who hasn't kept one"},
		{Method: http.MethodPut, Path: "/api/v1/me/view", Access: AccessSession, Handler: s.keepView, Body: viewsapp.KeepViewBody{}, Answers: answersJSON(viewsapp.ViewAnswer{}),
			Summary: "body { view }: signed in, from the site's own pages; the view (view/v1) becomes the person's, kept by its hash: { view, hash }. 401 for a visitor"},
		{Method: http.MethodGet, Path: "/api/v1/views/:hash", Access: AccessOpen, Handler: s.viewByHash, Answers: answersJSON(viewsapp.ViewAnswer{}),
			Summary: "{ view, hash }: any kept view by its hash, and the default's without anyone keeping it; not_found otherwise"},
	}
}

func (s *Server) myView(c echo.Context) error {
	sess, _ := s.session(c)
	out, err := s.deps.Views.Mine(c.Request().Context(), sess.Subject)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) keepView(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	sess, ok := s.session(c)
	if !ok || !sess.Signed() {
		return errs.New(errs.Unauthorised, "sign in first", "POST /api/v1/auth/challenge, then /api/v1/auth/verify with your wallet's NEP-413 signature")
	}
	var body viewsapp.KeepViewBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	out, err := s.deps.Views.Keep(c.Request().Context(), sess, body.View)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) viewByHash(c echo.Context) error {
	out, err := s.deps.Views.ByHash(c.Request().Context(), c.Param("hash"))
	if err != nil {
		return err
	}
	// A view is named by its content: the same hash always answers the same.
	c.Response().Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	return writeJSON(c, http.StatusOK, out)
}
