package agentapp

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// maxAnswerTokens is what one model call may write.
const maxAnswerTokens = 2048

// reconcileFirst charges a person paying from their own credit NEAR AI's
// bill for their earlier calls before this chat spends more, as their usage
// does, and sharing its turn: at most once every BillingAskEvery per person
// across replicas, one ask at a time in this process, so chats sent in a
// loop can't make NEAR AI's bills be asked for on every one. It never holds
// the chat up for long nor fails it: what isn't reconciled now is next time.
func (a *AgentService) reconcileFirst(ctx context.Context, runID string, payer *credit.Payer) {
	if a.pay == nil || payer == nil || payer.Kind != credit.PayPerson {
		return
	}
	if err := a.pay.ReconcileSpaced(ctx, payer.PersonID); err != nil {
		a.log.Warn("agent run: reconciling the person's calls before the chat", "run", runID, "err", err)
	}
}

// modelRequest is the request a call on thread offering tools sends, on the
// model and effort the conversation picked; the system message says the
// conversation's name (title), or that it has none yet.
func modelRequest(thread []runs.Message, tools []ports.ModelTool, settings runs.Settings, title string) ports.ModelRequest {
	msgs := append([]runs.Message{{Role: runs.RoleSystem, Content: systemMessage + "\n" + nameLine(title)}}, thread...)
	return ports.ModelRequest{Model: settings.Model, Effort: settings.Effort, Messages: msgs, Tools: tools, MaxTokens: maxAnswerTokens}
}

// nameLine tells the model the conversation's name, so it names it with its
// first answer and renames it only when the subject changes. The name is
// quoted as data.
func nameLine(title string) string {
	if title == "" {
		return "This conversation has no name yet: name it with name_conversation in the same message as your answer."
	}
	quoted, _ := json.Marshal(title)
	return "This conversation is named " + string(quoted) + "; rename it with name_conversation only when its subject changes."
}

// FirstCallWorstCase is the least model bill a new chat asking question
// must be able to hold for its first call (before base fees and tip): what
// the ledger must have left for the chat to start.
func (a *AgentService) FirstCallWorstCase(question string) credit.Micros {
	req := modelRequest([]runs.Message{{Role: runs.RoleUser, Content: question}}, offered(a.modelTools(), nil), runs.Settings{}, "")
	req.MaxTokens, req.NoFallback = firstAllowance, true
	return a.worstCall(context.Background(), req).Bill
}

// leastFirstCall is the least a chat's first call on thread can be held at:
// its first round's tools, the fewest answer tokens, no fallback. The gate
// lets a chat start when that fits; the call is then fitted to what is left.
func (a *AgentService) leastFirstCall(ctx context.Context, run runs.Run, thread []runs.Message) credit.Micros {
	req := a.callRequest(ctx, run, thread, offered(a.modelTools(), nil))
	req.MaxTokens, req.NoFallback = firstAllowance, true
	return a.worstCall(ctx, req).Bill
}

// callRequest is the request one model call of run's chat on thread sends:
// modelRequest, with the person's agents and jobs noted in the system
// message. The ledger holds for it, and a quote prices it, alike.
func (a *AgentService) callRequest(ctx context.Context, run runs.Run, thread []runs.Message, tools []ports.ModelTool) ports.ModelRequest {
	req := modelRequest(thread, tools, run.Settings, run.Title)
	if a.jobNotes != nil {
		if notes := a.jobNotes.JobNotes(ctx, run.Owner, run.ID, run.Exploration); notes != "" {
			req.Messages[0].Content += "\n" + notes
		}
	}
	return req
}

