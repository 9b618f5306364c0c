package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/domain/specs"
	"github.com/petal-near/petal/ports"
)

// The flower tools' contract names.
const (
	ToolComputeFigures = "compute_figures"
	ToolProposeSpec    = "propose_spec"
	ToolValidateSpec   = "validate_spec"
	ToolRenderFlower   = "render_flower"
)

// MaxIntent bounds propose_spec's intent, in characters.
const MaxIntent = 2000

// FlowerService is figures, specs and flowers: from a stored snapshot to a
// picture. Specs are kept by their name when proposed, validated (valid) or
// rendered, so a draft link finds them.
type FlowerService struct {
	snapshots ports.SnapshotStore
	specs     ports.SpecStore
	decoded   *snapshotCache
}

// CachedAccounts bounds the decoded snapshots a flower service keeps in
// memory, in accounts: three of the largest. A snapshot never changes under
// its name, so a decoded one is good for as long as it is kept; reading and
// decoding 100,000 accounts takes about 200 ms, and the agent draws each
// flower twice (the tool, then its flower event).
const CachedAccounts = 3 * snapshots.MaxAccounts

var _ ToolSet = (*FlowerService)(nil)

// NewFlowerService makes the flower service over the snapshot and spec stores.
func NewFlowerService(snapshots ports.SnapshotStore, specs ports.SpecStore) *FlowerService {
	return &FlowerService{snapshots: snapshots, specs: specs, decoded: newSnapshotCache(CachedAccounts)}
}

// load reads a stored snapshot, decoded, from the cache when it holds it.
// The snapshot it gives is shared: read it, never change it.
func (s *FlowerService) load(ctx context.Context, sha string) (*snapshots.Snapshot, error) {
	if snap, ok := s.decoded.get(sha); ok {
		return snap, nil
	}
	snap, err := LoadSnapshot(ctx, s.snapshots, sha)
	if err != nil {
		return nil, err
	}
	s.decoded.put(sha, &snap)
	return &snap, nil
}

// snapshotCache keeps the most recently used decoded snapshots, up to a
// number of accounts in all.
type snapshotCache struct {
	mu     sync.Mutex
	limit  int
	held   int
	recent []string // least recently used first
	byName map[string]*snapshots.Snapshot
}

func newSnapshotCache(limit int) *snapshotCache {
	return &snapshotCache{limit: limit, byName: map[string]*snapshots.Snapshot{}}
}

func (c *snapshotCache) get(sha string) (*snapshots.Snapshot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	snap, ok := c.byName[sha]
	if ok {
		c.touch(sha)
	}
	return snap, ok
}

func (c *snapshotCache) put(sha string, snap *snapshots.Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byName[sha]; ok || len(snap.Accounts) > c.limit {
		return
	}
	c.byName[sha] = snap
	c.recent = append(c.recent, sha)
	c.held += len(snap.Accounts)
	for c.held > c.limit && len(c.recent) > 0 {
		old := c.recent[0]
		c.recent = c.recent[1:]
		c.held -= len(c.byName[old].Accounts)
		delete(c.byName, old)
	}
}

func (c *snapshotCache) touch(sha string) {
	if i := slices.Index(c.recent, sha); i >= 0 {
		c.recent = append(append(c.recent[:i:i], c.recent[i+1:]...), sha)
	}
}

// FiguresResult is what compute_figures answers.
type FiguresResult struct {
	SHA256 string `json:"sha256"`
	snapshots.FigureSet
}

// Proposal is what propose_spec answers.
type Proposal struct {
	Spec           specs.Spec `json:"spec"`
	SpecSHA256     string     `json:"spec_sha256"`
	Interpretation string     `json:"interpretation"`
}

// Validation is what validate_spec answers, and the flower event's validation.
type Validation struct {
	Valid      bool           `json:"valid"`
	Problems   []errs.Problem `json:"problems"`
	SpecSHA256 string         `json:"spec_sha256,omitempty"` // additive: the name of a valid spec
}

// Rendered is what render_flower answers. The HTTP door writes SVG alone for
// ?format=svg.
type Rendered struct {
	SVG          string              `json:"svg"`
	SpecSHA256   string              `json:"spec_sha256"`
	RenderSHA256 string              `json:"render_sha256"`
	Legend       []specs.LegendEntry `json:"legend"`
}

