package agentapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petal-near/petal/app/agentjobsapp"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// Why a run's job was cancelled.
var (
	errStopped  = errors.New("stopped")
	errShutdown = errors.New("the process is shutting down")
	errFenced   = errors.New("the process lost its lease")
	errTimeout  = errors.New("the chat ran out of time")
)

// AgentService runs Petals' agent: a chat is a run, a job in this process
// whose events go to the run's log; viewers only read the log.
type AgentService struct {
	tracer    trace.Tracer // the chat's spans (agent_spans.go); no-op when tracing is off
	cfg       config.Config
	store     ports.RunStore
	bus       ports.EventBus
	leases    ports.Leases
	model     ports.ModelProvider
	attest    ports.Attestations
	registry  *toolkit.Registry
	flowers   FlowerDrawer
	access    *moneyapp.Access
	ledger    *moneyapp.Ledger
	pay       *moneyapp.PayService // reconciles a person's calls with NEAR AI's bill before their chat
	snapshots ports.SnapshotStore
	limiter   ports.RateLimiter
	budget    *snapshotsapp.DataBudget // what strangers' chats store
	log       *slog.Logger
	process   jobsapp.ProcessID
	random    ports.Random
	opens     ports.Opens           // when each run was last opened, for retention; nil: not noted
	jobNotes  agentjobsapp.JobNotes // the person's agents and jobs, for the system message; nil: none
	earlier   EarlierReadings       // a read target's earlier reading on the map; nil: none said
	quotes    ports.ChatQuotes
	quoted    ports.Counter // quotes made, bound and refused
	lastCalls ports.Counter // calls made without tools because the budget left paid for an answer only
	attempts  ports.Counter // model calls asked again: after a cut at max_tokens, or on the fallback
	landing   *landing      // the writes that must land: a run's end, a hold's release
	pricing   chan struct{} // quotes priced at once (each builds nine requests)
	clock     ports.Clock
	tails     *tailCache
	own       map[string]*ownTool // the agent's own tools (name_conversation), by name

	life     context.Context
	shutdown context.CancelCauseFunc

	heartbeat atomic.Int64 // nanoseconds between heartbeats (runs.HeartbeatEvery)
	fenced    atomic.Bool  // the lease lapsed: no new chats until it beats again

	mu   sync.Mutex
	jobs map[string]*job
	wg   sync.WaitGroup
}

type job struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// AgentDeps is what the agent runs over.
type AgentDeps struct {
	Config       config.Config
	Runs         ports.RunStore
	Bus          ports.EventBus
	Leases       ports.Leases
	Model        ports.ModelProvider
	Attestations ports.Attestations
	Registry     *toolkit.Registry
	Flowers      FlowerDrawer // the flower event; nil: none
	Access       *moneyapp.Access
	Ledger       *moneyapp.Ledger
	Pay          *moneyapp.PayService // reconciles a person's calls with NEAR AI's bill before their chat; nil: not
	Snapshots    ports.SnapshotStore
	Limiter      ports.RateLimiter
	Log          *slog.Logger
	Process      jobsapp.ProcessID
	Random       ports.Random             // run ids
	Budget       *snapshotsapp.DataBudget // what strangers' chats store; nil: not counted
	Opens        ports.Opens              // notes runs opened, for retention; nil: not noted
	Quotes       ports.ChatQuotes
	Metrics      ports.Metrics // the quotes' counts; nil: none kept
	Clock        ports.Clock
}

// NewAgentService makes the agent over its ports. It starts nothing: Start
// listens for stop requests from other processes.
func NewAgentService(d AgentDeps) *AgentService {
	life, shutdown := context.WithCancelCause(context.Background())
	a := &AgentService{cfg: d.Config, store: d.Runs, bus: d.Bus, leases: d.Leases, model: d.Model, attest: d.Attestations,
		registry: d.Registry, flowers: d.Flowers, access: d.Access, ledger: d.Ledger, pay: d.Pay, snapshots: d.Snapshots,
		limiter: d.Limiter, log: d.Log, process: d.Process, random: d.Random, budget: d.Budget, opens: d.Opens, quotes: d.Quotes, clock: d.Clock, tails: newTailCache(d.Runs, d.Bus), life: life, shutdown: shutdown, jobs: map[string]*job{}}
	a.pricing = make(chan struct{}, quotesPricedAtOnce)
	a.quoted = ports.MetricsOrNone(d.Metrics).Counter("petal_chat_quotes_total",
		"Chats' quotes: made, bound to a chat, or refused to one (used, expired, for other messages).", "outcome")
	a.lastCalls = ports.MetricsOrNone(d.Metrics).Counter("petal_agent_budget_final_answers_total",
		"Model calls offered no tools because what the chat had left paid for a final answer only (answered_without_tools).", "outcome")
	a.attempts = ports.MetricsOrNone(d.Metrics).Counter("petal_agent_model_attempts_total",
		"Model calls of a round asked again: truncated_asked_again (the answer stopped at its max_tokens, asked again with more), truncated_kept (no more fitted: kept as cut), fallback_held (the call failed on the provider's side, the fallback held and asked), fallback_did_not_fit.",
		"outcome")
	a.landing = newLanding(d.Metrics, d.Random, d.Log)
	a.tracer = newTracer(nil)
	a.heartbeat.Store(int64(runs.HeartbeatEvery))
	a.own = a.ownTools()
	return a
}

// SetJobNotes tells the agent about the person's own agents and jobs.
func (a *AgentService) SetJobNotes(n agentjobsapp.JobNotes) { a.jobNotes = n }

