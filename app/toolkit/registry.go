// Package toolkit is what every tool is made of and called through: the
// registry the HTTP, MCP and agent doors all call, the caller, typed inputs
// (WithInput) and their validation, strict JSON decoding.
package toolkit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// ToolsVersion is the version of the tool set, carried in every JSON response.
const ToolsVersion = "1.0.0"

// BuildID is stamped at link time (-ldflags "-X …/app/toolkit.BuildID=…").
var BuildID = "dev"

// Door names say which door a call came through.
const (
	DoorHTTP  = "http"
	DoorMCP   = "mcp"
	DoorAgent = "agent"
)

// Caller is who is calling, whichever door they came through.
type Caller struct {
	Door    string
	Address string // the rate-limit key: an IP, an IPv6 /64, or "shared"
	Subject string // the session's subject (prs_… or anon_…), empty without a session
	Session string // the session's id (its hash), empty without a session
	// Run is the run of Petals' agent making the call (door agent only).
	Run string
	// OpenSession opens an anonymous session for a caller without one, at a
	// door that has sessions (nil elsewhere), and answers its subject and id.
	// Services call it through Own only once a request has passed its gate,
	// its limits and its checks, so a refusal leaves no session behind.
	OpenSession func(ctx context.Context) (subject, session string, err error)
}

// Own is the caller with a session: its own, or one opened now through the
// door; a door without sessions leaves the caller as it is.
func (c Caller) Own(ctx context.Context) (Caller, error) {
	if c.Subject != "" || c.OpenSession == nil {
		return c, nil
	}
	subject, session, err := c.OpenSession(ctx)
	if err != nil {
		return c, err
	}
	c.Subject, c.Session, c.OpenSession = subject, session, nil
	return c, nil
}

// Progress is one step of a long tool, forwarded as SSE progress or MCP
// notifications/progress.
type Progress struct {
	Stage   string `json:"stage"`
	Message string `json:"message"`
	Done    *int   `json:"done,omitempty"`
	Total   *int   `json:"total,omitempty"`
}

// Call is one invocation of a tool.
type Call struct {
	Input    json.RawMessage
	Caller   Caller
	Progress func(Progress) // never nil inside Run
	// IdempotencyKey is the HTTP Idempotency-Key header of a create, empty
	// otherwise; the tools that create honour it.
	IdempotencyKey string
}

// Tool is one of petal's tools, registered once and reached through every door.
type Tool struct {
	Name        string
	Description string
	Input       json.RawMessage // JSON Schema of the input object; WithInput makes it
	// InputType is the Go struct Input was generated from (WithInput).
	InputType reflect.Type
	// Output is the JSON Schema of the result, made by WithIO from the Go
	// type the tool's Run answers; Register refuses a tool whose Output is
	// anything else (outputMade is what WithIO made).
	Output     json.RawMessage
	outputMade json.RawMessage
	// OnTheirMachine marks tools that reach outside the site (chain, web, model):
	// a public site refuses them through every door.
	OnTheirMachine bool
	// HiddenFromAgent keeps the tool out of the list Petals' agent offers
	// its model: one that would only fail (search where no provider is set
	// up), or one made for another door (the person's own agent's take_job
	// and report_job, a wallet's publishing, add_annotation beside the
	// agent's own annotate). Every tool offered is paid for in every call's
	// input, at a token a byte in the worst case the ledger holds.
	HiddenFromAgent bool
	// Long tools may send progress.
	Long bool
	// AgentOnly tools are Petals' agent's own (hand_job…): offered to its
	// model alone, and no tool at all through another door.
	AgentOnly bool
	// Hints say what the tool does to the world (tool_hints.go); Register
	// fills them from the table when the tool has none of its own.
	Hints *ToolHints
	Run   func(ctx context.Context, call Call) (any, error)
}

// ToolSet is a service that contributes tools to the registry.
type ToolSet interface {
	Tools() []Tool
}

// Registry is every tool, once. Doors look tools up here and call them through
// Call, which applies the rules every door shares.
type Registry struct {
	tools   []*Tool
	byName  map[string]*Tool
	inputs  map[string]*InputValidator
	public  bool
	limiter ports.RateLimiter
	perMin  int
}

// NewRegistry registers the tools of every set. A duplicate name is a
// programming error and panics at start-up.
func NewRegistry(cfg config.Config, limiter ports.RateLimiter, sets []ToolSet) *Registry {
	r := &Registry{byName: map[string]*Tool{}, inputs: map[string]*InputValidator{}, public: cfg.Public, limiter: limiter, perMin: cfg.ToolCallsPerMinute}
	for _, s := range sets {
		for _, t := range s.Tools() {
			r.Register(t)
		}
	}
	return r
}

