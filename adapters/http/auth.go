package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/domain/errs"
)

// authRoutes are sign-in, the session, invites and the person's own routes.
// They read the cookie: no CORS, never cached, and a POST from another site
// answers unauthorised.
func (s *Server) authRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/v1/auth/logout", Access: AccessSession, Summary: "ends this session and clears its cookie: { ok: true }", Handler: s.logout},
		{Method: http.MethodPost, Path: "/api/v1/auth/invite", Access: AccessSession, Summary: "body { token }: holds the invite in this session, opening an anonymous one if needed: { invite }", Handler: s.redeemInvite},
		{Method: http.MethodGet, Path: "/api/v1/auth/invite", Access: AccessSession, Summary: "the invite this session holds: { invite }, or { invite: null }", Handler: s.heldInvite},
		{Method: http.MethodGet, Path: "/api/v1/me", Access: AccessSession, Summary: "the signed-in person: { person_id, network, account, wallets, credit }; 401 to anyone else", Handler: s.me},
	}
}

type okBody struct {
	OK bool `json:"ok"`
}

func (s *Server) logout(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	if sess, ok := s.session(c); ok {
		if err := s.deps.Sessions.Close(c.Request().Context(), sess.ID); err != nil {
			return errs.New(errs.Internal, "the session could not be ended").WithCause(err)
		}
	}
	s.clearSessionCookie(c)
	return writeJSON(c, http.StatusOK, okBody{OK: true})
}

func (s *Server) me(c echo.Context) error {
	sess, ok := s.session(c)
	if !ok || !sess.Signed() {
		return errs.New(errs.Unauthorised, "sign in first", "POST /api/v1/auth/challenge, then /api/v1/auth/verify with your wallet's NEP-413 signature")
	}
	return writeJSON(c, http.StatusOK, meBody{PersonID: sess.Subject, Wallets: []any{}})
}

type meBody struct {
	PersonID string  `json:"person_id"`
	Network  *string `json:"network"`
	Account  *string `json:"account"`
	Wallets  []any   `json:"wallets"`
	Credit   any     `json:"credit"`
}

type redeemBody struct {
	Token string `json:"token"`
}

func (s *Server) redeemInvite(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	var body redeemBody
	if err := decodeBody(c, &body); err != nil {
		return err
	}
	if body.Token == "" {
		return errs.New(errs.BadInput, "token is required", "send { \"token\": \"petal_invite_…\" }")
	}
	ctx := c.Request().Context()
	// Check before opening a session: a refused token leaves nothing behind.
	if _, err := s.deps.Invites.Check(ctx, body.Token); err != nil {
		return err
	}
	sess, err := s.ensureSession(c)
	if err != nil {
		return err
	}
	out, err := s.deps.Invites.Redeem(ctx, sess.ID, body.Token)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) heldInvite(c echo.Context) error {
	sess, _ := s.session(c)
	out, err := s.deps.Invites.Held(c.Request().Context(), sess.ID)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}
