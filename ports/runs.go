package ports

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/runs"
)

// RunStore keeps runs and their event logs. Every event of a run gets the next
// seq (0, 1, 2 …) across all the run's chats, with no gaps and no duplicates
// however many appenders race.
type RunStore interface {
	// Create stores a new running run held by run.ProcessID and appends its
	// first events.
	Create(ctx context.Context, run runs.Run, first ...runs.NewEvent) (runs.Run, error)
	// Get reads a run, or errs.NotFound.
	Get(ctx context.Context, id string) (runs.Run, error)
	// Resume marks an ended run running again under processID and appends
	// events; it fails with errs.Conflict when the run is already running.
	Resume(ctx context.Context, id, processID string, thread []runs.Message, first ...runs.NewEvent) (runs.Run, error)
	// SaveThread saves the run's thread (after each model answer and tool).
	SaveThread(ctx context.Context, id string, thread []runs.Message) error
	// SetExploration records the exploration the run keeps its flowers in.
	SetExploration(ctx context.Context, id, exploration string) error
	// SetTitle names the run's conversation (a title already checked), or
	// errs.NotFound.
	SetTitle(ctx context.Context, id, title string) error
	// SetSettings keeps what the run's chats run on (settings already
	// checked against the catalogue), or errs.NotFound.
	SetSettings(ctx context.Context, id string, settings runs.Settings) error
	// Append adds events to the log and returns the seq of the last one.
	// Only a running run grows: on an ended one (a sweep ended it while its
	// job went on) it writes nothing and fails with errs.Conflict.
	Append(ctx context.Context, id string, events ...runs.NewEvent) (int64, error)
	// End appends the last events and sets the final status, in one step, so a
	// reader who sees the last event also sees the run ended. Like Append, it
	// fails with errs.Conflict on a run that has already ended.
	End(ctx context.Context, id string, status runs.Status, events ...runs.NewEvent) (int64, error)
	// Events reads up to limit stored events with seq >= from, in order.
	Events(ctx context.Context, id string, from int64, limit int) ([]runs.Event, error)
	// InterruptOrphans ends as interrupted every running run whose process's
	// lease has lapsed (no row, or a heartbeat older than staleAfter), with
	// interrupted (the app's interrupted error) as its last event. It returns
	// their ids.
	InterruptOrphans(ctx context.Context, staleAfter time.Duration, interrupted runs.NewEvent) ([]string, error)
	// InterruptStuck ends as interrupted every running run, whatever its
	// process, not written to for longer than quiet: past any chat's time,
	// its process gave up writing its end. It returns their ids.
	InterruptStuck(ctx context.Context, quiet time.Duration, interrupted runs.NewEvent) ([]string, error)
}

// EventBus carries "something happened" across processes: a run's log grew, or
// someone asked a run to stop. It carries ids, never data; readers read the
// store.
type EventBus interface {
	// Watch delivers the latest appended seq of runID (coalesced: a slow reader
	// sees the newest) until cancel is called. A value of -1 means "look again":
	// the bus may have missed notifications (it reconnected).
	Watch(runID string) (updates <-chan int64, cancel func())
	// RequestStop asks whichever process holds runID to stop it.
	RequestStop(ctx context.Context, runID string) error
	// OnStop registers the handler of stop requests for this process.
	OnStop(func(runID string))
}

// Process is a serving process's lease.
type Process struct {
	ID       string
	Hostname string
	PID      int
	BuildID  string
}

// Leases keeps serving processes' leases: a heartbeat row each. A process is
// gone when its row is missing or its heartbeat is older than the stale time.
type Leases interface {
	Register(ctx context.Context, p Process) error
	Heartbeat(ctx context.Context, id string) error
	Remove(ctx context.Context, id string) error
	// Alive reports whether id's lease is current.
	Alive(ctx context.Context, id string, staleAfter time.Duration) (bool, error)
}

// Attestations keeps the model's attestation reports by the SHA-256 of their
// exact bytes.
type Attestations interface {
	// Put stores a report and returns its SHA-256 (hex); storing it twice is one.
	Put(ctx context.Context, body []byte) (string, error)
	// Get returns the exact bytes stored, or errs.NotFound.
	Get(ctx context.Context, sha256 string) ([]byte, error)
}

// ModelTool is a tool offered to the model.
type ModelTool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// ModelRequest is one completion asked of the model.
type ModelRequest struct {
	Model     string // empty: the provider's default
	Effort    string // empty: none asked; sent only to a model that offers it
	Messages  []runs.Message
	Tools     []ModelTool
	MaxTokens int
	// NoFallback: this call may not fall back to another model (the hold
	// for it did not count one: it did not fit).
	NoFallback bool
	// Held is the worst case the ledger held for this call (nil: none was):
	// a call cut after the provider had it is charged no more input than
	// it, and a provider counting more input than it is caught.
	Held *WorstCall
	// FallbackOf is the worst case of the call this one falls back from
	// (ModelFallbacks.FallbackFor; nil: none): that attempt failed on the
	// provider's side without saying its cost, so it counts at this call's
	// input in full on its own model, never past the input it was held at,
	// and this call's worst case and cost include it.
	FallbackOf *WorstCall
}

