package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/app/peopleapp"
	"github.com/petal-near/petal/domain/errs"
)

// authRoutes are sign-in, the session, invites and the person's own routes.
// They read the cookie: no CORS, never cached, and a POST from another site
// answers unauthorised.
func (s *Server) authRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/v1/auth/challenge", Access: AccessSession, Summary: "a NEP-413 sign-in challenge: { nonce, message, recipient, expires_at }; the nonce is good once, for 5 minutes", Handler: s.challenge,
			Answers: answersJSON(peopleapp.ChallengeBody{}), Takes: []Credential{Anyone, Session}},
		{Method: http.MethodPost, Path: "/api/v1/auth/verify", Access: AccessSession, Summary: "body { network, proof }: signs in with a wallet's NEP-413 proof and sets the session: { person_id, network, wallets, claimed_runs, claimed_explorations }", Handler: s.verify,
			Body: peopleapp.VerifyInput{}, Answers: answersJSON(peopleapp.VerifyBody{}), Takes: []Credential{Anyone, Session}},
		{Method: http.MethodPost, Path: "/api/v1/auth/logout", Access: AccessSession, Summary: "ends this session and clears its cookie: { ok: true }", Handler: s.logout, Answers: answersJSON(okBody{}), Takes: []Credential{Anyone, Session}},
		{Method: http.MethodPost, Path: "/api/v1/auth/invite", Access: AccessSession, Summary: "body { token }: holds the invite in this session, opening an anonymous one if needed: { invite }", Handler: s.redeemInvite,
			Body: redeemBody{}, Answers: answersJSON(moneyapp.InviteBody{}), Takes: []Credential{Anyone, Session}},
		{Method: http.MethodGet, Path: "/api/v1/auth/invite", Access: AccessSession, Summary: "the invite this session holds: { invite }, or { invite: null }", Handler: s.heldInvite, Answers: answersJSON(moneyapp.InviteBody{}), Takes: []Credential{Anyone, Session}},
		{Method: http.MethodPost, Path: "/api/v1/me/wallets", Access: AccessSession, Summary: "signed in, same-origin, body { network, proof } as verify's: attaches another wallet to this person (SYS-023): { person_id, attached, already, wallets }; a wallet bound to another person is 409 conflict and nothing is merged", Handler: s.attachWallet,
			Body: peopleapp.VerifyInput{}, Answers: answersJSON(peopleapp.AttachBody{}), Fails: []int{http.StatusConflict}},
		{Method: http.MethodGet, Path: "/api/v1/me", Access: AccessSession, Summary: "the signed-in person: { person_id, network, account, wallets, credit }; 401 to anyone else", Handler: s.me, Answers: answersJSON(peopleapp.MeBody{})},
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
	me, err := s.deps.SignIn.Me(c.Request().Context(), sess)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, me)
}

func (s *Server) challenge(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	if err := s.deps.SignIn.Limit(c.Request().Context(), ClientAddress(c.Request(), s.deps.Config.Public, s.deps.Config.TrustedProxies)); err != nil {
		return err
	}
	out, err := s.deps.SignIn.Challenge(c.Request().Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) verify(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	if err := s.deps.SignIn.Limit(c.Request().Context(), ClientAddress(c.Request(), s.deps.Config.Public, s.deps.Config.TrustedProxies)); err != nil {
		return err
	}
	var in peopleapp.VerifyInput
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	old, _ := s.session(c)
	token, out, err := s.deps.SignIn.Verify(c.Request().Context(), old, in)
	if err != nil {
		return err
	}
	sess, ok, err := s.deps.Sessions.Resolve(c.Request().Context(), token)
	if err != nil || !ok {
		return errs.New(errs.Internal, "the new session could not be read").WithCause(err)
	}
	s.setSessionCookie(c, token, sess)
	s.rememberSession(c, sess)
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) attachWallet(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	sess, ok := s.session(c)
	if !ok || !sess.Signed() {
		return errs.New(errs.Unauthorised, "sign in first", "attach another wallet once signed in with one: /signin?attach=1")
	}
	if err := s.deps.SignIn.Limit(c.Request().Context(), ClientAddress(c.Request(), s.deps.Config.Public, s.deps.Config.TrustedProxies)); err != nil {
		return err
	}
	var in peopleapp.VerifyInput
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	out, err := s.deps.SignIn.Attach(c.Request().Context(), sess, in)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
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

// signedIn is the request's person, or 401 unauthorised.
func (s *Server) signedIn(c echo.Context) (string, error) {
	sess, ok := s.session(c)
	if !ok || !sess.Signed() {
		return "", errs.New(errs.Unauthorised, "sign in first", "POST /api/v1/auth/challenge, then /api/v1/auth/verify with your wallet's NEP-413 signature")
	}
	return sess.Subject, nil
}
