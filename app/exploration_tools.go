package app

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/specs"
)

// Schemas of the exploration tools.
var (
	explorationViewSchema = `"id":{"type":"string"},"question":{"type":"string"},"title":{"type":"string"},` +
		`"created_at":{"type":"string","format":"date-time"},"updated_at":{"type":"string","format":"date-time"},` +
		`"access":{"type":"string","enum":["owner","continue","read"]}`
	explorationViewRequired = `"id","question","title","created_at","updated_at","access"`
	stepSchema              = `{"type":"object","properties":{"id":{"type":"string"},"exploration":{"type":"string"},"seq":{"type":"integer"},` +
		`"spec_sha256":{"type":"string"},"spec":{"type":"object"},"note":{"type":"string"},"created_at":{"type":"string","format":"date-time"}},` +
		`"required":["id","exploration","seq","spec_sha256","note","created_at"]}`
	noteSchema = `{"type":"object","properties":{"id":{"type":"string"},"exploration":{"type":"string"},"text":{"type":"string"},` +
		`"created_at":{"type":"string","format":"date-time"}},"required":["id","exploration","text","created_at"]}`
	refProperty = `"exploration":{"type":"string","description":"the exploration's id, or a link's token"}`
)

// Tools implements ToolSet.
func (s *ExplorationService) Tools() []Tool {
	return []Tool{
		{
			Name:        "start_exploration",
			Description: "Start an exploration: a project that keeps the steps and notes of an investigation into one question, shareable with links.",
			Input: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string","description":"what the exploration asks"},` +
				`"title":{"type":"string"}},"required":["question"],"additionalProperties":false}`),
			Output: json.RawMessage(`{"type":"object","properties":{` + explorationViewSchema + `},"required":[` + explorationViewRequired + `]}`),
			Run:    s.start,
		},
		{
			Name:        "list_explorations",
			Description: "The caller's own explorations, the newest first.",
			Input:       json.RawMessage(`{"type":"object","properties":{"limit":{"type":"integer","minimum":1,"maximum":100}},"additionalProperties":false}`),
			Output: json.RawMessage(`{"type":"object","properties":{"explorations":{"type":"array","items":{"type":"object","properties":{` +
				explorationViewSchema + `},"required":[` + explorationViewRequired + `]}}},"required":["explorations"]}`),
			Run: s.list,
		},
		{
			Name:        "get_exploration",
			Description: "One exploration, whole: its question, steps and notes. By id, or by a link's token.",
			Input:       json.RawMessage(`{"type":"object","properties":{` + refProperty + `},"required":["exploration"],"additionalProperties":false}`),
			Output: json.RawMessage(`{"type":"object","properties":{` + explorationViewSchema +
				`,"steps":{"type":"array","items":` + stepSchema + `},"notes":{"type":"array","items":` + noteSchema + `}},` +
				`"required":[` + explorationViewRequired + `,"steps","notes"]}`),
			Run: s.get,
		},
		{
			Name:        "save_step",
			Description: "Save a step of an exploration: a flower spec, inline or by its sha256, with an optional note.",
			Input: json.RawMessage(`{"type":"object","properties":{` + refProperty + `,` +
				`"spec":{"type":"object","description":"the spec itself"},` +
				`"spec_sha256":{"type":"string","pattern":"^[0-9a-f]{64}$","description":"a spec by the SHA-256 of its canonical JSON"},` +
				`"note":{"type":"string"}},"required":["exploration"],"additionalProperties":false}`),
			Output: json.RawMessage(stepSchema),
			Run:    s.saveStep,
		},
		{
			Name:        "add_note",
			Description: "Add a note to an exploration.",
			Input: json.RawMessage(`{"type":"object","properties":{` + refProperty + `,"text":{"type":"string"}},` +
				`"required":["exploration","text"],"additionalProperties":false}`),
			Output: json.RawMessage(noteSchema),
			Run:    s.addNote,
		},
	}
}

func (s *ExplorationService) start(ctx context.Context, call Call) (any, error) {
	var in struct {
		Question string `json:"question"`
		Title    string `json:"title"`
	}
	if err := DecodeInput(call.Input, &in); err != nil {
		return nil, err
	}
	in.Question, in.Title = strings.TrimSpace(in.Question), strings.TrimSpace(in.Title)
	if err := explorations.CheckQuestion(in.Question, in.Title); err != nil {
		return nil, err
	}
	return s.once(ctx, call, "start_exploration", func() (any, error) {
		id, err := explorations.NewID(s.random, explorations.IDPrefix)
		if err != nil {
			return nil, err
		}
		now := s.now()
		e := explorations.Exploration{ID: id, Owner: call.Caller.Subject, Question: in.Question, Title: in.Title, CreatedAt: now, UpdatedAt: now}
		if err := s.store.CreateExploration(ctx, e); err != nil {
			return nil, err
		}
		return viewOf(e, explorations.AccessByID(e, call.Caller.Subject)), nil
	})
}

func (s *ExplorationService) list(ctx context.Context, call Call) (any, error) {
	var in struct {
		Limit int `json:"limit"`
	}
	if err := DecodeInput(call.Input, &in); err != nil {
		return nil, err
	}
	limit, err := explorations.ListLimit(in.Limit)
	if err != nil {
		return nil, err
	}
	out := struct {
		Explorations []ExplorationView `json:"explorations"`
	}{Explorations: []ExplorationView{}}
	if call.Caller.Subject == "" {
		return out, nil // without a session nothing is the caller's own
	}
	es, err := s.store.OwnedBy(ctx, call.Caller.Subject, limit)
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		out.Explorations = append(out.Explorations, viewOf(e, explorations.OwnerAccess))
	}
	return out, nil
}

