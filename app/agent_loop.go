package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// toolResultMax bounds what one tool result puts in the model's thread.
const toolResultMax = 24 << 10

// maxAnswerTokens is what one model call may write.
const maxAnswerTokens = 2048

// systemMessage is the agent's brief, sent first on every model call (not
// stored in the thread, so it may change between chats).
const systemMessage = `You are Petals' agent. Petal reads who holds power in a NEAR network (a DAO's members, a token's holders, a validator's delegators) into a snapshot, and draws it as a flower: one petal per account, sized by weight and coloured by group.
Work with the tools: find the network, read its snapshot (get_snapshot), propose a spec (propose_spec), check it (validate_spec) and draw it (render_flower). Say briefly what you found and what the flower shows. Never invent figures: every number comes from a tool.
Before reading a new network fresh, make sure the person asked for it; ask one clear question when unsure.`

// chat is one chat's state while its job runs.
type chat struct {
	run      runs.Run
	caller   Caller
	thread   []runs.Message
	turns    int
	tokens   runs.Tokens
	model    string
	picked   string // the model the chat's first call asked for; "" until it asks
	fallback bool
	cost     credit.Micros
	last     *ports.ModelAnswer // the completion that wrote the answer
	proposed *ports.ModelAnswer // the completion that proposed the spec
	flower   json.RawMessage
	payer    *credit.Payer
	// toolsRun are the tools run (through the registry) since the last
	// settled model call, one per use: the next call's settle charges their
	// base fee (switch D) on a person's credit.
	toolsRun []string
	// The yes: targets refused this chat (approval_required goes out once
	// per target), and whether anything was.
	refused    map[string]bool
	refusedAny bool
	askedAgain bool            // this round asked again for something refused
	wctx       context.Context // for writes that must land even after a stop
}