// ErrModelUnavailable is a call the provider failed on its side (5xx, 429,
// no answer) before it answered: a fallback model may answer it instead.
var ErrModelUnavailable = errors.New("the model provider failed on its side")

// ModelFallbacks is a provider with a fallback model. A call is held and
// sent on its own model; when it fails with ErrModelUnavailable its hold is
// released and the fallback's request, held on its own when it fits, is
// sent instead (so no call's hold carries a fallback it rarely needs).
type ModelFallbacks interface {
	// FallbackFor is req asked of the fallback model after req, held at
	// failed, failed; false when no other model may answer it.
	FallbackFor(req ModelRequest, failed WorstCall) (ModelRequest, bool)
}

// ModelOffer is one model a chat may run on, and the reasoning efforts it
// offers (none: the model takes no effort).
type ModelOffer struct {
	ID      string
	Efforts []string
}

// ModelAnswer is one completion.
type ModelAnswer struct {
	Message      runs.Message // the assistant's message: words and tool calls
	Model        string       // the model that answered
	FallbackUsed bool
	ChatID       string // the completion's id
	InferenceID  string // the Inference-Id header
	Tokens       runs.Tokens
	Cost         credit.Micros // what the call cost at the model's list prices
	// Truncated: the answer stopped at max_tokens (finish_reason length):
	// its words or its tool calls may be cut short.
	Truncated bool
	// Cut: the call was cut (a stop, the chat's time, a timeout) after the
	// provider had the request. Complete then returns its error with an
	// answer saying what the call is known to have cost: its input at least
	// (Tokens.In, Cost), and InferenceID when the answer's headers came, so
	// reconciliation with the bill can correct it.
	Cut bool
}

// WorstCall is the most one model call can cost and how: the model asked,
// at its bounds and prices; and when a fallback may answer instead and that
// way costs more (the failed attempt's input, then the fallback's whole
// call), the fallback.
type WorstCall struct {
	Model           string
	InputTokensMax  int64
	OutputTokensMax int64
	InPerMTok       credit.Micros
	OutPerMTok      credit.Micros
	// Fallback names the fallback when the worst case is the way through it.
	Fallback string
	Bill     credit.Micros
	// FallbackInputTokensMax is the fallback's input bound (0: none may
	// answer this call).
	FallbackInputTokensMax int64
	// Source says where InputTokensMax came from: "bytes" (one token a
	// byte of the request), "prefix" (the provider's count for the same
	// head and messages, and a byte a token for the messages since),
	// "other_head" (its count for the messages under another head, with
	// what is known of this head's), "head" (this head's, and a byte a
	// token for every message) or "distrusted" (bytes: the model's counts
	// were once passed).
	Source string
}

// ModelBounds is a provider whose worst cases use what it has counted
// before (ports.PromptCounts), so finding one reads the store.
type ModelBounds interface {
	// WorstCallFor is WorstCall with what is known of the request's
	// prefix; it never fails for want of the store (the byte bound holds).
	WorstCallFor(ctx context.Context, req ModelRequest) WorstCall
}

// ModelProvider answers completions (NEAR AI, or the recorded transcript).
type ModelProvider interface {
	// Name is "recorded" for the recorded provider, else the provider's name.
	Name() string
	// Models is the catalogue a chat may pick from (the allow-list), with the
	// efforts each offers.
	Models() []ModelOffer
	// Complete asks for one non-streamed completion with tool calls.
	Complete(ctx context.Context, req ModelRequest) (ModelAnswer, error)
	// WorstCase is the most req can cost (its input and max_tokens at the
	// model's prices), which the ledger holds before the call: always
	// WorstCall(req).Bill.
	WorstCase(req ModelRequest) credit.Micros
	// WorstCall is WorstCase with how it comes about, for a quote.
	WorstCall(req ModelRequest) WorstCall
	// Sign fetches the completion's signature (and stores the attestation
	// report it points to); nil when the provider gives none.
	Sign(ctx context.Context, answer ModelAnswer) (*runs.Signature, error)
}

// ModelPrice is one catalogue model's list prices, and where they came
// from: NEAR AI's model list (ReadAt: when it was read), or the table petal
// ships (ReadAt nil) when the list hasn't been read or doesn't price it.
type ModelPrice struct {
	Model         string
	InputPerMTok  credit.Micros
	CachedPerMTok credit.Micros
	OutputPerMTok credit.Micros
	Source        string
	ReadAt        *time.Time
}

// ModelPrices is a provider whose prices are read from its own list.
type ModelPrices interface {
	// ModelPrices are the catalogue's prices as calls are held and charged now.
	ModelPrices() []ModelPrice
}
