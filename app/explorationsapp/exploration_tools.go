package explorationsapp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/specs"
)

// Tools implements ToolSet.
func (s *ExplorationService) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{
			Name:        "start_exploration",
			Description: "Start an exploration: a project that keeps the steps and notes of an investigation into one question, shareable with links.",
		}, s.Start),
		toolkit.WithIO(toolkit.Tool{
			Name:        "list_explorations",
			Description: "The caller's own explorations, the newest first, a page at a time (pass next_cursor back as cursor for the next page).",
		}, s.list),
		toolkit.WithIO(toolkit.Tool{
			Name:        "get_exploration",
			Description: "One exploration: its question, and its steps and notes a page at a time (pass next_cursor back as cursor for the next page). By id, or by a link's token.",
		}, s.get),
		toolkit.WithIO(toolkit.Tool{
			Name:        "save_step",
			Description: "Save a step of an exploration: a flower spec, inline or by its sha256, with an optional note.",
		}, s.saveStep),
		toolkit.WithIO(toolkit.Tool{
			Name:        "add_note",
			Description: "Add a note to an exploration.",
		}, s.addNote),
	}
}

// The exploration tools' inputs: each tool's input is declared here and
// nowhere else (see WithInput).
type (
	StartExplorationInput struct {
		Question string `json:"question" jsonschema:"what the exploration asks"`
		Title    string `json:"title,omitempty" jsonschema:"a short title"`
	}
	listExplorationsInput struct {
		Limit  int    `json:"limit,omitempty" jsonschema:"how many, from 1 to 100"`
		Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of the page before; none for the first page"`
	}
	getExplorationInput struct {
		Exploration string `json:"exploration" jsonschema:"the exploration's id, or a link's token"`
		Cursor      string `json:"cursor,omitempty" jsonschema:"the next_cursor of the page before; none for the first page"`
		Limit       int    `json:"limit,omitempty" jsonschema:"steps, and notes, on the page: 1 to 200, 50 when not given"`
	}
	saveStepInput struct {
		Exploration string          `json:"exploration" jsonschema:"the exploration's id, or a continue link's token"`
		Spec        json.RawMessage `json:"spec,omitempty" jsonschema:"the spec itself (flower-spec/v1)"`
		SpecSHA256  string          `json:"spec_sha256,omitempty" jsonschema:"a spec by the SHA-256 of its canonical JSON"`
		Note        string          `json:"note,omitempty" jsonschema:"what the step shows"`
	}
	addNoteInput struct {
		Exploration string `json:"exploration" jsonschema:"the exploration's id, or a continue link's token"`
		Text        string `json:"text" jsonschema:"the note"`
	}
)

func (listExplorationsInput) RefineSchema(s *jsonschema.Schema) {
	limit := toolkit.Property(s, "limit")
	limit.Minimum, limit.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(100.0)
}

func (getExplorationInput) RefineSchema(s *jsonschema.Schema) {
	limit := toolkit.Property(s, "limit")
	limit.Minimum, limit.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(explorations.MaxPageItems))
}

func (saveStepInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "spec").Type = "object"
	toolkit.Property(s, "spec_sha256").Pattern = toolkit.Sha256Pattern
}

// Start is start_exploration: a new exploration of the question, owned by
// the caller (annotations start one for a person's own marks too).
func (s *ExplorationService) Start(ctx context.Context, call toolkit.Call, in StartExplorationInput) (ExplorationView, error) {
	in.Question, in.Title = strings.TrimSpace(in.Question), strings.TrimSpace(in.Title)
	if err := explorations.CheckQuestion(in.Question, in.Title); err != nil {
		return ExplorationView{}, err
	}
	size := snapshotsapp.RowBytes + int64(len(in.Question)+len(in.Title))
	// The key is looked up before a session is opened: a caller without one
	// is known by its address, and the same key twice opens one.
	return once(ctx, s, &call, "start_exploration", func() (ExplorationView, error) {
		if err := s.ownWrite(ctx, &call, call.Caller.Subject, size); err != nil {
			return ExplorationView{}, err
		}
		id, err := explorations.NewID(s.random, explorations.IDPrefix)
		if err != nil {
			return ExplorationView{}, err
		}
		refund, err := s.budget.Spend(ctx, call.Caller.Subject, size)
		if err != nil {
			return ExplorationView{}, err
		}
		now := s.now()
		e := explorations.Exploration{ID: id, Owner: call.Caller.Subject, Question: in.Question, Title: in.Title, CreatedAt: now, UpdatedAt: now}
		if err := s.store.CreateExploration(ctx, e); err != nil {
			refund()
			return ExplorationView{}, err
		}
		return viewOf(e, explorations.AccessByID(e, call.Caller.Subject)), nil
	})
}