// execute runs one chat to its end, and ends the run with the events the way
// it ended calls for.
func (a *AgentService) execute(ctx context.Context, run runs.Run, caller Caller, payer *credit.Payer) {
	ctx, cancel := context.WithTimeoutCause(ctx, a.cfg.RunMax, errTimeout)
	defer cancel()
	c := &chat{run: run, caller: caller, thread: run.Thread, model: run.Model, payer: payer, refused: map[string]bool{}, wctx: context.WithoutCancel(ctx)}
	defer func() {
		// A panic in a tool or the model adapter ends this run, not the
		// process; the holds were released as it unwound.
		if r := recover(); r != nil {
			a.log.Error("agent run panicked", "run", run.ID, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			a.finish(context.WithoutCancel(ctx), c, errs.New(errs.Internal, "something went wrong on our side", "try again with this run_id"))
		}
	}()
	a.reconcileFirst(ctx, run.ID, payer)
	err := a.loop(ctx, c)
	a.finish(ctx, c, err)
}

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

func (a *AgentService) finish(ctx context.Context, c *chat, err error) {
	cause := context.Cause(ctx)
	if ctx.Err() == nil {
		cause = nil
	}
	var status runs.Status
	var evs []runs.NewEvent
	switch {
	case errors.Is(cause, errShutdown):
		status = runs.Interrupted
		evs = append(evs, runs.Make(runs.KindError, runs.ErrorData{Code: runs.CodeInterrupted,
			Message: "the server stopped while this run was going, so it ended here",
			Hint:    "send a message with this run_id to carry on from where it was"}))
		_, werr := a.store.End(c.wctx, c.run.ID, status, evs...)
		a.logEnd(c, status, werr)
		return
	case errors.Is(cause, errStopped):
		status = runs.Stopped
		evs = append(evs, runs.Make(runs.KindError, runs.ErrorData{Code: runs.CodeStopped, Message: "stopped, as asked",
			Hint: "send a message with this run_id to carry on"}))
	case errors.Is(cause, errTimeout):
		status = runs.Failed
		evs = append(evs, runs.Make(runs.KindError, runs.ErrorData{Code: runs.CodeTimeout,
			Message: fmt.Sprintf("this chat took more than %d s, the most one chat may take", int(a.cfg.RunMax.Seconds())),
			Hint:    "ask for something smaller, or carry on with this run_id"}))
	case err != nil:
		status = runs.Failed
		e, ok := errs.As(err)
		if !ok {
			a.log.Error("agent run failed", "run", c.run.ID, "err", err)
			e = errs.New(errs.Internal, "something went wrong on our side", "try again with this run_id")
		}
		evs = append(evs, runs.Make(runs.KindError, runs.ErrorData{Code: string(e.Code), Message: e.Message, Hint: e.Hint}))
	default:
		status = runs.Done
		if c.flower != nil {
			a.keepFlower(c)
			evs = append(evs, runs.NewEvent{Kind: runs.KindFlower, Data: c.flower})
		}
		if c.proposed != nil {
			if sig := a.sign(c.wctx, c.proposed); sig != nil {
				evs = append(evs, runs.Make(runs.KindSignature, sig))
			}
		}
	}
	done := runs.DoneData{Turns: c.turns, Model: c.model, FallbackUsed: c.fallback, Tokens: c.tokens, CostUSD: c.cost.USD()}
	if c.picked != "" {
		// What the conversation asked for, when it asked: differs from
		// model after a fallback.
		done.Picked = &c.picked
	}
	if c.last != nil && status == runs.Done {
		// The completion that wrote the answer; null when it has none (T168).
		done.Signature = a.sign(c.wctx, c.last)
	}
	evs = append(evs, runs.Make(runs.KindDone, done))
	_, werr := a.store.End(c.wctx, c.run.ID, status, evs...)
	a.logEnd(c, status, werr)
}

func (a *AgentService) logEnd(c *chat, status runs.Status, err error) {
	if err != nil {
		a.log.Error("agent run: could not store its end", "run", c.run.ID, "status", status, "err", err)
		return
	}
	a.log.Info("agent run ended", "run", c.run.ID, "status", status, "turns", c.turns)
}

// sign fetches a completion's signature; a failure leaves it null (T168).
func (a *AgentService) sign(ctx context.Context, ans *ports.ModelAnswer) *runs.Signature {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	sig, err := a.model.Sign(ctx, *ans)
	if err != nil {
		a.log.Warn("agent: no signature for a completion", "chat_id", ans.ChatID, "err", err)
		return nil
	}
	return sig
}

// loop is the chat: model, tools, model … until the model answers in words,
// or the rounds run out.
func (a *AgentService) loop(ctx context.Context, c *chat) error {
	tools := a.modelTools()
	speak := false
	for round := 0; ; round++ {
		offer := tools
		if c.refusedAny && runs.ApprovedIn(c.thread, c.run.Flower, c.run.Draft).Empty() {
			// After a refusal the chat keeps the tools that only read.
			offer = withoutDrawing(tools)
		}
		if round >= runs.MaxToolRounds || speak {
			// Out of rounds, or left with no words after a refusal: one
			// call with no tools, so it has to speak.
			offer = nil
		}
		if !a.Recorded() {
			if _, err := a.store.Append(c.wctx, c.run.ID, runs.Make(runs.KindStage, runs.StageData{Stage: runs.StageThinking, Message: "thinking"})); err != nil {
				return err
			}
		}
		ans, err := a.complete(ctx, c, offer)
		if err != nil {
			return err
		}
		c.thread = append(c.thread, ans.Message)
		if err := a.store.SaveThread(c.wctx, c.run.ID, c.thread); err != nil {
			return err
		}
		if ans.Message.Content != "" {
			if _, err := a.store.Append(c.wctx, c.run.ID, runs.Make(runs.KindMessage, runs.MessageData{Text: ans.Message.Content})); err != nil {
				return err
			}
		}
		if len(ans.Message.ToolCalls) == 0 || offer == nil {
			return nil
		}
		allRefused := true
		c.askedAgain = false
		for _, tc := range ans.Message.ToolCalls {
			if err := ctx.Err(); err != nil {
				return err
			}
			refused, err := a.runTool(ctx, c, tc, &ans)
			if err != nil {
				return err
			}
			allRefused = allRefused && refused
		}
		// Asking again for what was refused, with nothing to say: one call
		// with no tools, so it has to speak to the person.
		speak = allRefused && c.askedAgain && ans.Message.Content == ""
	}
}

func withoutDrawing(tools []ports.ModelTool) []ports.ModelTool {
	out := []ports.ModelTool{}
	for _, t := range tools {
		if !runs.Drawing(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// consent applies the yes to a held call on a real model. It answers the
// approval to keep on the call's tool message (empty: none), or a refusal to
// give the model instead of running the tool.
func (a *AgentService) consent(ctx context.Context, c *chat, tc runs.ToolCall) (key, by string, refusal *errs.Error, err error) {
	if a.Recorded() || !runs.Held(tc.Name) {
		return "", "", nil, nil
	}
	approved := runs.ApprovedIn(c.thread, c.run.Flower, c.run.Draft)
	d := runs.Decide(c.thread, approved, tc, runs.YesSpent(c.thread))
	switch d.Verdict {
	case runs.Allow:
		return d.Target.Key, d.By, nil, nil
	case runs.StoredOnly:
		// Answered from storage, or not at all: it reaches no source.
		if a.snapshots != nil {
			var serr error
			if d.Target.Snapshot != "" {
				_, serr = a.snapshots.Get(ctx, d.Target.Snapshot)
			} else {
				_, serr = a.snapshots.Latest(ctx, d.Target.Key)
			}
			if serr == nil {
				return "", "", nil, nil
			}
			if !errs.Is(serr, errs.NotFound) {
				return "", "", nil, serr
			}
		}
	}
	c.refusedAny = true
	c.askedAgain = c.askedAgain || c.refused[d.Target.Key]
	if !c.refused[d.Target.Key] {
		// At most once per target per chat.
		c.refused[d.Target.Key] = true
		if _, err := a.store.Append(c.wctx, c.run.ID, runs.Make(runs.KindApprovalRequired, runs.ApprovalData(d.Target))); err != nil {
			return "", "", nil, err
		}
	}
	return "", "", errs.New(errs.Code(runs.CodeApprovalRequired),
		"this is a new map, and the person has not said yes to it; the tool did not run",
		"ask the person one plain question about this one map, then wait for their answer"), nil
}

// complete makes one model call and counts it.
func (a *AgentService) complete(ctx context.Context, c *chat, tools []ports.ModelTool) (ports.ModelAnswer, error) {
	msgs := append([]runs.Message{{Role: runs.RoleSystem, Content: systemMessage}}, c.thread...)
	req := ports.ModelRequest{Messages: msgs, Tools: tools, MaxTokens: maxAnswerTokens}
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
		// An aborted or failed call counts only what it is known to have
		// cost: nothing is known, so the hold goes back.
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

// runTool runs one tool call through the registry, as the agent's door, and
// stores its call, progress and result.
func (a *AgentService) runTool(ctx context.Context, c *chat, tc runs.ToolCall, ans *ports.ModelAnswer) (refused bool, _ error) {
	args := tc.Args
	if len(args) == 0 || !json.Valid(args) {
		args = json.RawMessage(`{}`)
		tc.Args = args
	}
	if _, err := a.store.Append(c.wctx, c.run.ID, runs.Make(runs.KindToolCall, runs.ToolCallData{ID: tc.ID, Name: tc.Name, Args: args})); err != nil {
		return false, err
	}
	key, by, refusal, err := a.consent(ctx, c, tc)
	if err != nil {
		return false, err
	}
	if refusal != nil {
		content, _ := json.Marshal(map[string]any{"error": map[string]string{"code": string(refusal.Code), "message": refusal.Message, "hint": refusal.Hint}})
		if _, err := a.store.Append(c.wctx, c.run.ID, runs.Make(runs.KindToolResult, runs.ToolResultData{ID: tc.ID, Name: tc.Name,
			Summary: string(refusal.Code) + ": " + refusal.Message})); err != nil {
			return true, err
		}
		c.thread = append(c.thread, runs.Message{Role: runs.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: string(content)})
		return true, a.store.SaveThread(c.wctx, c.run.ID, c.thread)
	}
	start := time.Now()
	call := Call{Input: args, Caller: Caller{Door: DoorAgent, Address: c.caller.Address, Subject: c.caller.Subject, Session: c.caller.Session},
		Progress: func(p Progress) {
			_, _ = a.store.Append(c.wctx, c.run.ID, runs.Make(runs.KindProgress, runs.ProgressData{Stage: p.Stage, Message: p.Message, Done: p.Done, Total: p.Total}))
		}}
	out, err := a.registry.Call(ctx, tc.Name, call)
	if ctx.Err() != nil {
		// Stopped or out of time: the tool's answer doesn't count.
		return false, ctx.Err()
	}
	c.toolsRun = append(c.toolsRun, tc.Name)
	ms := time.Since(start).Milliseconds()
	var content []byte
	result := runs.ToolResultData{ID: tc.ID, Name: tc.Name, MS: ms}
	if err != nil {
		e, ok := errs.As(err)
		if !ok {
			a.log.Error("agent tool failed", "run", c.run.ID, "tool", tc.Name, "err", err)
			e = errs.New(errs.Internal, "the tool failed on our side")
		}
		result.Summary = string(e.Code) + ": " + e.Message
		content, _ = json.Marshal(map[string]any{"error": map[string]string{"code": string(e.Code), "message": e.Message, "hint": e.Hint}})
	} else {
		content, err = json.Marshal(out)
		if err != nil {
			return false, fmt.Errorf("encode %s's answer: %w", tc.Name, err)
		}
		result.OK = true
		result.Summary = runs.Summarize(content)
		switch tc.Name {
		case "propose_spec":
			c.proposed = ans
		case "render_flower":
			if f := a.flowerEvent(ctx, args); f != nil {
				c.flower = f
				if c.proposed == nil {
					c.proposed = ans
				}
			}
		}
	}
	if _, err := a.store.Append(c.wctx, c.run.ID, runs.Make(runs.KindToolResult, result)); err != nil {
		return false, err
	}
	if len(content) > toolResultMax {
		content, _ = json.Marshal(map[string]any{"summary": result.Summary, "note": "the full answer was too long to show here"})
	}
	msg := runs.Message{Role: runs.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: string(content)}
	if result.OK && key != "" {
		// What is approved is read back from the thread.
		msg.Approved, msg.ApprovedBy = key, by
	}
	c.thread = append(c.thread, msg)
	return false, a.store.SaveThread(c.wctx, c.run.ID, c.thread)
}

// keepFlower keeps the chat's flower in the run's exploration: made at the
// run's first flower, under the run's owner, and each new flower a step
// saved through the registry (door agent). A failure here costs the run
// nothing: it is logged.
func (a *AgentService) keepFlower(c *chat) {
	ctx := c.wctx
	caller := Caller{Door: DoorAgent, Address: c.caller.Address, Subject: c.run.Owner}
	if c.run.Exploration == "" {
		question := "Petals' agent"
		for _, m := range c.thread {
			if m.Role == runs.RoleUser && strings.TrimSpace(m.Content) != "" {
				question = strings.TrimSpace(m.Content)
				break
			}
		}
		if r := []rune(question); len(r) > 280 {
			question = string(r[:279]) + "…"
		}
		in, _ := json.Marshal(map[string]string{"question": question})
		out, err := a.registry.Call(ctx, "start_exploration", Call{Input: in, Caller: caller})
		if err != nil {
			a.log.Warn("agent: the run's exploration could not be made", "run", c.run.ID, "err", err)
			return
		}
		b, _ := json.Marshal(out)
		var made struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(b, &made) != nil || made.ID == "" {
			return
		}
		if err := a.store.SetExploration(ctx, c.run.ID, made.ID); err != nil {
			a.log.Warn("agent: the run's exploration could not be kept", "run", c.run.ID, "err", err)
			return
		}
		c.run.Exploration = made.ID
	}
	var f struct {
		Spec           json.RawMessage `json:"spec"`
		Interpretation string          `json:"interpretation"`
	}
	_ = json.Unmarshal(c.flower, &f)
	in, _ := json.Marshal(map[string]any{"exploration": c.run.Exploration, "spec": f.Spec, "note": f.Interpretation})
	if _, err := a.registry.Call(ctx, "save_step", Call{Input: in, Caller: caller}); err != nil {
		a.log.Warn("agent: the flower could not be saved as a step", "run", c.run.ID, "err", err)
	}
}

// flowerEvent is the flower event's data for a render_flower call that
// succeeded: the spec drawn, its hashes, legend, interpretation and validation.
func (a *AgentService) flowerEvent(ctx context.Context, args json.RawMessage) json.RawMessage {
	var in struct {
		Spec json.RawMessage `json:"spec"`
		View json.RawMessage `json:"view"`
	}
	if json.Unmarshal(args, &in) != nil || a.flowers == nil {
		return nil
	}
	f, err := a.flowers.Flower(ctx, in.Spec, in.View)
	if err != nil {
		return nil
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil
	}
	return b
}

// modelTools is what the model may call: the registry's tools this site runs.
func (a *AgentService) modelTools() []ports.ModelTool {
	out := []ports.ModelTool{} // never nil: nil means "no tools this call"
	for _, t := range a.registry.Offered() {
		out = append(out, ports.ModelTool{Name: t.Name, Description: t.Description, Parameters: t.Input})
	}
	return out
}