// Register adds one tool, compiling its input schema; a schema that does not
// compile is a programming error and panics at start-up.
func (r *Registry) Register(t Tool) {
	if t.Name == "" || t.Run == nil {
		panic("app: a tool needs a name and a function")
	}
	if _, dup := r.byName[t.Name]; dup {
		panic(fmt.Sprintf("app: tool %q registered twice", t.Name))
	}
	if len(t.Input) == 0 {
		t.Input = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	}
	// What a tool answers is described from the Go type its Run returns,
	// never written by hand: a schema in a string drifts from the answer
	// and can't be checked (and {"type":"object"} types it as nothing).
	if len(t.outputMade) == 0 || !bytes.Equal(t.Output, t.outputMade) {
		panic(fmt.Sprintf("app: tool %q: its Output is not its answer type's: make the tool with WithIO", t.Name))
	}
	v, err := CompileInput(t.Name, t.Input)
	if err != nil {
		panic("app: " + err.Error())
	}
	if t.Hints == nil {
		if h, ok := toolHints[t.Name]; ok {
			t.Hints = &h
		}
	}
	tool := t
	r.inputs[t.Name] = v
	r.tools = append(r.tools, &tool)
	r.byName[t.Name] = &tool
}

// Get finds a tool by its contract name, whether or not this site offers it.
func (r *Registry) Get(name string) (*Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// All is every registered tool, sorted by name.
func (r *Registry) All() []*Tool {
	out := append([]*Tool(nil), r.tools...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Offered is the tools this site runs through its doors: on a public site,
// none that reach outside; never Petals' agent's own.
func (r *Registry) Offered() []*Tool {
	var out []*Tool
	for _, t := range r.All() {
		if (!r.public || !t.OnTheirMachine) && !t.AgentOnly {
			out = append(out, t)
		}
	}
	return out
}

// OfferedToAgent is the tools Petals' agent's model may call: what Offered
// has, and its own.
func (r *Registry) OfferedToAgent() []*Tool {
	var out []*Tool
	for _, t := range r.All() {
		if !r.public || !t.OnTheirMachine {
			out = append(out, t)
		}
	}
	return out
}

// Call runs a tool by name with the rules every door shares: public mode's
// refusals, the per-address limit on tool calls, and the input checked
// against the tool's schema before it runs. The agent's own calls are paid
// for and limited per chat, so they don't count against the address.
func (r *Registry) Call(ctx context.Context, name string, call Call) (any, error) {
	t, ok := r.byName[name]
	if !ok || (t.AgentOnly && call.Caller.Door != DoorAgent) {
		return nil, errs.Newf(errs.NotFound, "no tool %s", name)
	}
	if r.public && t.OnTheirMachine {
		return nil, NotOnThisSite(name)
	}
	if call.Caller.Door != DoorAgent && r.limiter != nil {
		if err := r.Limit(ctx, call.Caller.Address); err != nil {
			return nil, err
		}
	}
	if err := r.inputs[name].Check(call.Input); err != nil {
		return nil, err
	}
	if call.Progress == nil {
		call.Progress = func(Progress) {}
	}
	return t.Run(ctx, call)
}

// Limit takes one tool call from address's allowance.
func (r *Registry) Limit(ctx context.Context, address string) error {
	ok, wait, err := r.limiter.Allow(ctx, "tools:"+address, r.perMin, time.Minute)
	if err != nil {
		return errs.New(errs.Internal, "the rate limiter failed").WithCause(err)
	}
	if !ok {
		return RateLimited(fmt.Sprintf("more than %d tool calls a minute from this address", r.perMin), wait)
	}
	return nil
}

// NotOnThisSite is the public site's refusal of a tool that reaches outside it.
func NotOnThisSite(what string) *errs.Error {
	return errs.Newf(errs.NotOnThisSite, "%s runs on your own machine, not on this site", what).
		WithHint("/connect: run petal's tools with your own agent and post what it reads")
}

// RateLimited is the limit error with retry_after_s rounded up to whole seconds.
func RateLimited(message string, wait time.Duration) *errs.Error {
	secs := int(math.Ceil(wait.Seconds()))
	if secs < 1 {
		secs = 1
	}
	return errs.New(errs.RateLimited, message, fmt.Sprintf("try again in %d s", secs)).WithRetryAfter(secs)
}

// DecodeInput reads a tool's input strictly: an unknown field, a wrong type,
// trailing data or a second JSON value is bad_input naming the field. Empty
// input reads as {}.
func DecodeInput(raw json.RawMessage, into any) error {
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = json.RawMessage(`{}`)
	}
	return DecodeStrict(strings.NewReader(string(raw)), into)
}
