package httpapi

// Sessions at the HTTP door. Other areas' handlers use these helpers:
//
//   - s.caller(c) is the app.Caller of a request; Subject and Session are
//     filled when the request carries a valid session cookie.
//   - s.session(c) is the request's session, if any (read once per request).
//   - s.ensureSession(c) returns the request's session, opening an anonymous
//     one and setting its cookie when there is none (a chat on a real model,
//     redeeming an invite).
//   - s.checkOrigin(c) refuses a browser request from another site with 401
//     unauthorised, per the contract's "Origin" paragraph. Call it first in
//     POST handlers of auth routes, a chat on a real model and stop.
//
// The cookie: HttpOnly, SameSite=Lax, Path=/, lasting as long as the session;
// __Host-petal_session and Secure when PETAL_API is https://, else
// petal_session. PETAL_API alone decides the cookie's name and the allowed
// Origin; request headers never do.

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
)

const sessionContextKey = "petal.session"

type requestSession struct {
	s  people.Session
	ok bool
}

// session is the request's valid session, read from the cookie once per
// request. Every route but a Sessionless one has read it before its handler
// runs (readSessionFirst), and refused the request if the store failed; here
// a store failure (on a Sessionless route) is logged and reads as none.
func (s *Server) session(c echo.Context) (people.Session, bool) {
	if v, ok := c.Get(sessionContextKey).(requestSession); ok {
		return v.s, v.ok
	}
	sess, ok, err := s.resolveSession(c)
	if err != nil {
		s.deps.Log.ErrorContext(c.Request().Context(), "reading the session", "err", err)
	}
	return sess, ok
}

// resolveSession reads the cookie's session and remembers the answer for
// the request; err is only a store failure, which is not remembered.
func (s *Server) resolveSession(c echo.Context) (people.Session, bool, error) {
	if s.deps.Sessions == nil {
		return people.Session{}, false, nil
	}
	ck, err := c.Cookie(s.deps.Config.SessionCookieName())
	if err != nil || ck.Value == "" {
		// Nothing to remember: looking again is as cheap as a stored answer.
		return people.Session{}, false, nil
	}
	sess, ok, err := s.deps.Sessions.Resolve(c.Request().Context(), ck.Value)
	if err != nil {
		return people.Session{}, false, err
	}
	c.Set(sessionContextKey, requestSession{s: sess, ok: ok})
	return sess, ok, nil
}

// readSessionFirst reads a request's session before its handler runs, so a
// store that fails answers 503 source_failed. Read lazily, a failure would
// read as "no session": a signed-in person answered 401 "sign in first",
// or handed an anonymous session over their own cookie.
func (s *Server) readSessionFirst(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if _, _, err := s.resolveSession(c); err != nil {
			return errs.New(errs.SourceFailed, "your session can't be read just now",
				"the database isn't answering; try again in a few seconds").WithRetryAfter(sessionRetryAfterS).WithCause(err)
		}
		return next(c)
	}
}

// sessionRetryAfterS is the Retry-After of a session that couldn't be read:
// about how long a database takes to come back from a failover.
const sessionRetryAfterS = 5

// rememberSession makes sess the request's session from here on.
func (s *Server) rememberSession(c echo.Context, sess people.Session) {
	c.Set(sessionContextKey, requestSession{s: sess, ok: true})
}

// ensureSession is the request's session, opening an anonymous one (and
// setting its cookie) when the request has none.
func (s *Server) ensureSession(c echo.Context) (people.Session, error) {
	if sess, ok := s.session(c); ok {
		return sess, nil
	}
	token, sess, err := s.deps.Sessions.OpenAnonymous(c.Request().Context())
	if err != nil {
		return people.Session{}, errs.New(errs.Internal, "a session could not be opened").WithCause(err)
	}
	s.setSessionCookie(c, token, sess)
	s.rememberSession(c, sess)
	return sess, nil
}

// sessionOpener lets the app open a session for caller when its request has
// passed every check that can refuse it (app.Caller.Own): a refused request
// leaves no session behind.
func (s *Server) sessionOpener(c echo.Context, caller toolkit.Caller) toolkit.Caller {
	if caller.Subject != "" || s.deps.Sessions == nil {
		return caller
	}
	caller.OpenSession = func(context.Context) (string, string, error) {
		sess, err := s.ensureSession(c)
		return sess.Subject, sess.ID, err
	}
	return caller
}

// setSessionCookie hands the token to the browser, once.
func (s *Server) setSessionCookie(c echo.Context, token string, sess people.Session) {
	c.SetCookie(&http.Cookie{
		Name:     s.deps.Config.SessionCookieName(),
		Value:    token,
		Path:     "/",
		Expires:  sess.ExpiresAt,
		MaxAge:   int(sess.ExpiresAt.Sub(sess.CreatedAt).Seconds()),
		HttpOnly: true,
		Secure:   s.deps.Config.Secure(),
		SameSite: http.SameSiteLaxMode,
	})
}

// clearSessionCookie tells the browser to forget the session.
func (s *Server) clearSessionCookie(c echo.Context) {
	c.SetCookie(&http.Cookie{
		Name:     s.deps.Config.SessionCookieName(),
		Value:    "",
		Path:     "/",
		MaxAge:   -1,
		HttpOnly: true,
		Secure:   s.deps.Config.Secure(),
		SameSite: http.SameSiteLaxMode,
	})
	c.Set(sessionContextKey, requestSession{})
}

// checkOrigin answers 401 unauthorised for a request a browser sent from
// another site. The site's origin is PETAL_API's. On a local site (no
// PETAL_API, or one on localhost, 127.0.0.1 or ::1), a local page whose origin
// matches the Host the request asked is the site too. A request with no Origin
// and no "Sec-Fetch-Site: cross-site" is not from a browser page, and passes.
func (s *Server) checkOrigin(c echo.Context) error {
	if originAllowed(s.deps.Config.SiteOrigin(), s.deps.Config.LocalSite(), c.Request()) {
		return nil
	}
	return errs.New(errs.Unauthorised, "this request came from another site",
		"send it from the site's own pages, or from a client that is not a browser")
}

func originAllowed(siteOrigin string, localSite bool, r *http.Request) bool {
	origin := strings.TrimSpace(r.Header.Get("Origin"))
	if origin == "" {
		return !strings.EqualFold(strings.TrimSpace(r.Header.Get("Sec-Fetch-Site")), "cross-site")
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.User != nil {
		return false // "null" and anything that is not an origin
	}
	got := strings.ToLower(u.Scheme + "://" + u.Host)
	if siteOrigin != "" && got == siteOrigin {
		return true
	}
	if localSite && config.IsLocalHost(u.Hostname()) && strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return false
}
