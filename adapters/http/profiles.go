package httpapi

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/peopleapp"
	"github.com/petal-near/petal/domain/profiles"
)

// ProfileBodyLimit is PUT /api/v1/me/profile's: two pictures of 2 MiB as
// base64 data: URLs (2,796,226 characters each with their prefix), the
// text members at their limits written with escapes, and room to spare.
const ProfileBodyLimit = 2*(28+4*((profiles.MaxPictureBytes+2)/3)) + 1<<20

// profileRoutes are a person's profile and the pictures profiles show
// (docs/people.md).
func (s *Server) profileRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/v1/me/profile", Access: AccessSession, Handler: s.myProfile, Answers: answersJSON(peopleapp.ProfileAnswer{}),
			Summary: "{ profile, updated_at, published }: the person's profile in NEAR Social's shape, null until they keep one; published stays null. 401 for a visitor"},
		{Method: http.MethodPut, Path: "/api/v1/me/profile", Access: AccessSession, Handler: s.keepProfile, BodyLimit: ProfileBodyLimit, Body: peopleapp.KeepProfileBody{}, Answers: answersJSON(peopleapp.ProfileAnswer{}),
			Fails:   []int{http.StatusRequestEntityTooLarge},
			Summary: "body { profile }, the whole of it: signed in, from the site's own pages. { name?, about?, avatar?, banner?, location?, links? }, each null to clear; avatar and banner a data:image/png, jpeg or webp base64 picture (at most 2 MiB, 4,096 px a side), this site's /api/v1/media/… address or a fastfs:// one. Anything else is 400 with the reason"},
		{Method: http.MethodGet, Path: "/api/v1/media/:file", Access: AccessOpen, Handler: s.media, Head: true,
			Answers: []Answer{{Media: "image/*", Says: "the picture: image/png, image/jpeg, image/webp or image/svg+xml"}, notModified},
			Summary: "a profile's picture or a map's logo (its mark's logo.url) by its name, /api/v1/media/<sha256>.<png|jpg|webp|svg> (svg: a map's logo only), to anyone: immutable, nosniff, a CSP that runs nothing and loads nothing"},
	}
}

func (s *Server) myProfile(c echo.Context) error {
	sess, _ := s.session(c)
	out, err := s.deps.Profiles.Mine(c.Request().Context(), sess.Subject)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) keepProfile(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	person, err := s.signedIn(c)
	if err != nil {
		return err
	}
	// Limited before the body, up to ProfileBodyLimit, is read.
	if err := s.deps.Profiles.Limit(c.Request().Context(), person); err != nil {
		return err
	}
	var body peopleapp.KeepProfileBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	sess, _ := s.session(c)
	out, err := s.deps.Profiles.Keep(c.Request().Context(), sess, body)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) media(c echo.Context) error {
	p, err := s.deps.Profiles.Picture(c.Request().Context(), c.Param("file"))
	if err != nil {
		return err
	}
	h := c.Response().Header()
	// Named by its content: the same address always answers the same bytes.
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", `"`+p.SHA256+`"`)
	h.Set("X-Content-Type-Options", "nosniff")
	// A picture, never a page, even opened alone. An SVG (a map's logo) is
	// a document: opened alone it may draw with its own inline styles and
	// nothing else (no script, no load, a unique origin), as GitHub's camo
	// serves one.
	if p.MediaType == profiles.SVG {
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	} else {
		h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	}
	h.Set("Content-Length", strconv.Itoa(len(p.Bytes)))
	return c.Blob(http.StatusOK, p.MediaType, p.Bytes)
}