// FlowerEvent is the agent's `flower` event: the spec drawn, its name, the
// picture's name, the draft link, the legend, what it shows and its
// validation.
type FlowerEvent struct {
	Spec           specs.Spec          `json:"spec"`
	SpecSHA256     string              `json:"spec_sha256"`
	RenderSHA256   string              `json:"render_sha256"`
	ViewURL        string              `json:"view_url"`
	Legend         []specs.LegendEntry `json:"legend"`
	Interpretation string              `json:"interpretation"`
	Validation     Validation          `json:"validation"`
}

// checked is a spec that passed validation, with its snapshot.
type checked struct {
	spec      specs.Spec
	sha       string
	canonical []byte
	snap      *snapshots.Snapshot
}

// ComputeFigures is compute_figures over a stored snapshot (sha) or one given
// inline (raw); group limits the per-group figures to one group.
func (s *FlowerService) ComputeFigures(ctx context.Context, sha string, raw json.RawMessage, group string) (FiguresResult, error) {
	var snap snapshots.Snapshot
	switch {
	case sha != "" && len(raw) > 0:
		return FiguresResult{}, errs.New(errs.BadInput, "give sha256 or snapshot, not both")
	case sha != "":
		loaded, err := s.load(ctx, sha)
		if err != nil {
			return FiguresResult{}, err
		}
		snap = *loaded
	case len(raw) > 0:
		var err error
		if snap, sha, _, err = snapshots.Parse(raw); err != nil {
			return FiguresResult{}, err
		}
	default:
		return FiguresResult{}, errs.New(errs.BadInput, "sha256 or snapshot is required", "name a stored snapshot by its sha256, or send one inline")
	}
	fs, err := snapshots.ComputeFigures(&snap, group)
	if err != nil {
		return FiguresResult{}, err
	}
	return FiguresResult{SHA256: sha, FigureSet: fs}, nil
}

// Propose is propose_spec: a good spec for a stored snapshot, kept by name.
func (s *FlowerService) Propose(ctx context.Context, sha, intent string) (Proposal, error) {
	if n := utf8.RuneCountInString(intent); n > MaxIntent {
		return Proposal{}, errs.Newf(errs.BadInput, "intent is %d characters; at most %d", n, MaxIntent)
	}
	snap, err := s.load(ctx, sha)
	if err != nil {
		return Proposal{}, err
	}
	spec, err := specs.Propose(snap, sha, intent)
	if err != nil {
		return Proposal{}, err
	}
	f, err := specs.Layout(spec, snap)
	if err != nil {
		return Proposal{}, err
	}
	name, canonical, err := specs.Name(spec)
	if err != nil {
		return Proposal{}, errs.New(errs.Internal, "the spec could not be named").WithCause(err)
	}
	if err := s.keep(ctx, name, sha, canonical); err != nil {
		return Proposal{}, err
	}
	return Proposal{Spec: spec, SpecSHA256: name, Interpretation: specs.Interpret(f)}, nil
}

// Validate is validate_spec: the schema's problems, then the snapshot's (not
// stored, unknown groups). A valid spec is kept by name.
func (s *FlowerService) Validate(ctx context.Context, raw json.RawMessage) (Validation, error) {
	c, problems, err := s.check(ctx, raw)
	if err != nil {
		return Validation{}, err
	}
	if len(problems) > 0 {
		return Validation{Valid: false, Problems: problems}, nil
	}
	return Validation{Valid: true, Problems: []errs.Problem{}, SpecSHA256: c.sha}, nil
}

// Render is render_flower: a valid spec drawn through a view (the default
// view when rawView is empty). An invalid spec is invalid_spec with the
// problems validate_spec gives.
func (s *FlowerService) Render(ctx context.Context, rawSpec, rawView json.RawMessage) (Rendered, error) {
	_, r, err := s.draw(ctx, rawSpec, rawView)
	if err != nil {
		return Rendered{}, err
	}
	return r, nil
}