// ownWrite gives a write's caller a session, opened through the door when it
// has none, after the checks that can refuse it: the tool-call limit (in
// Registry.Call), the input's, access, and whether the write's size fits
// what is left of the data budget (owner is who it counts against). A
// refused write opens nothing.
func (s *ExplorationService) ownWrite(ctx context.Context, call *toolkit.Call, owner string, size int64) error {
	if err := s.budget.Fits(ctx, owner, size); err != nil {
		return err
	}
	caller, err := call.Caller.Own(ctx)
	if err != nil {
		return errs.New(errs.Internal, "a session could not be opened").WithCause(err)
	}
	call.Caller = caller
	return nil
}

func (s *ExplorationService) list(ctx context.Context, call toolkit.Call, in listExplorationsInput) (ExplorationList, error) {
	limit, err := explorations.ListLimit(in.Limit)
	if err != nil {
		return ExplorationList{}, err
	}
	after, err := explorations.ParseListCursor(in.Cursor)
	if err != nil {
		return ExplorationList{}, err
	}
	out := ExplorationList{Explorations: []ExplorationView{}}
	if call.Caller.Subject == "" {
		return out, nil // without a session nothing is the caller's own
	}
	es, err := s.store.OwnedBy(ctx, call.Caller.Subject, after, limit+1)
	if err != nil {
		return ExplorationList{}, err
	}
	if len(es) > limit {
		es = es[:limit]
		last := es[limit-1]
		next := explorations.ListCursor{At: last.CreatedAt, ID: last.ID}.String()
		out.NextCursor = &next
	}
	for _, e := range es {
		out.Explorations = append(out.Explorations, viewOf(e, explorations.OwnerAccess))
	}
	return out, nil
}

func (s *ExplorationService) get(ctx context.Context, call toolkit.Call, in getExplorationInput) (ExplorationWhole, error) {
	cursor, err := explorations.ParseCursor(in.Cursor)
	if err != nil {
		return ExplorationWhole{}, err
	}
	limit, err := explorations.PageItems(in.Limit)
	if err != nil {
		return ExplorationWhole{}, err
	}
	e, access, err := s.Resolve(ctx, in.Exploration, call.Caller, explorations.ReadAccess)
	if err != nil {
		return ExplorationWhole{}, err
	}
	steps, notes, next, err := s.page(ctx, e.ID, cursor, limit)
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
	if next != "" {
		out.NextCursor = &next
	}
	if s.watcher != nil {
		out.Presence = s.watcher.WorkingHere(ctx, e.ID)
	}
	return out, nil
}

// page reads one page of an exploration's steps and notes from cursor: at
// most limit of each, and about explorations.PageBytes of their text in all
// (at least one of each that is left). next is the following page's cursor,
// "" when this page holds the last of both.
func (s *ExplorationService) page(ctx context.Context, id string, cursor explorations.Cursor, limit int) ([]explorations.Step, []explorations.Note, string, error) {
	steps, err := s.store.Steps(ctx, id, cursor.AfterStep, limit+1)
	if err != nil {
		return nil, nil, "", err
	}
	notes, err := s.store.Notes(ctx, id, cursor.NoteAt, cursor.NoteID, limit+1)
	if err != nil {
		return nil, nil, "", err
	}
	more := len(steps) > limit || len(notes) > limit
	steps, notes = steps[:min(len(steps), limit)], notes[:min(len(notes), limit)]
	size := 0
	for i, st := range steps {
		if size += len(st.Spec) + len(st.Note); size > explorations.PageBytes/2 && i > 0 {
			steps, more = steps[:i], true
			break
		}
	}
	size = 0
	for i, n := range notes {
		if size += len(n.Text); size > explorations.PageBytes/2 && i > 0 {
			notes, more = notes[:i], true
			break
		}
	}
	if !more {
		return steps, notes, "", nil
	}
	next := cursor
	if len(steps) > 0 {
		next.AfterStep = steps[len(steps)-1].Seq
	}
	if len(notes) > 0 {
		last := notes[len(notes)-1]
		next.NoteAt, next.NoteID = last.CreatedAt, last.ID
	}
	return steps, notes, next.String(), nil
}

