package agentapp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/petal-near/petal/app/internal/ids"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
)

// A chat's way in: POST /api/v1/agent/chat's body checked, a new run made or
// a stored one continued, each only once the gate, the limits and the data
// budget have passed.

// ChatRequest is POST /api/v1/agent/chat's body.
type ChatRequest struct {
	Messages []ChatMessage   `json:"messages"`
	Draft    json.RawMessage `json:"draft,omitempty"`
	RunID    string          `json:"run_id,omitempty"`
	// Settings are what the conversation runs on from this chat on; a
	// follow-up without them keeps the run's.
	Settings *runs.Settings `json:"settings,omitempty"`
	// QuoteID binds the chat to a quote (POST /api/v1/agent/quote).
	QuoteID string `json:"quote_id,omitempty"`
}

// ChatMessage is one message a client sends.
type ChatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ChatStarted says which run a chat runs in and where its events start.
type ChatStarted struct {
	RunID    string `json:"run_id"`
	Status   string `json:"status"`
	FirstSeq int64  `json:"-"`
}

// Chat starts a chat: a new run, or the next chat of a stored one. The job
// goes on in this process whoever watches it.
func (a *AgentService) Chat(ctx context.Context, caller toolkit.Caller, req ChatRequest) (ChatStarted, error) {
	if a.cfg.Public {
		return ChatStarted{}, toolkit.NotOnThisSite("Petals' agent")
	}
	last, err := checkMessages(req.Messages)
	if err != nil {
		return ChatStarted{}, err
	}
	if len(req.Draft) > 0 && !json.Valid(req.Draft) {
		return ChatStarted{}, errs.New(errs.BadInput, "draft is not JSON")
	}
	if err := a.CheckSettings(req.Settings); err != nil {
		return ChatStarted{}, err
	}
	if a.fenced.Load() {
		// A run started now would be held under a lease peers take for
		// dead, and swept from under its job.
		return ChatStarted{}, errs.New(errs.SourceFailed, "this server has lost its lease on the database for the moment",
			"try again in a few seconds")
	}
	if req.RunID != "" {
		return a.continueRun(ctx, caller, req, last)
	}
	thread := threadOf(req.Messages)
	var settings runs.Settings
	if req.Settings != nil {
		settings = *req.Settings
	}
	payer, err := a.gate(ctx, caller, thread, settings)
	if err != nil {
		return ChatStarted{}, err
	}
	payer, quote, err := a.bindQuote(ctx, req, thread, settings, payer)
	if err != nil {
		return ChatStarted{}, err
	}
	// A person spending their own credit isn't held to the new chats'
	// limit, since every call is paid for; follow-ups still count.
	if payer == nil || payer.Kind != credit.PayPerson {
		if err := a.limit(ctx, "chats:", caller.Address, a.cfg.NewChatsPerHour, "new chats"); err != nil {
			return ChatStarted{}, err
		}
	}
	if !a.Recorded() {
		// Only now, past the gate and the limit, does a caller without a
		// session get one (the run's owner): a refusal opens nothing.
		if err := a.budget.Fits(ctx, caller.Subject, snapshotsapp.RowBytes+int64(runs.ThreadBytes(thread))); err != nil {
			return ChatStarted{}, err
		}
		if caller, err = caller.Own(ctx); err != nil {
			return ChatStarted{}, errs.New(errs.Internal, "a session could not be opened").WithCause(err)
		}
	}
	id, err := ids.RandomHex(a.random, 16)
	if err != nil {
		return ChatStarted{}, err
	}
	run := runs.Run{
		ID:        "run_" + id,
		Status:    runs.Running,
		Model:     a.model.Name(),
		ProcessID: string(a.process),
		Draft:     req.Draft,
		Settings:  settings,
	}
	if !a.Recorded() {
		// A recorded run opens no session and has no owner.
		run.Owner = caller.Subject
	}
	run.Thread = thread
	payer = forChat(payer, run.ID, 0)
	// What a stranger sends is what they store: a run's thread counts against
	// the data budget (the events the job writes are bounded per chat).
	refund, err := a.budget.Spend(ctx, run.Owner, snapshotsapp.RowBytes+int64(runs.ThreadBytes(run.Thread)))
	if err != nil {
		return ChatStarted{}, err
	}
	first := a.openingEvents(run.ID)
	if err := a.useQuote(ctx, quote); err != nil {
		refund()
		return ChatStarted{}, err
	}
	created, err := a.store.Create(ctx, run, first...)
	if err != nil {
		refund()
		return ChatStarted{}, err
	}
	a.start(created, caller, payer)
	return ChatStarted{RunID: run.ID, Status: string(runs.Running), FirstSeq: 0}, nil
}

