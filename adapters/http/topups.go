package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/moneyapp"
)

// topUpRoutes are paying with anything through NEAR Intents' 1Click.
func (s *Server) topUpRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/v1/pay/tokens", Access: AccessOpen,
			Summary: "what a person can pay from, as NEAR Intents' 1Click lists it: { tokens: [{ asset, chain, symbol, decimals, usd }] }", Handler: s.payTokens, Answers: answersJSON(moneyapp.TokensBody{})},
		{Method: http.MethodPost, Path: "/api/v1/pay/intents", Access: AccessSession,
			Summary: "body { usd, origin_asset, refund_to }: a 1Click quote for usd dollars of USDC onto the person's credit: { top_up }", Handler: s.createTopUp, Body: moneyapp.TopUpInput{}, Answers: answersJSON(moneyapp.TopUpBody{})},
		{Method: http.MethodGet, Path: "/api/v1/pay/intents/:deposit_address", Access: AccessSession,
			Summary: "where the person's top-up stands, credited once at SUCCESS: { top_up, credit }", Handler: s.checkTopUp, Answers: answersJSON(moneyapp.TopUpStatusBody{})},
	}
}

func (s *Server) payTokens(c echo.Context) error {
	out, err := s.deps.TopUps.Tokens(c.Request().Context())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) createTopUp(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	if _, err := s.signedIn(c); err != nil {
		return err
	}
	var in moneyapp.TopUpInput
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	sess, _ := s.session(c)
	out, err := s.deps.TopUps.CreateTopUp(c.Request().Context(), sess, in)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) checkTopUp(c echo.Context) error {
	if _, err := s.signedIn(c); err != nil {
		return err
	}
	sess, _ := s.session(c)
	out, err := s.deps.TopUps.CheckTopUp(c.Request().Context(), sess, c.Param("deposit_address"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}