// complete makes a round's model call and counts it: planned (plan) to fit
// what the chat has left, and offered no tools when that pays for an answer
// only. Its first attempt is allowed the output a round of its kind needs
// (allowance), not the most any answer may write; an answer stopped at that
// max_tokens is asked again with more room while more fits, each attempt
// held, charged and counted on its own, so holds and charges stay within the
// caps. A call NEAR AI fails on its side is asked of the fallback model,
// held on its own once the failed call's hold is released, when it fits. It
// answers the tools the call was offered (nil: none).
func (a *AgentService) complete(ctx context.Context, c *chat, tools []ports.ModelTool) (ports.ModelAnswer, []ports.ModelTool, error) {
	want := a.allowance(c, tools)
	planned, err := a.plan(ctx, c, tools, want)
	for {
		if err != nil {
			return ports.ModelAnswer{}, tools, err
		}
		offer := planned.req.Tools
		if offer != nil && len(offer) == 0 {
			offer = []ports.ModelTool{}
		}
		ans, err := a.attempt(ctx, c, planned, offer)
		if err != nil && errors.Is(err, ports.ErrModelUnavailable) && ctx.Err() == nil {
			ans, offer, err = a.fallBack(ctx, c, planned, offer, err)
		}
		if err != nil {
			return ans, offer, err
		}
		if !ans.Truncated || planned.req.MaxTokens >= maxAnswerTokens {
			return ans, offer, nil
		}
		// Stopped at its allowance: its words or its tool call may be cut
		// short. Asked again with four times the room (it was charged what
		// it wrote); kept as it is when no more fits.
		again, aerr := a.plan(ctx, c, tools, min(4*planned.req.MaxTokens, maxAnswerTokens))
		if aerr != nil || again.req.MaxTokens <= planned.req.MaxTokens {
			a.attempts.Add(1, "truncated_kept")
			return ans, offer, nil
		}
		a.attempts.Add(1, "truncated_asked_again")
		planned = again
	}
}

// allowance is the output a round's first attempt is sent with: enough for
// a tool call or a brief answer (firstAllowance), or twice the most this
// chat's answers have written so far, when that is more (a model that
// reasons before it answers). An answer stopped at it is asked again with
// more (complete), so it is a guess about size, never a bound on money: the
// hold is for the max_tokens sent.
func (a *AgentService) allowance(c *chat, tools []ports.ModelTool) int {
	return min(max(firstAllowance, 2*int(c.mostOut)), maxAnswerTokens)
}

// firstAllowance is a round's first attempt's max_tokens: a tool call with
// its arguments, or a brief answer. The typical chat's answers write 19-80
// tokens (issue 25); output is held at 2.5× input's price on the default
// model, so 256 held 640 µ$ a call for ~50 used, a third of what a call
// costs. An answer cut at it is asked again with four times the room
// (complete), and a chat whose answers write more is allowed twice its
// longest (allowance).
const firstAllowance = 128

// fallBack asks the fallback model after a call (failed, its hold already
// released) failed on NEAR AI's side: its request, held on its own when it
// fits in what the chat has left (the failed attempt's input included, as
// it is charged). When no fallback may answer or it doesn't fit, the
// failure stands: nothing was charged.
func (a *AgentService) fallBack(ctx context.Context, c *chat, failed fitted, tools []ports.ModelTool, cause error) (ports.ModelAnswer, []ports.ModelTool, error) {
	fb, ok := a.model.(ports.ModelFallbacks)
	if !ok {
		return ports.ModelAnswer{}, tools, cause
	}
	req, ok := fb.FallbackFor(failed.req, failed.call)
	if !ok {
		return ports.ModelAnswer{}, tools, cause
	}
	f, ok, err := a.fitRound(ctx, c, req, req.MaxTokens)
	if err == nil && !ok && req.Tools != nil {
		// Its tool round and an answer after it don't fit: it answers
		// now, with no tools, as plan does.
		req.Tools = nil
		req.Messages = append(slices.Clip(req.Messages[:1]), req.Messages[1:]...)
		req.Messages[0].Content += "\n" + lastCallLine
		f, ok, err = a.fitRound(ctx, c, req, max(req.MaxTokens, finalAllowance))
		tools = nil
	}
	if err != nil {
		return ports.ModelAnswer{}, tools, err
	}
	if !ok {
		a.attempts.Add(1, "fallback_did_not_fit")
		return ports.ModelAnswer{}, tools, cause
	}
	a.attempts.Add(1, "fallback_held")
	ans, err := a.attempt(ctx, c, f, tools)
	return ans, tools, err
}

