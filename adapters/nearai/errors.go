package nearai

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/petal-near/petal/domain/errs"
)

// budgetMessages are the plain words for each 402 kind; NEAR AI's own message
// (with its figures) stays out.
var budgetMessages = map[string]string{
	"api_key_limit_exceeded": "Petals' agent has used all that its model key may spend",
	"insufficient_credits":   "Petals' agent's model account does not have enough credit left for this",
	"no_credits":             "Petals' agent's model account has no credit left",
	"no_limit_configured":    "Petals' agent's model sponsor has not set a spending limit, so it cannot spend",
}

// BudgetMessage is the plain message for a 402 kind.
func BudgetMessage(kind string) string {
	if m, ok := budgetMessages[kind]; ok {
		return m
	}
	return "Petals' agent's model account refused to spend more, for a reason it did not name"
}

func statusError(status int, body []byte) error {
	var we wireError
	_ = json.Unmarshal(body, &we)
	switch {
	case status == http.StatusPaymentRequired:
		return errs.New(errs.BudgetExhausted, BudgetMessage(we.Error.Type),
			"bring your own agent: /skill.md and /connect").WithCause(fmt.Errorf("nearai 402 %s", we.Error.Type))
	case status == http.StatusTooManyRequests || status >= 500:
		return &providerError{errs.New(errs.SourceFailed, "the model did not answer", "try again in a moment").
			WithCause(fmt.Errorf("nearai %d %s", status, we.Error.Type))}
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return errs.New(errs.SourceFailed, "the model refused this server's key", "tell the operator").WithCause(fmt.Errorf("nearai %d %s", status, we.Error.Type))
	}
	return errs.New(errs.SourceFailed, "the model could not take this request", "try again, perhaps with a shorter message").
		WithCause(fmt.Errorf("nearai %d %s: %s", status, we.Error.Type, we.Error.Message))
}
