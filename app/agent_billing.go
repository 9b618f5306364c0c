package app

import (
	"context"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// maxAnswerTokens is what one model call may write.
const maxAnswerTokens = 2048

// reconcileTimeout bounds how long a chat waits on NEAR AI's bills.
const reconcileTimeout = 10 * time.Second

// reconcileFirst charges a person paying from their own credit NEAR AI's
// bill for their earlier calls before this chat spends more, as GET
// /api/v1/me/usage does. It never holds the chat up for long nor fails it:
// what isn't reconciled now is next time.
func (a *AgentService) reconcileFirst(ctx context.Context, runID string, payer *credit.Payer) {
	if a.pay == nil || payer == nil || payer.Kind != credit.PayPerson {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, reconcileTimeout)
	defer cancel()
	if err := a.pay.ReconcilePending(ctx, payer.PersonID); err != nil {
		a.log.Warn("agent run: reconciling the person's calls before the chat", "run", runID, "err", err)
	}
}

// modelRequest is the request a call on thread offering tools sends.
func modelRequest(thread []runs.Message, tools []ports.ModelTool) ports.ModelRequest {
	msgs := append([]runs.Message{{Role: runs.RoleSystem, Content: systemMessage}}, thread...)
	return ports.ModelRequest{Messages: msgs, Tools: tools, MaxTokens: maxAnswerTokens}
}

// FirstCallWorstCase is the model bill a new chat asking question holds for
// its first call (before base fees and tip): what the ledger must have left
// for the chat to start.
func (a *AgentService) FirstCallWorstCase(question string) credit.Micros {
	return a.model.WorstCase(modelRequest([]runs.Message{{Role: runs.RoleUser, Content: question}}, a.modelTools()))
}

// complete makes one model call and counts it.
func (a *AgentService) complete(ctx context.Context, c *chat, tools []ports.ModelTool) (ports.ModelAnswer, error) {
	req := modelRequest(c.thread, tools)
	var hold credit.Hold
	if c.payer != nil {
		// Every model call is held on the ledger first, then settled; every
		// other way out (an error, a stop, a timeout, a panic) releases it.
		// Not cancelled by a stop half-way: a hold written but not seen would
		// stay held until a restart.
		h, err := a.ledger.ReserveCall(c.wctx, *c.payer, c.run.ID, string(a.process), a.model.WorstCase(req), c.toolsRun)
		if err != nil {
			return ports.ModelAnswer{}, err
		}
		hold = h
		defer func() {
			if err := a.ledger.Release(c.wctx, hold); err != nil {
				a.log.Error("agent: releasing a hold", "run", c.run.ID, "err", err)
			}
		}()
	}
	if c.picked == "" {
		c.picked = req.Model
		if c.picked == "" {
			c.picked = a.model.Name() // the provider's own model
		}
	}
	ans, err := a.model.Complete(ctx, req)
	if err != nil {
		// A failed or cut call counts what it is known to have cost: a call
		// cut after NEAR AI had it (a stop, the chat's time) bills its input
		// at least, so it is charged that (ans.Cost), and reconciling with
		// NEAR AI's bill corrects it when its inference id is known. Nothing
		// known: the hold goes back.
		if ans.Cost > 0 && c.payer != nil {
			usage := credit.Usage{InferenceID: ans.InferenceID, Model: ans.Model, TokensIn: int(ans.Tokens.In), TokensCached: int(ans.Tokens.Cached)}
			// No turn ends and the tools run since the last call are not
			// charged: the chat was cut.
			if serr := a.ledger.SettleCall(c.wctx, hold, ans.Cost, usage, credit.CallContext{}); serr != nil {
				a.log.Error("agent: charging a cut call", "run", c.run.ID, "err", serr)
			}
			c.tokens.Add(ans.Tokens)
			c.cost += ans.Cost
		}
		if ctx.Err() != nil {
			return ans, ctx.Err()
		}
		return ans, err
	}
	if c.payer != nil {
		// SettleCall keeps the call's usage/v1 record on a person's credit (GET /api/v1/me/usage).
		usage := credit.Usage{InferenceID: ans.InferenceID, Model: ans.Model,
			TokensIn: int(ans.Tokens.In), TokensCached: int(ans.Tokens.Cached), TokensOut: int(ans.Tokens.Out)}
		// A turn ends with an answer that asks for no tool, or that was
		// offered none: the loop stops there (switch C).
		cc := credit.CallContext{Tools: c.toolsRun, EndsTurn: len(ans.Message.ToolCalls) == 0 || tools == nil}
		if err := a.ledger.SettleCall(c.wctx, hold, ans.Cost, usage, cc); err != nil {
			return ans, err
		}
		c.toolsRun = nil
	}
	c.turns++
	c.tokens.Add(ans.Tokens)
	c.cost += ans.Cost
	if ans.Model != "" {
		c.model = ans.Model
	}
	c.fallback = c.fallback || ans.FallbackUsed
	ans.Message.Role = runs.RoleAssistant
	c.last = &ans
	return ans, nil
}