// Flower draws a spec for the agent's `flower` event, with the default view
// when rawView is empty. An invalid spec gives its validation and the
// invalid_spec error.
func (s *FlowerService) Flower(ctx context.Context, rawSpec, rawView json.RawMessage) (FlowerEvent, error) {
	f, r, err := s.draw(ctx, rawSpec, rawView)
	if err != nil {
		ev := FlowerEvent{}
		if e, ok := errs.As(err); ok && e.Code == errs.InvalidSpec {
			ev.Validation = Validation{Valid: false, Problems: e.Problems}
		}
		return ev, err
	}
	return FlowerEvent{
		Spec:           f.Spec,
		SpecSHA256:     r.SpecSHA256,
		RenderSHA256:   r.RenderSHA256,
		ViewURL:        "/d/" + r.SpecSHA256,
		Legend:         r.Legend,
		Interpretation: specs.Interpret(f),
		Validation:     Validation{Valid: true, Problems: []errs.Problem{}, SpecSHA256: r.SpecSHA256},
	}, nil
}

func (s *FlowerService) draw(ctx context.Context, rawSpec, rawView json.RawMessage) (*specs.Flower, Rendered, error) {
	view := specs.DefaultView()
	if len(bytes.TrimSpace(rawView)) > 0 && string(bytes.TrimSpace(rawView)) != "null" {
		v, problems := specs.ParseView(rawView)
		if len(problems) > 0 {
			for i := range problems {
				problems[i].Path = "/view" + problems[i].Path
			}
			e := errs.Newf(errs.BadInput, "the view is not a valid view/v1: %s: %s", problems[0].Path, problems[0].Message).
				WithHint("see docs/schemas/view-v1.schema.json, or leave view out for the default")
			e.Problems = problems
			return nil, Rendered{}, e
		}
		view = v
	}
	c, problems, err := s.check(ctx, rawSpec)
	if err != nil {
		return nil, Rendered{}, err
	}
	if len(problems) > 0 {
		return nil, Rendered{}, InvalidSpec(problems)
	}
	f, err := specs.Layout(c.spec, c.snap)
	if err != nil {
		return nil, Rendered{}, err
	}
	out := specs.Render(f, view)
	return f, Rendered{SVG: string(out.SVG), SpecSHA256: c.sha, RenderSHA256: out.SHA256, Legend: out.Legend}, nil
}

// InvalidSpec is the invalid_spec error carrying a spec's problems.
func InvalidSpec(problems []errs.Problem) *errs.Error {
	msg := fmt.Sprintf("the spec is not valid: %s: %s", pointerOrRoot(problems[0].Path), problems[0].Message)
	if len(problems) > 1 {
		msg += fmt.Sprintf(" (and %d more problems)", len(problems)-1)
	}
	e := errs.New(errs.InvalidSpec, msg, "validate_spec lists every problem; see docs/schemas/flower-spec-v1.schema.json")
	e.Problems = problems
	return e
}

func pointerOrRoot(p string) string {
	if p == "" {
		return "the spec"
	}
	return p
}

// check validates a spec against the schema and its stored snapshot, and
// keeps a valid one. Problems are the caller's to report; err is anything
// else (the store failing).
func (s *FlowerService) check(ctx context.Context, raw json.RawMessage) (checked, []errs.Problem, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return checked{}, nil, errs.New(errs.BadInput, "spec is required", "send a flower-spec/v1 object as spec")
	}
	spec, problems := specs.ParseSpec(raw)
	if len(problems) > 0 {
		return checked{}, problems, nil
	}
	snap, err := s.load(ctx, spec.Snapshot)
	if errs.Is(err, errs.NotFound) {
		return checked{}, []errs.Problem{{Path: "/snapshot", Message: "no snapshot " + spec.Snapshot + " is stored here"}}, nil
	}
	if err != nil {
		return checked{}, nil, err
	}
	if problems := specs.CheckAgainst(spec, spec.Snapshot, snap); len(problems) > 0 {
		return checked{}, problems, nil
	}
	name, canonical, err := specs.Name(spec)
	if err != nil {
		return checked{}, nil, errs.New(errs.Internal, "the spec could not be named").WithCause(err)
	}
	if err := s.keep(ctx, name, spec.Snapshot, canonical); err != nil {
		return checked{}, nil, err
	}
	return checked{spec: spec, sha: name, canonical: canonical, snap: snap}, nil, nil
}