type refInput struct {
	Exploration string `json:"exploration"`
}

func (s *ExplorationService) get(ctx context.Context, call Call) (any, error) {
	var in refInput
	if err := DecodeInput(call.Input, &in); err != nil {
		return nil, err
	}
	e, access, err := s.resolve(ctx, in.Exploration, call.Caller, explorations.ReadAccess)
	if err != nil {
		return nil, err
	}
	return s.whole(ctx, e, access)
}

func (s *ExplorationService) whole(ctx context.Context, e explorations.Exploration, access explorations.Access) (ExplorationWhole, error) {
	steps, err := s.store.Steps(ctx, e.ID)
	if err != nil {
		return ExplorationWhole{}, err
	}
	notes, err := s.store.Notes(ctx, e.ID)
	if err != nil {
		return ExplorationWhole{}, err
	}
	out := ExplorationWhole{ExplorationView: viewOf(e, access), Steps: []StepView{}, Notes: []NoteView{}}
	for _, st := range steps {
		out.Steps = append(out.Steps, stepView(st))
	}
	for _, n := range notes {
		out.Notes = append(out.Notes, noteView(n))
	}
	return out, nil
}

func (s *ExplorationService) saveStep(ctx context.Context, call Call) (any, error) {
	var in struct {
		Exploration string          `json:"exploration"`
		Spec        json.RawMessage `json:"spec"`
		SpecSHA256  string          `json:"spec_sha256"`
		Note        string          `json:"note"`
	}
	if err := DecodeInput(call.Input, &in); err != nil {
		return nil, err
	}
	step := explorations.Step{Note: strings.TrimSpace(in.Note)}
	if err := explorations.CheckNote("note", step.Note, false); err != nil {
		return nil, err
	}
	hasSpec := len(in.Spec) > 0 && string(in.Spec) != "null"
	switch {
	case hasSpec:
	case in.SpecSHA256 != "":
		if !explorations.ValidSHA256(in.SpecSHA256) {
			return nil, errs.New(errs.BadInput, "spec_sha256 must be 64 lower-case hex characters")
		}
		step.SpecSHA256 = in.SpecSHA256
	default:
		return nil, errs.New(errs.BadInput, "a step needs spec or spec_sha256", "send the spec itself, or the sha256 of one")
	}
	// Access first: anyone without it learns nothing from how a spec fails.
	e, _, err := s.resolve(ctx, in.Exploration, call.Caller, explorations.ContinueAccess)
	if err != nil {
		return nil, err
	}
	if hasSpec {
		if step.Spec, step.SpecSHA256, err = s.checkSpec(ctx, in.Spec); err != nil {
			return nil, err
		}
		if in.SpecSHA256 != "" && in.SpecSHA256 != step.SpecSHA256 {
			return nil, errs.Newf(errs.BadInput, "spec_sha256 is not the spec's name (%s)", step.SpecSHA256).
				WithHint("send the spec alone, or its right sha256")
		}
	}
	return s.once(ctx, call, "save_step", func() (any, error) {
		id, err := explorations.NewID(s.random, "stp_")
		if err != nil {
			return nil, err
		}
		step.ID, step.Exploration, step.CreatedAt = id, e.ID, s.now()
		saved, err := s.store.AddStep(ctx, step)
		if err != nil {
			return nil, err
		}
		return stepView(saved), nil
	})
}

func (s *ExplorationService) addNote(ctx context.Context, call Call) (any, error) {
	var in struct {
		Exploration string `json:"exploration"`
		Text        string `json:"text"`
	}
	if err := DecodeInput(call.Input, &in); err != nil {
		return nil, err
	}
	text := strings.TrimSpace(in.Text)
	if err := explorations.CheckNote("text", text, true); err != nil {
		return nil, err
	}
	e, _, err := s.resolve(ctx, in.Exploration, call.Caller, explorations.ContinueAccess)
	if err != nil {
		return nil, err
	}
	return s.once(ctx, call, "add_note", func() (any, error) {
		id, err := explorations.NewID(s.random, "not_")
		if err != nil {
			return nil, err
		}
		n := explorations.Note{ID: id, Exploration: e.ID, Text: text, CreatedAt: s.now()}
		if err := s.store.AddNote(ctx, n); err != nil {
			return nil, err
		}
		return noteView(n), nil
	})
}

// checkSpec checks an inline spec as validate_spec does (the schema, then
// against its stored snapshot), which also keeps it by name; it answers the
// spec's canonical JSON and name.
func (s *ExplorationService) checkSpec(ctx context.Context, raw json.RawMessage) ([]byte, string, error) {
	if t := strings.TrimSpace(string(raw)); !strings.HasPrefix(t, "{") {
		return nil, "", errs.New(errs.BadInput, "spec must be a JSON object", "send the spec itself, or spec_sha256")
	}
	v, err := s.flowers.Validate(ctx, raw)
	if err != nil {
		return nil, "", err
	}
	if !v.Valid {
		return nil, "", InvalidSpec(v.Problems)
	}
	spec, problems := specs.ParseSpec(raw)
	if len(problems) > 0 {
		return nil, "", InvalidSpec(problems)
	}
	name, canonical, err := specs.Name(spec)
	if err != nil {
		return nil, "", errs.New(errs.Internal, "the spec could not be named").WithCause(err)
	}
	return canonical, name, nil
}