// Start has stop requests from other processes, arriving through the bus,
// stop this process's jobs. A serving process calls it once, before the bus
// listens.
func (a *AgentService) Start() {
	a.bus.OnStop(func(runID string) { a.cancelLocal(runID, errStopped) })
}

// FlowerDrawer draws a spec as the agent's flower event (the flower service).
type FlowerDrawer interface {
	Flower(ctx context.Context, owner string, rawSpec, rawView json.RawMessage) (flowersapp.FlowerEvent, error)
	// ViewFor is the view a drawing for subject goes through: rawView, else
	// their own.
	ViewFor(ctx context.Context, subject string, rawView json.RawMessage) (json.RawMessage, error)
}

// SetHeartbeat changes how often an idle SSE stream gets a heartbeat (tests
// use it; the contract's is every 10 s).
func (a *AgentService) SetHeartbeat(every time.Duration) { a.heartbeat.Store(int64(every)) }

// Process is this process's id.
func (a *AgentService) Process() jobsapp.ProcessID { return a.process }

// Recorded reports whether chats run on the recorded transcript.
func (a *AgentService) Recorded() bool { return a.model.Name() == runs.RecordedModel }

// Run reads a run as caller may see it: a run owned by someone else answers
// exactly as one that never existed.
func (a *AgentService) Run(ctx context.Context, caller toolkit.Caller, id string) (runs.Run, error) {
	run, err := a.store.Get(ctx, id)
	if err != nil {
		if errs.Is(err, errs.NotFound) {
			return run, noRun(id)
		}
		return run, err
	}
	if run.Owner != "" && run.Owner != caller.Subject {
		return runs.Run{}, noRun(id)
	}
	if a.opens != nil {
		// Noted for retention; a failure costs nothing but the note.
		if err := a.opens.RunOpened(ctx, id); err != nil {
			a.log.WarnContext(ctx, "noting a run opened", "run", id, "err", err)
		}
	}
	return run, nil
}

func noRun(id string) *errs.Error { return errs.Newf(errs.NotFound, "no run %s", id) }

// start runs the chat's job in the background, under the process's life.
func (a *AgentService) start(run runs.Run, caller toolkit.Caller, payer *credit.Payer) {
	ctx, cancel := context.WithCancelCause(a.life)
	j := &job{cancel: cancel, done: make(chan struct{})}
	a.mu.Lock()
	a.jobs[run.ID] = j
	a.mu.Unlock()
	if a.fenced.Load() {
		cancel(errFenced) // fenced between Chat's check and here
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer close(j.done)
		defer func() {
			a.mu.Lock()
			if a.jobs[run.ID] == j {
				delete(a.jobs, run.ID)
			}
			a.mu.Unlock()
			cancel(nil)
		}()
		a.execute(ctx, run, caller, payer)
	}()
}

// forChat names the chat payer's per-chat cap counts on: the run and the
// chat's first seq, so a follow-up on a run gets a cap of its own.
func forChat(payer *credit.Payer, runID string, firstSeq int64) *credit.Payer {
	if payer == nil {
		return nil
	}
	p := *payer
	p.Chat = fmt.Sprintf("%s@%d", runID, firstSeq)
	return &p
}

// gate says who pays for a chat on a real model, before any model call
// (nil: nobody needs to, the recorded model spends nothing).
func (a *AgentService) gate(ctx context.Context, caller toolkit.Caller, thread []runs.Message, settings runs.Settings) (*credit.Payer, error) {
	if a.Recorded() || a.access == nil || a.ledger == nil {
		return nil, nil
	}
	// The chat's first call must fit in what its payer has left, on the
	// model the conversation picked.
	p, err := a.access.GateFor(ctx, caller, a.leastFirstCall(ctx, runs.Run{Owner: caller.Subject, Settings: settings}, thread))
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// cancelLocal cancels run's job if this process holds it, and returns its
// done channel.
func (a *AgentService) cancelLocal(runID string, cause error) <-chan struct{} {
	a.mu.Lock()
	j := a.jobs[runID]
	a.mu.Unlock()
	if j == nil {
		return nil
	}
	j.cancel(cause)
	return j.done
}

// Attestation is a stored attestation report, byte for byte.
func (a *AgentService) Attestation(ctx context.Context, sha string) ([]byte, error) {
	if len(sha) != 64 || strings.Trim(sha, "0123456789abcdef") != "" {
		return nil, errs.Newf(errs.NotFound, "no attestation report %s", sha)
	}
	return a.attest.Get(ctx, sha)
}

// Pages of a run's events as JSON (GET /api/v1/agent/runs/:id).
const (
	DefaultEventsPage = 500
	MaxEventsPage     = replayPage
)

// EventsPage is at most limit of a run's events from seq from, in order, and
// the seq the next page starts at (nil after the last stored event).
func (a *AgentService) EventsPage(ctx context.Context, id string, from int64, limit int) ([]runs.Event, *int64, error) {
	if limit <= 0 || limit > MaxEventsPage {
		return nil, nil, errs.Newf(errs.BadInput, "limit must be between 1 and %d", MaxEventsPage)
	}
	evs, err := a.store.Events(ctx, id, from, limit+1)
	if err != nil {
		return nil, nil, err
	}
	if len(evs) <= limit {
		return append([]runs.Event{}, evs...), nil, nil
	}
	next := evs[limit].Seq
	return evs[:limit], &next, nil
}
