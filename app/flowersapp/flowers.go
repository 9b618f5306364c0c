package flowersapp

import (
	"bytes"
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/app/viewsapp"
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
	library *snapshotsapp.SnapshotLibrary
	specs   ports.SpecStore
	views   viewsapp.PersonViews     // whose view a render without one is drawn through; nil: the default's
	names   PetalNamer               // the names a signed-in person gives petals; nil: none
	budget  *snapshotsapp.DataBudget // what a spec a stranger has kept costs; nil: nothing
}

// PetalNamer gives the names a caller gives accounts (account id → name), to
// draw on their own petals; nil for a caller who gives none or may see none.
type PetalNamer interface {
	PetalNames(ctx context.Context, caller toolkit.Caller) (map[string]string, error)
}

// DrawNamesFrom has render_flower draw a signed-in person's own names on the
// petals they name (the annotation service, once it is made).
func (s *FlowerService) DrawNamesFrom(n PetalNamer) { s.names = n }

var _ toolkit.ToolSet = (*FlowerService)(nil)

// NewFlowerService makes the flower service over the snapshot library, the
// spec store, people's views and the data budget (every spec kept for
// someone who isn't signed in counts against it).
func NewFlowerService(library *snapshotsapp.SnapshotLibrary, specs ports.SpecStore, views viewsapp.PersonViews, budget *snapshotsapp.DataBudget) *FlowerService {
	return &FlowerService{library: library, specs: specs, views: views, budget: budget}
}

// ViewFor is the view a drawing for subject goes through: the one it was
// given (rawView), else subject's own view (the default for a visitor).
func (s *FlowerService) ViewFor(ctx context.Context, subject string, rawView json.RawMessage) (json.RawMessage, error) {
	if t := bytes.TrimSpace(rawView); len(t) > 0 && string(t) != "null" {
		return rawView, nil
	}
	if s.views == nil {
		return nil, nil
	}
	v, err := s.views.PersonView(ctx, subject)
	if err != nil {
		return nil, err
	}
	_, canonical, err := specs.ViewName(v)
	return canonical, err
}

// LoadSnapshot reads a stored snapshot, decoded, through the library's cache. The
// snapshot it gives is shared: read it, never change it.
func (s *FlowerService) LoadSnapshot(ctx context.Context, sha string) (snapshotsapp.Loaded, error) {
	return s.library.Load(ctx, sha)
}

// FiguresResult is what compute_figures answers.
type FiguresResult struct {
	SHA256 string `json:"sha256"`
	snapshots.FigureSet
	Origin string `json:"origin,omitempty"` // a stored snapshot's origin; none for one sent inline
	Demo   bool   `json:"demo,omitempty"`
}

// Proposal is what propose_spec answers.
type Proposal struct {
	Spec           specs.Spec `json:"spec"`
	SpecSHA256     string     `json:"spec_sha256"`
	Interpretation string     `json:"interpretation"`
	Demo           bool       `json:"demo,omitempty"` // drawn from the made-up demo reading
}

// Validation is what validate_spec answers, and the flower event's validation.
type Validation struct {
	Valid      bool           `json:"valid"`
	Problems   []errs.Problem `json:"problems"`
	SpecSHA256 string         `json:"spec_sha256,omitempty"` // additive: the name of a valid spec
	Demo       bool           `json:"demo,omitempty"`        // its snapshot is the made-up demo reading
}

// Rendered is what render_flower answers. The HTTP door writes SVG alone for
// ?format=svg.
type Rendered struct {
	SVG          string              `json:"svg"`
	SpecSHA256   string              `json:"spec_sha256"`
	RenderSHA256 string              `json:"render_sha256"`
	Legend       []specs.LegendEntry `json:"legend"`
	Demo         bool                `json:"demo,omitempty"` // drawn from the made-up demo reading
	// Personal is set when the picture carries the caller's own names: the
	// door answers it private, no-store, and it is never cached.
	Personal bool `json:"-"`
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
	Demo           bool                `json:"demo,omitempty"` // drawn from the made-up demo reading
	// Prepare is, for a signed-in person, what prepare_publish answers for
	// this spec: the record and the transaction their wallet may sign. Never
	// sent without their wallet.
	Prepare json.RawMessage `json:"prepare,omitempty"`
}

// CheckedSpec is a spec that passed validation, with its snapshot.
type CheckedSpec struct {
	Spec      specs.Spec
	SHA256    string
	Canonical []byte
	Snapshot  *snapshots.Snapshot
	Demo      bool
}