func (s *ExplorationService) saveStep(ctx context.Context, call toolkit.Call, in saveStepInput) (StepView, error) {
	step := explorations.Step{Note: strings.TrimSpace(in.Note)}
	if err := explorations.CheckNote("note", step.Note, false); err != nil {
		return StepView{}, err
	}
	hasSpec := len(in.Spec) > 0 && string(in.Spec) != "null"
	switch {
	case hasSpec:
	case in.SpecSHA256 != "":
		if !explorations.ValidSHA256(in.SpecSHA256) {
			return StepView{}, errs.New(errs.BadInput, "spec_sha256 must be 64 lower-case hex characters")
		}
		step.SpecSHA256 = in.SpecSHA256
	default:
		return StepView{}, errs.New(errs.BadInput, "a step needs spec or spec_sha256", "send the spec itself, or the sha256 of one")
	}
	// Access first: anyone without it learns nothing from how a spec fails.
	e, _, err := s.Resolve(ctx, in.Exploration, call.Caller, explorations.ContinueAccess)
	if err != nil {
		return StepView{}, err
	}
	if hasSpec {
		if step.Spec, step.SpecSHA256, err = s.checkSpec(ctx, e.Owner, in.Spec); err != nil {
			return StepView{}, err
		}
		if in.SpecSHA256 != "" && in.SpecSHA256 != step.SpecSHA256 {
			return StepView{}, errs.Newf(errs.BadInput, "spec_sha256 is not the spec's name (%s)", step.SpecSHA256).
				WithHint("send the spec alone, or its right sha256")
		}
	}
	size := snapshotsapp.RowBytes + int64(len(step.Spec)+len(step.Note))
	return once(ctx, s, &call, "save_step", func() (StepView, error) {
		if err := s.ownWrite(ctx, &call, e.Owner, size); err != nil {
			return StepView{}, err
		}
		id, err := explorations.NewID(s.random, "stp_")
		if err != nil {
			return StepView{}, err
		}
		refund, err := s.budget.Spend(ctx, e.Owner, size)
		if err != nil {
			return StepView{}, err
		}
		step.ID, step.Exploration, step.CreatedAt = id, e.ID, s.now()
		saved, err := s.store.AddStep(ctx, step)
		if err != nil {
			refund()
			return StepView{}, err
		}
		s.changed(ctx, e.ID)
		return stepView(saved), nil
	})
}

func (s *ExplorationService) addNote(ctx context.Context, call toolkit.Call, in addNoteInput) (NoteView, error) {
	text := strings.TrimSpace(in.Text)
	if err := explorations.CheckNote("text", text, true); err != nil {
		return NoteView{}, err
	}
	e, _, err := s.Resolve(ctx, in.Exploration, call.Caller, explorations.ContinueAccess)
	if err != nil {
		return NoteView{}, err
	}
	size := snapshotsapp.RowBytes + int64(len(text))
	return once(ctx, s, &call, "add_note", func() (NoteView, error) {
		if err := s.ownWrite(ctx, &call, e.Owner, size); err != nil {
			return NoteView{}, err
		}
		id, err := explorations.NewID(s.random, "not_")
		if err != nil {
			return NoteView{}, err
		}
		refund, err := s.budget.Spend(ctx, e.Owner, size)
		if err != nil {
			return NoteView{}, err
		}
		n := explorations.Note{ID: id, Exploration: e.ID, Text: text, CreatedAt: s.now()}
		if err := s.store.AddNote(ctx, n); err != nil {
			refund()
			return NoteView{}, err
		}
		s.changed(ctx, e.ID)
		return noteView(n), nil
	})
}

// checkSpec checks an inline spec as validate_spec does (the schema, then
// against its stored snapshot), which also keeps it by name; it answers the
// spec's canonical JSON and name.
func (s *ExplorationService) checkSpec(ctx context.Context, owner string, raw json.RawMessage) ([]byte, string, error) {
	if t := strings.TrimSpace(string(raw)); !strings.HasPrefix(t, "{") {
		return nil, "", errs.New(errs.BadInput, "spec must be a JSON object", "send the spec itself, or spec_sha256")
	}
	v, err := s.flowers.Validate(ctx, owner, raw)
	if err != nil {
		return nil, "", err
	}
	if !v.Valid {
		return nil, "", flowersapp.InvalidSpec(v.Problems)
	}
	spec, problems := specs.ParseSpec(raw)
	if len(problems) > 0 {
		return nil, "", flowersapp.InvalidSpec(problems)
	}
	name, canonical, err := specs.Name(spec)
	if err != nil {
		return nil, "", errs.New(errs.Internal, "the spec could not be named").WithCause(err)
	}
	return canonical, name, nil
}
