package app

import (
	"context"
	"encoding/json"

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
	if err := a.pay.reconcileSpaced(ctx, payer.PersonID); err != nil {
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
	req.MaxTokens, req.NoFallback = minAnswerTokens, true
	return a.worstCall(context.Background(), req).Bill
}

// leastFirstCall is the least a chat's first call on thread can be held at:
// its first round's tools, the fewest answer tokens, no fallback. The gate
// lets a chat start when that fits; the call is then fitted to what is left.
func (a *AgentService) leastFirstCall(ctx context.Context, run runs.Run, thread []runs.Message) credit.Micros {
	req := a.callRequest(ctx, run, thread, offered(a.modelTools(), nil))
	req.MaxTokens, req.NoFallback = minAnswerTokens, true
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

// complete makes one model call and counts it: planned (plan) to fit what
// the chat has left, and offered no tools when that pays for an answer
// only. It answers the tools the call was offered (nil: none).
func (a *AgentService) complete(ctx context.Context, c *chat, tools []ports.ModelTool) (ports.ModelAnswer, []ports.ModelTool, error) {
	planned, err := a.plan(ctx, c, tools)
	if err != nil {
		return ports.ModelAnswer{}, tools, err
	}
	req := planned.req
	tools = req.Tools
	if tools != nil && len(tools) == 0 {
		tools = []ports.ModelTool{}
	}
	var hold credit.Hold
	if c.payer != nil {
		// Every model call is held on the ledger first, then settled; every
		// other way out (an error, a stop, a timeout, a panic) releases it.
		// Not cancelled by a stop half-way: a hold written but not seen would
		// stay held until a restart.
		held := planned.call
		req.Held = &held
		h, err := a.ledger.ReserveCall(c.wctx, *c.payer, c.run.ID, string(a.process), planned.call.Bill, c.toolsRun)
		if err != nil {
			return ports.ModelAnswer{}, tools, err
		}
		hold = h
		defer func() {
			// Tried again until it lands: a hold left held keeps the
			// person's credit from them (a settled hold releases nothing).
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
			if serr := a.ledger.SettleCall(c.wctx, hold, ans.Cost, usage, credit.CallContext{}); serr != nil {
				a.log.Error("agent: charging a cut call", "run", c.run.ID, "err", serr)
			}
			c.tokens.Add(ans.Tokens)
			c.cost += ans.Cost
		}
		if ctx.Err() != nil {
			return ans, tools, ctx.Err()
		}
		return ans, tools, err
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
		if err := a.ledger.SettleCall(c.wctx, hold, ans.Cost, usage, cc); err != nil {
			return ans, tools, err
		}
		a.took(ctx, c, ans.Cost, cc.Tools)
		c.turnCharged = c.turnCharged || cc.EndsTurn
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
	return ans, tools, nil
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