// threadOf is a chat's messages as a run's thread.
func threadOf(messages []ChatMessage) []runs.Message {
	thread := make([]runs.Message, 0, len(messages))
	for _, m := range messages {
		thread = append(thread, runs.Message{Role: m.Role, Content: m.Content})
	}
	return thread
}

func (a *AgentService) continueRun(ctx context.Context, caller toolkit.Caller, req ChatRequest, last ChatMessage) (ChatStarted, error) {
	run, err := a.Run(ctx, caller, req.RunID)
	if err != nil {
		return ChatStarted{}, err
	}
	if err := a.limit(ctx, "followups:", caller.Address, a.cfg.FollowUpsPerHour, "follow-ups"); err != nil {
		return ChatStarted{}, err
	}
	if run.Status == runs.Running {
		return ChatStarted{}, errs.New(errs.Conflict, "this run is still going", "follow run "+run.ID+", or stop it first")
	}
	thread := append(run.Thread, runs.Message{Role: runs.RoleUser, Content: last.Content})
	size := runs.ThreadBytes(thread)
	if size > runs.MaxThread {
		return ChatStarted{}, runs.ThreadFull(size)
	}
	settings := run.Settings
	if req.Settings != nil {
		settings = *req.Settings
	}
	payer, err := a.gate(ctx, caller, thread, settings)
	if err != nil {
		return ChatStarted{}, err
	}
	payer, quote, err := a.bindQuote(ctx, req, thread, settings, payer)
	if err != nil {
		return ChatStarted{}, err
	}
	firstSeq := run.NextSeq
	payer = forChat(payer, run.ID, firstSeq)
	refund, err := a.budget.Spend(ctx, run.Owner, snapshotsapp.RowBytes+int64(len(last.Content)))
	if err != nil {
		return ChatStarted{}, err
	}
	if err := a.useQuote(ctx, quote); err != nil {
		refund()
		return ChatStarted{}, err
	}
	if settings != run.Settings {
		if err := a.store.SetSettings(ctx, run.ID, settings); err != nil {
			refund()
			return ChatStarted{}, err
		}
	}
	resumed, err := a.store.Resume(ctx, run.ID, string(a.process), thread, a.openingEvents(run.ID)...)
	if err != nil {
		refund()
		return ChatStarted{}, err
	}
	a.start(resumed, caller, payer)
	return ChatStarted{RunID: run.ID, Status: string(runs.Running), FirstSeq: firstSeq}, nil
}

func (a *AgentService) openingEvents(runID string) []runs.NewEvent {
	evs := []runs.NewEvent{runs.Make(runs.KindRun, runs.RunData{RunID: runID, ResumeURL: runs.ResumeURL(runID)})}
	if a.Recorded() {
		evs = append(evs, runs.Make(runs.KindStage, runs.StageData{Stage: runs.StageRecorded,
			Message: "no model key here: this is a recorded conversation, and its tools run for real"}))
	}
	return evs
}

func (a *AgentService) limit(ctx context.Context, prefix, address string, n int, what string) error {
	if a.limiter == nil {
		return nil
	}
	ok, wait, err := a.limiter.Allow(ctx, prefix+address, n, time.Hour)
	if err != nil {
		return errs.New(errs.Internal, "the rate limiter failed").WithCause(err)
	}
	if !ok {
		return toolkit.RateLimited(fmt.Sprintf("more than %d %s an hour from this address", n, what), wait)
	}
	return nil
}
