package viewsapp

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/specs"
	"github.com/petal-near/petal/ports"
)

// ViewService keeps each person's view (view/v1), the glasses every flower
// they see is drawn through (docs/people.md). A visitor, and a person who
// hasn't kept one, see through the default view. Views are the person's, not
// a wallet's: the wallet of the session that kept one is noted beside it.
type ViewService struct {
	store  ports.ViewStore
	budget *snapshotsapp.DataBudget
	clock  ports.Clock
	log    *slog.Logger
	kept   ports.Counter
	reads  ports.Counter
}

// PersonViews is what draws through a person's view: the flower service and
// the map's lists ask it for the view of whoever is asking.
type PersonViews interface {
	// PersonView is the view subject sees through: their own, or the
	// default for a visitor or anyone who hasn't kept one.
	PersonView(ctx context.Context, subject string) (specs.View, error)
	// ResolveView is the view a ?view=<hash> names: the default for its
	// whole name or its first twelve characters, else a view someone kept,
	// else not_found.
	ResolveView(ctx context.Context, hash string) (specs.View, error)
}

var _ PersonViews = (*ViewService)(nil)

// NewViewService makes the view service over its store.
func NewViewService(store ports.ViewStore, budget *snapshotsapp.DataBudget, clock ports.Clock, log *slog.Logger, metrics ports.Metrics) *ViewService {
	m := ports.MetricsOrNone(metrics)
	return &ViewService{store: store, budget: budget, clock: clock, log: log,
		kept:  m.Counter("petal_views_kept_total", "Views people kept as their own (PUT /api/v1/me/view)."),
		reads: m.Counter("petal_view_reads_total", "Views read to draw through, by whose: a person's own kept view (own), the default (default), or one named by its hash (hash).", "of"),
	}
}

// ViewAnswer is { view, hash }: a view's canonical JSON, every member
// written out, and its name.
type ViewAnswer struct {
	View json.RawMessage `json:"view"`
	Hash string          `json:"hash"`
}

// KeepViewBody is PUT /api/v1/me/view's body.
type KeepViewBody struct {
	View json.RawMessage `json:"view"`
}

func ViewAnswerOf(v specs.View) (ViewAnswer, error) {
	hash, canonical, err := specs.ViewName(v)
	if err != nil {
		return ViewAnswer{}, err
	}
	return ViewAnswer{View: canonical, Hash: hash}, nil
}

// Mine is GET /api/v1/me/view: subject's own view, or the default.
func (s *ViewService) Mine(ctx context.Context, subject string) (ViewAnswer, error) {
	v, err := s.PersonView(ctx, subject)
	if err != nil {
		return ViewAnswer{}, err
	}
	return ViewAnswerOf(v)
}

// Keep is PUT /api/v1/me/view: a signed-in session's person keeps raw as
// their view, with the session's credential and the time beside it. A view
// that isn't a view/v1 is bad_input listing every problem, and keeps nothing.
func (s *ViewService) Keep(ctx context.Context, sess people.Session, raw json.RawMessage) (ViewAnswer, error) {
	if !sess.Signed() {
		return ViewAnswer{}, errs.New(errs.Unauthorised, "sign in first", "sign in with your NEAR wallet: ask for a challenge, then verify it signed (NEP-413)")
	}
	v, err := ParseViewInput(raw, "/view")
	if err != nil {
		return ViewAnswer{}, err
	}
	ans, err := ViewAnswerOf(v)
	if err != nil {
		return ViewAnswer{}, err
	}
	// A person's writes aren't counted (they answer for what they keep), but
	// the write goes through the budget like every other, so a change to who
	// is counted reaches it.
	refund, err := s.budget.Spend(ctx, sess.Subject, int64(len(ans.View))+snapshotsapp.RowBytes)
	if err != nil {
		return ViewAnswer{}, err
	}
	kept := ports.KeptView{Hash: ans.Hash, Body: ans.View, Credential: sess.WalletID, Session: sess.ID, KeptAt: s.clock.Now().UTC()}
	if err := s.store.KeepView(ctx, sess.Subject, kept); err != nil {
		refund()
		return ViewAnswer{}, errs.New(errs.Internal, "the view could not be kept").WithCause(err)
	}
	s.kept.Add(1)
	return ans, nil
}

// ByHash is GET /api/v1/views/:hash: any kept view, and the default without
// anyone keeping it.
func (s *ViewService) ByHash(ctx context.Context, hash string) (ViewAnswer, error) {
	v, err := s.ResolveView(ctx, hash)
	if err != nil {
		return ViewAnswer{}, err
	}
	return ViewAnswerOf(v)
}

// PersonView implements PersonViews.
func (s *ViewService) PersonView(ctx context.Context, subject string) (specs.View, error) {
	if !people.IsPerson(subject) {
		s.reads.Add(1, "default")
		return specs.DefaultView(), nil
	}
	kept, err := s.store.PersonView(ctx, subject)
	if errs.Is(err, errs.NotFound) {
		s.reads.Add(1, "default")
		return specs.DefaultView(), nil
	}
	if err != nil {
		return specs.View{}, errs.New(errs.Internal, "your view could not be read").WithCause(err)
	}
	s.reads.Add(1, "own")
	return s.parseKept(kept.Body)
}

// ResolveView implements PersonViews.
func (s *ViewService) ResolveView(ctx context.Context, hash string) (specs.View, error) {
	if specs.NamesDefaultView(hash) {
		s.reads.Add(1, "default")
		return specs.DefaultView(), nil
	}
	notFound := errs.New(errs.NotFound, "no view has that hash", "your own view comes with its hash; the default view's hash works everywhere")
	if !specs.IsViewName(hash) {
		return specs.View{}, notFound
	}
	body, err := s.store.View(ctx, hash)
	if errs.Is(err, errs.NotFound) {
		return specs.View{}, notFound
	}
	if err != nil {
		return specs.View{}, errs.New(errs.Internal, "the view could not be read").WithCause(err)
	}
	s.reads.Add(1, "hash")
	return s.parseKept(body)
}

// parseKept reads a kept view's body; it was checked when kept.
func (s *ViewService) parseKept(body []byte) (specs.View, error) {
	v, problems := specs.ParseView(body)
	if len(problems) > 0 {
		return specs.View{}, errs.Newf(errs.Internal, "a kept view no longer reads as view/v1: %s: %s", problems[0].Path, problems[0].Message)
	}
	return v, nil
}

// ParseViewInput reads a view/v1 a caller sent at path (a JSON Pointer such
// as /view): bad_input naming the first problem and listing them all.
func ParseViewInput(raw json.RawMessage, path string) (specs.View, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return specs.View{}, errs.Newf(errs.BadInput, "%s is required: a view/v1", path).
			WithHint(`send { "view": { "schema": "view/v1", "palette": "okabe-ito" } }; see docs/schemas/view-v1.schema.json`)
	}
	v, problems := specs.ParseView(raw)
	if len(problems) > 0 {
		for i := range problems {
			problems[i].Path = path + problems[i].Path
		}
		e := errs.Newf(errs.BadInput, "the view is not a valid view/v1: %s: %s", problems[0].Path, problems[0].Message).
			WithHint("see docs/schemas/view-v1.schema.json")
		e.Problems = problems
		return specs.View{}, e
	}
	return v, nil
}
