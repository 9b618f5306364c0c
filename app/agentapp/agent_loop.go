package agentapp

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// systemMessage is the agent's brief, sent first on every model call (not
// stored in the thread, so it may change between chats). It lives in its own
// file so it reads, and changes, as prose.
//
//go:embed agent_system_prompt.md
var systemPrompt string

var systemMessage = strings.TrimSpace(systemPrompt)

// chat is one chat's state while its job runs.
type chat struct {
	run      runs.Run
	caller   toolkit.Caller
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
	// failed: a tool call of this round failed (a turn-ending round then
	// goes back to the model); turnCharged: this chat's turn is charged.
	failed      bool
	turnCharged bool
	// added are the tools more_tools added to this chat's rounds.
	added map[string]bool
	// taken is the most this chat has been charged so far (each call's
	// bill with the base fee and tip it can carry): what is left of its cap
	// is the cap less it.
	taken credit.Micros
	// mostOut is the most output tokens one of this chat's answers wrote:
	// a round's first allowance is twice it, when that is more.
	mostOut int64
}

// execute runs one chat to its end, and ends the run with the events the way
// it ended calls for.
func (a *AgentService) execute(ctx context.Context, run runs.Run, caller toolkit.Caller, payer *credit.Payer) {
	ctx, cancel := context.WithTimeoutCause(ctx, a.cfg.RunMax, errTimeout)
	defer cancel()
	// The chat's writes outlive a stop or the wall time by detachedWriteTimeout
	// at most: enough to end the run and settle, not forever.
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.RunMax+toolkit.DetachedWriteTimeout)
	defer wcancel()
	c := &chat{run: run, caller: caller, thread: run.Thread, model: run.Model, payer: payer, refused: map[string]bool{}, wctx: wctx}
	ctx, span := a.startRunSpan(ctx, c)
	defer span.End()
	defer func() {
		// A panic in a tool or the model adapter ends this run, not the
		// process; the holds were released as it unwound.
		if r := recover(); r != nil {
			a.log.Error("agent run panicked", "run", run.ID, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			a.finish(wctx, c, errs.New(errs.Internal, "something went wrong on our side", "try again with this run_id"))
		}
	}()
	a.reconcileFirst(ctx, run.ID, payer)
	err := a.loop(ctx, c)
	a.finish(ctx, c, err)
}

func (a *AgentService) finish(ctx context.Context, c *chat, err error) {
	cause := context.Cause(ctx)
	if ctx.Err() == nil {
		cause = nil
	}
	var status runs.Status
	var evs []runs.NewEvent
	switch {
	case errors.Is(cause, errShutdown), errors.Is(cause, errFenced):
		status = runs.Interrupted
		message := interruptedByShutdown
		if errors.Is(cause, errFenced) {
			message = interruptedByFence
		}
		evs = append(evs, interrupted(message))
		// Bounded: a fenced process may not reach the database at all, and
		// then a peer's sweep ends the run instead.
		wctx, cancel := context.WithTimeout(c.wctx, endTimeout)
		defer cancel()
		a.logEnd(c, status, a.endRun(wctx, c.run.ID, status, evs))
		return
	case errors.Is(cause, errStopped):
		status = runs.Stopped
		evs = append(evs, runs.Make(runs.KindError, runs.ErrorData{Code: runs.CodeStopped, Message: "stopped, as asked",
			Hint: continueHint}))
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
	if c.payer != nil && c.payer.Quote != "" {
		quoted := c.payer.QuoteMax.USD()
		done.QuotedUSD = &quoted
	}
	if c.picked != "" {
		// What the conversation asked for, when it asked: differs from
		// model after a fallback.
		done.Picked = &c.picked
	}
	if c.last != nil && status == runs.Done {
		// The completion that wrote the answer; null when the provider gives none.
		done.Signature = a.sign(c.wctx, c.last)
	}
	evs = append(evs, runs.Make(runs.KindDone, done))
	a.logEnd(c, status, a.endRun(c.wctx, c.run.ID, status, evs))
}

// endRun writes a run's end, tried again until it lands or ctx ends.
func (a *AgentService) endRun(ctx context.Context, id string, status runs.Status, evs []runs.NewEvent) error {
	return a.landing.land(ctx, "run_end", func(ctx context.Context) error {
		_, err := a.store.End(ctx, id, status, evs...)
		return err
	})
}

func (a *AgentService) logEnd(c *chat, status runs.Status, err error) {
	if err != nil {
		a.log.Error("agent run: could not store its end", "run", c.run.ID, "status", status, "err", err)
		return
	}
	a.log.Info("agent run ended", "run", c.run.ID, "status", status, "turns", c.turns)
}

// sign fetches a completion's signature; a failure leaves it null: a run
// never fails for want of one.
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
func (a *AgentService) loop(ctx context.Context, c *chat) (err error) {
	all := a.modelTools()
	speak := false
	var span roundSpan
	outAllowance := 0 // the output room the round asks its first call for
	defer func() { span.end(c, outAllowance, err) }()
	for round := 0; ; round++ {
		if round > 0 {
			span.end(c, outAllowance, nil)
		}
		rctx, next := a.startRound(ctx, c, round)
		span = next
		tools := offered(all, c.added)
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
		outAllowance = a.allowance(c, offer)
		ans, offer, err := a.complete(rctx, c, offer)
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
		c.askedAgain, c.failed = false, false
		for _, tc := range ans.Message.ToolCalls {
			if err := ctx.Err(); err != nil {
				return err
			}
			refused, err := a.runTool(rctx, c, tc, &ans)
			if err != nil {
				return err
			}
			allRefused = allRefused && refused
		}
		if a.endsTheTurn(ans.Message) && !c.failed {
			// Words for the person and a name kept: the turn is over, at no
			// model call of its own.
			return nil
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
