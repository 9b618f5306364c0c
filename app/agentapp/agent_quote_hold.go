package agentapp

import (
	"context"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
)

// leftFor is what payer's accounts have left, the least of them.
func (a *AgentService) leftFor(ctx context.Context, p credit.Payer) (credit.Micros, error) {
	var left credit.Micros
	for i, spec := range p.Accounts(a.clock.Now()) {
		acct, err := a.ledger.Account(ctx, spec.ID)
		switch {
		case errs.Is(err, errs.NotFound) && spec.Create:
			acct = credit.Account{ID: spec.ID, Kind: spec.Kind, Limit: spec.Limit}
		case err != nil:
			return 0, err
		}
		if i == 0 || acct.Left() < left {
			left = acct.Left()
		}
	}
	return left, nil
}

// bindQuote checks the chat's quote, when it names one, and binds payer to
// it: unknown is 404; used, expired, or for other messages or another run
// is 409 with a hint to ask again. Nothing is used yet (useQuote does, once
// every other check has passed).
func (a *AgentService) bindQuote(ctx context.Context, req ChatRequest, thread []runs.Message, settings runs.Settings, payer *credit.Payer) (*credit.Payer, *credit.ChatQuote, error) {
	if req.QuoteID == "" {
		return payer, nil, nil
	}
	again := "ask for a new quote for the chat"
	q, err := a.quotes.ChatQuote(ctx, req.QuoteID)
	switch {
	case err != nil:
		return nil, nil, err
	case q.UsedAt != nil:
		a.quoted.Add(1, "refused_used")
		return nil, nil, errs.Newf(errs.Conflict, "quote %s was already used by a chat", q.ID).WithHint(again)
	case !a.clock.Now().Before(q.ExpiresAt):
		a.quoted.Add(1, "refused_expired")
		return nil, nil, errs.Newf(errs.Conflict, "quote %s expired at %s", q.ID, q.ExpiresAt.UTC().Format(time.RFC3339)).WithHint(again)
	case q.RunID != req.RunID || q.ThreadSHA256 != chatSHA256(thread, settings):
		a.quoted.Add(1, "refused_other")
		return nil, nil, errs.Newf(errs.Conflict, "quote %s is for other messages or settings", q.ID).WithHint(again + " with these messages")
	}
	if payer != nil {
		bound := payer.BindQuote(q.ID, q.Max)
		payer = &bound
	}
	return payer, &q, nil
}

// useQuote uses the chat's quote, once; one used meanwhile is 409.
func (a *AgentService) useQuote(ctx context.Context, q *credit.ChatQuote) error {
	if q == nil {
		return nil
	}
	used, err := a.quotes.UseChatQuote(ctx, q.ID, q.ThreadSHA256, a.clock.Now())
	if err != nil {
		return err
	}
	if !used {
		a.quoted.Add(1, "refused_used")
		return errs.Newf(errs.Conflict, "quote %s was already used by a chat", q.ID).WithHint("ask for a new quote for the chat")
	}
	a.quoted.Add(1, "bound")
	return nil
}
