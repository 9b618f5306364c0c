package agentapp

import (
	"context"
	"strings"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// minAnswerTokens is the fewest output tokens a call is fitted down to:
// enough for a few sentences (a round's first attempt may ask for less,
// firstAllowance). A chat whose budget can't pay a call at that ends
// with budget_exhausted.
const minAnswerTokens = 256

// growthBytesBound is what a round is planned to add to the thread when
// deciding whether a final answer will still fit after it: a tool call and
// a result of the typical chat's size (1.0-1.3 KB a round, issue 25) with
// room to spare. A larger result leaves the final call less: it is then
// fitted down, or the chat ends with budget_exhausted if even that fails.
const growthBytesBound = 4 << 10

// lastCallLine tells the model its budget pays for this answer only.
const lastCallLine = "What is left of this chat's budget pays for this one answer only, so no tools are offered: answer the person now, " +
	"plainly, with what you have found (a flower already drawn is shown to them), and say what you would look at next."

// worstCall is the most req can cost, with what the provider counted
// before when it keeps counts (ports.ModelBounds), else at its plain bound.
func (a *AgentService) worstCall(ctx context.Context, req ports.ModelRequest) ports.WorstCall {
	if b, ok := a.model.(ports.ModelBounds); ok {
		return b.WorstCallFor(ctx, req)
	}
	return a.model.WorstCall(req)
}

// chatLeft is what the chat may still take: the least its paying accounts
// have left, and its own cap (or quote) less what it has taken.
func (a *AgentService) chatLeft(ctx context.Context, c *chat) (credit.Micros, error) {
	left, err := a.leftFor(ctx, *c.payer)
	if err != nil {
		return 0, err
	}
	if c.payer.PerChat > 0 {
		left = min(left, c.payer.PerChat-c.taken)
	}
	return left, nil
}

// fitted is one call as it will be held: its request, worst case and hold.
type fitted struct {
	req  ports.ModelRequest
	call ports.WorstCall
	hold credit.HoldParts
}

// fit is req with max_tokens the most (at most want, at least
// minAnswerTokens, or want when a round asks for less) whose hold fits in
// left; ok is false when not even the floor fits (req is then at it). A call is held on its own model
// alone: a fallback is held only when it is needed (fallBack).
func (a *AgentService) fit(ctx context.Context, c *chat, req ports.ModelRequest, left credit.Micros, want int) (fitted, bool, error) {
	least := min(want, minAnswerTokens)
	try := func(tokens int) (fitted, error) {
		r := req
		r.MaxTokens, r.NoFallback = tokens, true
		w := a.worstCall(ctx, r)
		h, err := a.ledger.HoldFor(ctx, *c.payer, w.Bill, c.toolsRun)
		return fitted{req: r, call: w, hold: h}, err
	}
	best, err := try(want)
	if err != nil || best.hold.Total() <= left {
		return best, err == nil, err
	}
	if least == want { // a round asking the floor or less: nothing smaller to try
		return best, false, nil
	}
	floor, err := try(least)
	if err != nil || floor.hold.Total() > left {
		return floor, false, err
	}
	// The most tokens that fit: the hold grows with them.
	lo, hi := least, want
	best = floor
	for lo < hi {
		mid := (lo + hi + 1) / 2
		f, err := try(mid)
		if err != nil {
			return f, false, err
		}
		if f.hold.Total() <= left {
			lo, best = mid, f
		} else {
			hi = mid - 1
		}
	}
	return best, true, nil
}

// plan is the call of a round offering tools, allowed want output tokens
// at most, fitted to what the chat has left so that a final answer still
// fits after it; offered nil, it is the final answer itself, told so. A
// chat that isn't paid for is sent as asked.
func (a *AgentService) plan(ctx context.Context, c *chat, tools []ports.ModelTool, want int) (fitted, error) {
	if tools == nil {
		want = max(want, finalAllowance)
	}
	req := a.callRequest(ctx, c.run, c.thread, tools)
	req.MaxTokens, req.NoFallback = want, true
	if c.payer == nil {
		return fitted{req: req, call: a.worstCall(ctx, req)}, nil
	}
	f, ok, err := a.fitRound(ctx, c, req, want)
	if err != nil || ok || tools == nil {
		return f, err
	}
	// Too little left for a tool round and an answer: answer now.
	a.lastCalls.Add(1, "answered_without_tools")
	req = a.callRequest(ctx, c.run, c.thread, nil)
	req.Messages[0].Content += "\n" + lastCallLine
	f, _, err = a.fitRound(ctx, c, req, max(want, finalAllowance))
	return f, err
}

// finalAllowance is the max_tokens of a call offered no tools (the chat's
// last words: out of rounds, or what is left pays for an answer only),
// fitted down to what is left: its answer is words for the person, longer
// than a tool call, and when the budget is short no attempt follows it, so
// it gets more room than a round's first attempt.
const finalAllowance = 4 * minAnswerTokens

// fitRound fits req (want output tokens at most) in what the chat has left;
// a request offering tools leaves room for the answer after it: the thread
// grown by a round, no tools, the fewest tokens. ok is false when it
// doesn't fit.
func (a *AgentService) fitRound(ctx context.Context, c *chat, req ports.ModelRequest, want int) (fitted, bool, error) {
	if c.payer == nil {
		return fitted{req: req, call: a.worstCall(ctx, req)}, true, nil
	}
	left, err := a.chatLeft(ctx, c)
	if err != nil {
		return fitted{}, false, err
	}
	if req.Tools != nil {
		grown := append(c.thread[:len(c.thread):len(c.thread)], runs.Message{Role: runs.RoleTool, ToolCallID: "next", Name: "next",
			Content: strings.Repeat("x", growthBytesBound)})
		last := a.callRequest(ctx, c.run, grown, nil)
		last.MaxTokens, last.NoFallback = minAnswerTokens, true
		lastHold, err := a.ledger.HoldFor(ctx, *c.payer, a.worstCall(ctx, last).Bill, nil)
		if err != nil {
			return fitted{}, false, err
		}
		left -= lastHold.Total()
	}
	return a.fit(ctx, c, req, left, want)
}