// attempt makes one model call as planned and counts it: held on the
// ledger first, then settled at what it cost; every other way out (an
// error, a stop, a timeout, a panic) releases the hold. Both are tried again
// until they land: a hold left held keeps the person's credit from them,
// and a call NEAR AI billed must be charged.
func (a *AgentService) attempt(ctx context.Context, c *chat, planned fitted, tools []ports.ModelTool) (ports.ModelAnswer, error) {
	req := planned.req
	var hold credit.Hold
	if c.payer != nil {
		// Not cancelled by a stop half-way: a hold written but not seen
		// would stay held until a restart.
		held := planned.call
		req.Held = &held
		h, err := a.ledger.ReserveCall(c.wctx, *c.payer, c.run.ID, string(a.process), planned.call.Bill, c.toolsRun)
		if err != nil {
			return ports.ModelAnswer{}, err
		}
		hold = h
		defer func() {
			// A settled hold releases nothing.
			if err := a.landing.land(c.wctx, "hold_release", func(ctx context.Context) error { return a.ledger.Release(ctx, hold) }); err != nil {
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
		a.took(ctx, c, ans.Cost, nil)
		// A failed or cut call counts what it is known to have cost: a call
		// cut after NEAR AI had it (a stop, the chat's time) bills its input
		// at least, so it is charged that (ans.Cost), and reconciling with
		// NEAR AI's bill corrects it when its inference id is known. Nothing
		// known: the hold goes back.
		if ans.Cost > 0 && c.payer != nil {
			usage := credit.Usage{InferenceID: ans.InferenceID, Model: ans.Model, TokensIn: int(ans.Tokens.In), TokensCached: int(ans.Tokens.Cached)}
			// No turn ends and the tools run since the last call are not
			// charged: the chat was cut.
			if serr := a.settle(c, hold, ans.Cost, usage, credit.CallContext{}); serr != nil {
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
		// offered none, or that has words and asks only for tools that end
		// the turn (name_conversation): the loop stops there (switch C),
		// charged once a chat even if such a tool fails and the loop goes on.
		ends := len(ans.Message.ToolCalls) == 0 || tools == nil || a.endsTheTurn(ans.Message)
		cc := credit.CallContext{Tools: c.toolsRun, EndsTurn: ends && !c.turnCharged}
		if err := a.settle(c, hold, ans.Cost, usage, cc); err != nil {
			return ans, err
		}
		a.took(ctx, c, ans.Cost, cc.Tools)
		c.turnCharged = c.turnCharged || cc.EndsTurn
		c.toolsRun = nil
	}
	c.turns++
	c.tokens.Add(ans.Tokens)
	c.cost += ans.Cost
	c.mostOut = max(c.mostOut, ans.Tokens.Out)
	if ans.Model != "" {
		c.model = ans.Model
	}
	c.fallback = c.fallback || ans.FallbackUsed
	ans.Message.Role = runs.RoleAssistant
	c.last = &ans
	return ans, nil
}

// settle charges a call its cost, tried again until it lands (a database
// away for a moment must not leave a billed call uncharged and its hold
// then released), within the chat's write time.
func (a *AgentService) settle(c *chat, hold credit.Hold, cost credit.Micros, usage credit.Usage, cc credit.CallContext) error {
	return a.landing.land(c.wctx, "hold_settle", func(ctx context.Context) error {
		return a.ledger.SettleCall(ctx, hold, cost, usage, cc)
	})
}

// took counts what a call charged toward the chat's cap: its bill with
// the most base fee and tip it can carry, so what is left is never
// thought more than it is.
func (a *AgentService) took(ctx context.Context, c *chat, bill credit.Micros, tools []string) {
	if c.payer == nil || bill <= 0 {
		return
	}
	h, err := a.ledger.HoldFor(ctx, *c.payer, bill, tools)
	if err != nil {
		h = credit.HoldParts{Bill: bill}
	}
	c.taken += h.Total()
}