func (s *FlowerService) keep(ctx context.Context, name, snapshot string, canonical []byte) error {
	if _, err := s.specs.Keep(ctx, name, snapshot, canonical); err != nil {
		return errs.New(errs.Internal, "the spec could not be kept").WithCause(err)
	}
	return nil
}

// Draft is the canonical JSON of a kept spec, for /d/:hash. It is hashed
// again on read: a body that no longer matches its name is never served.
func (s *FlowerService) Draft(ctx context.Context, hash string) ([]byte, error) {
	if !sha256Hex.MatchString(hash) {
		return nil, errs.Newf(errs.NotFound, "no draft %s", cutForMessage(hash))
	}
	body, err := s.specs.Get(ctx, hash)
	if errs.Is(err, errs.NotFound) {
		return nil, errs.Newf(errs.NotFound, "no draft %s", hash)
	}
	if err != nil {
		return nil, errs.New(errs.Internal, "the draft could not be read").WithCause(err)
	}
	if got := canon.Sum(body); got != hash {
		return nil, errs.New(errs.Internal, "a kept spec does not match its name").
			WithCause(fmt.Errorf("spec %s hashes to %s", hash, got))
	}
	return body, nil
}

func cutForMessage(s string) string {
	if utf8.RuneCountInString(s) > 80 {
		return string([]rune(s)[:80]) + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Tools implements ToolSet.
func (s *FlowerService) Tools() []Tool {
	return []Tool{
		{
			Name:        ToolComputeFigures,
			Description: "Concentration figures of a snapshot, exact from its decimal weights: count, total weight, the shares of the top account, the top 10 and the top 1% (rounded up to whole accounts), the Gini coefficient (population form), the Nakamoto coefficient (the fewest accounts holding more than half) and the Herfindahl–Hirschman index, for the whole snapshot and each group. Fractions are rounded half to even to six decimals; a share of nothing is null.",
			Input:       json.RawMessage(figuresInputSchema),
			Output:      json.RawMessage(figuresOutputSchema),
			Run: func(ctx context.Context, call Call) (any, error) {
				var in struct {
					SHA256   string          `json:"sha256"`
					Snapshot json.RawMessage `json:"snapshot"`
					Group    string          `json:"group"`
				}
				if err := DecodeInput(call.Input, &in); err != nil {
					return nil, err
				}
				if in.SHA256 != "" {
					if err := CheckSHA256("sha256", in.SHA256); err != nil {
						return nil, err
					}
				}
				if string(bytes.TrimSpace(in.Snapshot)) == "null" {
					in.Snapshot = nil
				}
				return s.ComputeFigures(ctx, in.SHA256, in.Snapshot, in.Group)
			},
		},
		{
			Name:        ToolProposeSpec,
			Description: "Propose a flower spec (flower-spec/v1) for a stored snapshot: enough petals to show its shape, the tail folded into one \"others\" petal, colours that tell its groups apart, with a sentence saying what the flower shows. intent, in plain words, can ask for \"top 20\", \"equal sizes\", \"square root\", \"colour by band\", \"no labels\", \"by name\", \"hide others\" or \"only <group>\". The spec is kept, so /d/<spec_sha256> opens it.",
			Input:       json.RawMessage(proposeInputSchema),
			Output:      json.RawMessage(`{"type":"object","required":["spec","spec_sha256","interpretation"],"properties":{"spec":` + specs.SpecJSONSchema + `,"spec_sha256":{"type":"string"},"interpretation":{"type":"string"}}}`),
			Run: func(ctx context.Context, call Call) (any, error) {
				var in struct {
					SHA256 string `json:"sha256"`
					Intent string `json:"intent"`
				}
				if err := DecodeInput(call.Input, &in); err != nil {
					return nil, err
				}
				return s.Propose(ctx, in.SHA256, in.Intent)
			},
		},
		{
			Name:        ToolValidateSpec,
			Description: "Check a flower spec against flower-spec/v1 and against its snapshot (stored here, groups it names exist, at most 60 petals). Answers { valid, problems: [{ path, message }] } with JSON Pointer paths; a valid spec is kept, so /d/<spec_sha256> opens it.",
			Input:       json.RawMessage(`{"type":"object","additionalProperties":false,"required":["spec"],"properties":{"spec":{"description":"a flower-spec/v1 to check (docs/schemas/flower-spec-v1.schema.json)"}}}`),
			Output:      json.RawMessage(validationSchema),
			Run: func(ctx context.Context, call Call) (any, error) {
				var in struct {
					Spec json.RawMessage `json:"spec"`
				}
				if err := DecodeInput(call.Input, &in); err != nil {
					return nil, err
				}
				return s.Validate(ctx, in.Spec)
			},
		},
		{
			Name:        ToolRenderFlower,
			Description: "Draw a flower spec as SVG: petals around a centre, each petal's area proportional to its size, colour-blind-safe colours, a title and description for screen readers, every name escaped. The same spec, snapshot and view give the same bytes and render_sha256. view (view/v1) changes only how it is drawn: palette and labels; without it the default view. An invalid spec is invalid_spec with the problems validate_spec gives.",
			Input:       json.RawMessage(`{"type":"object","additionalProperties":false,"required":["spec"],"properties":{"spec":` + specs.SpecJSONSchema + `,"view":` + specs.ViewJSONSchema + `}}`),
			Output:      json.RawMessage(renderOutputSchema),
			Run: func(ctx context.Context, call Call) (any, error) {
				var in struct {
					Spec json.RawMessage `json:"spec"`
					View json.RawMessage `json:"view"`
				}
				if err := DecodeInput(call.Input, &in); err != nil {
					return nil, err
				}
				return s.Render(ctx, in.Spec, in.View)
			},
		},
	}
}

const figuresInputSchema = `{
  "type": "object",
  "additionalProperties": false,
  "properties": {
    "sha256": { "type": "string", "pattern": "^[0-9a-f]{64}$", "description": "a stored snapshot's name" },
    "snapshot": { "type": "object", "description": "a snapshot/v1 sent inline instead of sha256" },
    "group": { "type": "string", "description": "only this group's figures in groups" }
  }
}`

const figureProperties = `
    "count": { "type": "integer" },
    "total_weight": { "type": "string", "description": "exact decimal" },
    "top1_share": { "type": ["number", "null"] },
    "top10_share": { "type": ["number", "null"] },
    "top1pct_share": { "type": ["number", "null"] },
    "top1pct_count": { "type": "integer" },
    "gini": { "type": ["number", "null"] },
    "nakamoto": { "type": ["integer", "null"] },
    "hhi": { "type": ["number", "null"] }`

const figuresOutputSchema = `{
  "type": "object",
  "required": ["sha256", "count", "total_weight", "top1_share", "top10_share", "top1pct_share", "gini", "nakamoto", "hhi", "groups"],
  "properties": {
    "sha256": { "type": "string" },` + figureProperties + `,
    "groups": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "id": { "type": "string" },
          "label": { "type": "string" },
          "share": { "type": ["number", "null"] },` + figureProperties + `
        }
      }
    }
  }
}`

const proposeInputSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["sha256"],
  "properties": {
    "sha256": { "type": "string", "pattern": "^[0-9a-f]{64}$", "description": "a stored snapshot's name" },
    "intent": { "type": "string", "maxLength": 2000, "description": "what the person wants to see, in plain words" }
  }
}`

const validationSchema = `{
  "type": "object",
  "required": ["valid", "problems"],
  "properties": {
    "valid": { "type": "boolean" },
    "problems": {
      "type": "array",
      "items": { "type": "object", "required": ["path", "message"], "properties": { "path": { "type": "string" }, "message": { "type": "string" } } }
    },
    "spec_sha256": { "type": "string" }
  }
}`

const renderOutputSchema = `{
  "type": "object",
  "required": ["svg", "spec_sha256", "render_sha256", "legend"],
  "properties": {
    "svg": { "type": "string" },
    "spec_sha256": { "type": "string" },
    "render_sha256": { "type": "string", "description": "SHA-256 of the SVG's bytes" },
    "legend": {
      "type": "array",
      "items": { "type": "object", "required": ["label", "swatch"], "properties": { "label": { "type": "string" }, "swatch": { "type": "string" } } }
    }
  }
}`