// ComputeFigures is compute_figures over a stored snapshot (sha) or one given
// inline (raw); group limits the per-group figures to one group.
func (s *FlowerService) ComputeFigures(ctx context.Context, sha string, raw json.RawMessage, group string) (FiguresResult, error) {
	var loaded snapshotsapp.Loaded
	switch {
	case sha != "" && len(raw) > 0:
		return FiguresResult{}, errs.New(errs.BadInput, "give sha256 or snapshot, not both")
	case sha != "":
		var err error
		if loaded, err = s.LoadSnapshot(ctx, sha); err != nil {
			return FiguresResult{}, err
		}
	case len(raw) > 0:
		snap, name, _, err := snapshots.Parse(raw)
		if err != nil {
			return FiguresResult{}, err
		}
		loaded, sha = snapshotsapp.Loaded{Snapshot: &snap}, name
	default:
		return FiguresResult{}, errs.New(errs.BadInput, "sha256 or snapshot is required", "name a stored snapshot by its sha256, or send one inline")
	}
	// A stored snapshot's weights are ranked once, in the cache beside it.
	ranked, err := loaded.Ranked()
	if err != nil {
		return FiguresResult{}, err
	}
	origin := loaded.Origin
	fs, err := ranked.Figures(loaded.Snapshot, group)
	if err != nil {
		return FiguresResult{}, err
	}
	return FiguresResult{SHA256: sha, FigureSet: fs, Origin: origin, Demo: origin == snapshotsapp.OriginDemo}, nil
}

// Propose is propose_spec: a good spec for a stored snapshot, kept by name
// (counted against the data budget for owner, the caller).
func (s *FlowerService) Propose(ctx context.Context, owner, sha, intent string) (Proposal, error) {
	if n := utf8.RuneCountInString(intent); n > MaxIntent {
		return Proposal{}, errs.Newf(errs.BadInput, "intent is %d characters; at most %d", n, MaxIntent)
	}
	loaded, err := s.LoadSnapshot(ctx, sha)
	if err != nil {
		return Proposal{}, err
	}
	snap := loaded.Snapshot
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
	if err := s.KeepSpec(ctx, owner, name, sha, canonical); err != nil {
		return Proposal{}, err
	}
	return Proposal{Spec: spec, SpecSHA256: name, Interpretation: specs.Interpret(f), Demo: loaded.Demo()}, nil
}

// Validate is validate_spec: the schema's problems, then the snapshot's (not
// stored, unknown groups). A valid spec is kept by name, for owner (the
// caller, whom it counts against).
func (s *FlowerService) Validate(ctx context.Context, owner string, raw json.RawMessage) (Validation, error) {
	c, problems, err := s.check(ctx, owner, raw)
	if err != nil {
		return Validation{}, err
	}
	if len(problems) > 0 {
		return Validation{Valid: false, Problems: problems}, nil
	}
	return Validation{Valid: true, Problems: []errs.Problem{}, SpecSHA256: c.SHA256, Demo: c.Demo}, nil
}

// Render is render_flower: a valid spec drawn through a view (the default
// view when rawView is empty). An invalid spec is invalid_spec with the
// problems validate_spec gives.
func (s *FlowerService) Render(ctx context.Context, owner string, rawSpec, rawView json.RawMessage) (Rendered, error) {
	_, r, err := s.draw(ctx, owner, rawSpec, rawView, nil)
	if err != nil {
		return Rendered{}, err
	}
	return r, nil
}

// Flower draws a spec for the agent's `flower` event, with the default view
// when rawView is empty. An invalid spec gives its validation and the
// invalid_spec error. owner is whom the spec kept counts against.
func (s *FlowerService) Flower(ctx context.Context, owner string, rawSpec, rawView json.RawMessage) (FlowerEvent, error) {
	f, r, err := s.draw(ctx, owner, rawSpec, rawView, nil)
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
		Validation:     Validation{Valid: true, Problems: []errs.Problem{}, SpecSHA256: r.SpecSHA256, Demo: r.Demo},
		Demo:           r.Demo,
	}, nil
}

// RenderFor is render_flower for a caller: a signed-in person's picture also
// carries their own names on the petals they name (Personal).
func (s *FlowerService) RenderFor(ctx context.Context, caller toolkit.Caller, rawSpec, rawView json.RawMessage) (Rendered, error) {
	var names map[string]string
	if s.names != nil {
		var err error
		if names, err = s.names.PetalNames(ctx, caller); err != nil {
			return Rendered{}, err
		}
	}
	_, r, err := s.draw(ctx, caller.Subject, rawSpec, rawView, names)
	return r, err
}

// draw lays a spec out and draws it through a view; names (account id →
// name) replace what the petals they name carry.
func (s *FlowerService) draw(ctx context.Context, owner string, rawSpec, rawView json.RawMessage, names map[string]string) (*specs.Flower, Rendered, error) {
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
	c, problems, err := s.check(ctx, owner, rawSpec)
	if err != nil {
		return nil, Rendered{}, err
	}
	if len(problems) > 0 {
		return nil, Rendered{}, InvalidSpec(problems)
	}
	f, err := specs.Layout(c.Spec, c.Snapshot)
	if err != nil {
		return nil, Rendered{}, err
	}
	personal := specs.NamePetals(f, view, names)
	out := specs.Render(f, view)
	return f, Rendered{SVG: string(out.SVG), SpecSHA256: c.SHA256, RenderSHA256: out.SHA256, Legend: out.Legend, Demo: c.Demo, Personal: personal}, nil
}
