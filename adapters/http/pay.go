package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/moneyapp"
)

// payRoutes are the price, the person's tip and usage, and paying in NEAR.
func (s *Server) payRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/v1/price", Access: AccessOpen, Summary: "what a person pays, price/v2: { price, hash }", Handler: s.price, Answers: answersJSON(moneyapp.PriceBody{})},
		{Method: http.MethodGet, Path: "/api/v1/me/tip", Access: AccessSession, Summary: "the person's tip: { tip_percent, min_percent, max_percent, step_percent }", Handler: s.getTip, Answers: answersJSON(moneyapp.TipBody{})},
		{Method: http.MethodPut, Path: "/api/v1/me/tip", Access: AccessSession, Summary: "body { tip_percent } (null puts it back): the person's tip", Handler: s.putTip, Body: moneyapp.TipInput{}, Answers: answersJSON(moneyapp.TipBody{})},
		{Method: http.MethodGet, Path: "/api/v1/me/usage", Access: AccessSession, Summary: "every model call charged to the person, newest first (usage/v1): { usage, totals }", Handler: s.usage, Answers: answersJSON(moneyapp.UsageBody{})},
		{Method: http.MethodGet, Path: "/api/v1/pay", Access: AccessSession, Summary: "where to send NEAR: { network, receiver, near_usd }", Handler: s.payInfo, Answers: answersJSON(moneyapp.PayInfoBody{})},
		{Method: http.MethodPost, Path: "/api/v1/pay", Access: AccessSession, Summary: "body { network, account_id, tx_hash }: counts a NEAR transfer onto the person's credit, once: { added_usd, added_near, near_usd, credit }", Handler: s.pay, Body: moneyapp.PayInput{}, Answers: answersJSON(moneyapp.PayBody{})},
	}
}

func (s *Server) price(c echo.Context) error {
	out, err := s.deps.Pay.Price()
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) getTip(c echo.Context) error {
	person, err := s.signedIn(c)
	if err != nil {
		return err
	}
	out, err := s.deps.Pay.Tip(c.Request().Context(), person)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) putTip(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	person, err := s.signedIn(c)
	if err != nil {
		return err
	}
	var in moneyapp.TipInput
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	out, err := s.deps.Pay.SetTip(c.Request().Context(), person, in)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) usage(c echo.Context) error {
	person, err := s.signedIn(c)
	if err != nil {
		return err
	}
	out, err := s.deps.Pay.Usage(c.Request().Context(), person)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) payInfo(c echo.Context) error {
	sess, _ := s.session(c)
	out, err := s.deps.Pay.Info(c.Request().Context(), sess)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) pay(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	if _, err := s.signedIn(c); err != nil {
		return err
	}
	var in moneyapp.PayInput
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	sess, _ := s.session(c)
	out, err := s.deps.Pay.Pay(c.Request().Context(), sess, in)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}
