package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/domain/specs"
	"github.com/petal-near/petal/ports"
)

// ExplorationService is explorations: a project's question, steps and notes,
// its links, and the readings posted to it. Its tools are start_exploration,
// list_explorations, get_exploration, save_step and add_note; links, claims
// and posted readings need a session or a link, so only the HTTP door offers
// them.
type ExplorationService struct {
	cfg       Config
	store     ports.ExplorationStore
	snapshots ports.SnapshotStore
	flowers   *FlowerService
	clock     ports.Clock
	random    ports.Random
}

// NewExplorationService makes the exploration service. A step's inline spec
// is checked against its snapshot by the flowers' own validation.
func NewExplorationService(cfg Config, store ports.ExplorationStore, snapshots ports.SnapshotStore, flowers *FlowerService, clock ports.Clock, random ports.Random) *ExplorationService {
	return &ExplorationService{cfg: cfg, store: store, snapshots: snapshots, flowers: flowers, clock: clock, random: random}
}

// ExplorationView is an exploration as every door answers it.
type ExplorationView struct {
	ID        string    `json:"id"`
	Question  string    `json:"question"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Access is what the caller may do: owner, continue or read.
	Access string `json:"access"`
}

// ExplorationWhole is get_exploration's answer.
type ExplorationWhole struct {
	ExplorationView
	Steps []StepView `json:"steps"`
	Notes []NoteView `json:"notes"`
}

// StepView is a saved step.
type StepView struct {
	ID          string          `json:"id"`
	Exploration string          `json:"exploration"`
	Seq         int             `json:"seq"`
	SpecSHA256  string          `json:"spec_sha256"`
	Spec        json.RawMessage `json:"spec,omitempty"`
	Note        string          `json:"note"`
	CreatedAt   time.Time       `json:"created_at"`
}

// NoteView is a kept note.
type NoteView struct {
	ID          string    `json:"id"`
	Exploration string    `json:"exploration"`
	Text        string    `json:"text"`
	CreatedAt   time.Time `json:"created_at"`
}

func viewOf(e explorations.Exploration, a explorations.Access) ExplorationView {
	return ExplorationView{ID: e.ID, Question: e.Question, Title: e.Title, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt, Access: a.String()}
}

func stepView(s explorations.Step) StepView {
	return StepView{ID: s.ID, Exploration: s.Exploration, Seq: s.Seq, SpecSHA256: s.SpecSHA256, Spec: s.Spec, Note: s.Note, CreatedAt: s.CreatedAt}
}

func noteView(n explorations.Note) NoteView {
	return NoteView{ID: n.ID, Exploration: n.Exploration, Text: n.Text, CreatedAt: n.CreatedAt}
}

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

func (s *ExplorationService) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }

// resolve finds the exploration ref names and what caller may do with it.
// Anyone with less than need gets the one not-found answer.
func (s *ExplorationService) resolve(ctx context.Context, ref string, caller Caller, need explorations.Access) (explorations.Exploration, explorations.Access, error) {
	var e explorations.Exploration
	var access explorations.Access
	switch {
	case explorations.ValidID(ref):
		var err error
		if e, err = s.store.Exploration(ctx, ref); err != nil {
			return e, 0, err
		}
		access = explorations.AccessByID(e, caller.Subject)
	case explorations.ValidToken(ref):
		l, err := s.store.LinkByToken(ctx, explorations.HashToken(ref))
		if err != nil {
			return e, 0, err
		}
		if access = explorations.AccessByLink(l); access >= need {
			if e, err = s.store.Exploration(ctx, l.Exploration); err != nil {
				return e, 0, err
			}
		}
	}
	if access < need || access == explorations.NoAccess {
		return explorations.Exploration{}, 0, explorations.NotFound()
	}
	return e, access, nil
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

// once runs a create at most once per caller and Idempotency-Key: the same
// key with the same input answers what the first request answered; with
// another input it is a conflict. The input's fingerprint is the SHA-256 of
// its canonical JSON, so the order of its fields does not matter.
func (s *ExplorationService) once(ctx context.Context, call Call, tool string, create func() (any, error)) (any, error) {
	key := call.IdempotencyKey
	if key == "" {
		return create()
	}
	if err := explorations.CheckIdempotencyKey(key); err != nil {
		return nil, err
	}
	who := call.Caller.Subject
	if who == "" {
		who = "address:" + call.Caller.Address
	}
	input := call.Input
	if len(strings.TrimSpace(string(input))) == 0 {
		input = json.RawMessage(`{}`)
	}
	canonical, err := canon.Transform(input)
	if err != nil {
		return nil, errs.Newf(errs.BadInput, "the body is not valid JSON: %s", err.Error())
	}
	sum := sha256.Sum256(append([]byte(tool+"\n"), canonical...))
	fingerprint := hex.EncodeToString(sum[:])
	prior, err := s.store.ReserveIdempotency(ctx, who, key, fingerprint, s.now())
	if err != nil {
		return nil, err
	}
	if prior != nil {
		switch {
		case prior.Fingerprint != fingerprint:
			return nil, errs.New(errs.Conflict, "this Idempotency-Key was already used for a different request",
				"send a new Idempotency-Key for a new request, or the same body to get the first answer again")
		case prior.Answer == nil:
			return nil, errs.New(errs.Conflict, "a request with this Idempotency-Key is still running",
				"wait for it, then send the same request again to get its answer")
		}
		return json.RawMessage(prior.Answer), nil
	}
	out, err := create()
	if err != nil {
		if rerr := s.store.ReleaseIdempotency(context.WithoutCancel(ctx), who, key); rerr != nil {
			return nil, errs.New(errs.Internal, "the request failed and its Idempotency-Key could not be freed").WithCause(rerr)
		}
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	if err := s.store.KeepIdempotentAnswer(context.WithoutCancel(ctx), who, key, b); err != nil {
		return nil, err
	}
	return json.RawMessage(b), nil
}

// LinkView is a link as listed (never with its token).
type LinkView struct {
	ID        string     `json:"id"`
	Scope     string     `json:"scope"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// NewLink is a link just made, with its address shown this once.
type NewLink struct {
	ID        string    `json:"id"`
	Scope     string    `json:"scope"`
	URL       string    `json:"url"`
	CreatedAt time.Time `json:"created_at"`
}

// owned is an exploration its owner names by id; links are never managed
// through a link.
func (s *ExplorationService) owned(ctx context.Context, caller Caller, id string) (explorations.Exploration, error) {
	if !explorations.ValidID(id) || caller.Subject == "" {
		return explorations.Exploration{}, explorations.NotFound()
	}
	e, access, err := s.resolve(ctx, id, caller, explorations.OwnerAccess)
	if err != nil || access != explorations.OwnerAccess {
		return explorations.Exploration{}, explorations.NotFound()
	}
	return e, nil
}

// CreateLink makes a read or continue link for the owner; base is the site's
// address, which the link's url starts with.
func (s *ExplorationService) CreateLink(ctx context.Context, caller Caller, id, scope, base string) (NewLink, error) {
	e, err := s.owned(ctx, caller, id)
	if err != nil {
		return NewLink{}, err
	}
	sc, err := explorations.ParseScope(scope)
	if err != nil {
		return NewLink{}, err
	}
	linkID, err := explorations.NewID(s.random, "lnk_")
	if err != nil {
		return NewLink{}, err
	}
	token, hash, err := explorations.NewLinkToken(s.random)
	if err != nil {
		return NewLink{}, err
	}
	l := explorations.Link{ID: linkID, Exploration: e.ID, Scope: sc, TokenSHA256: hash, CreatedAt: s.now()}
	if err := s.store.CreateLink(ctx, l); err != nil {
		return NewLink{}, err
	}
	return NewLink{ID: l.ID, Scope: string(l.Scope), URL: strings.TrimRight(base, "/") + "/s/" + token, CreatedAt: l.CreatedAt}, nil
}

// Links lists the owner's links of an exploration, without tokens.
func (s *ExplorationService) Links(ctx context.Context, caller Caller, id string) ([]LinkView, error) {
	e, err := s.owned(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	ls, err := s.store.Links(ctx, e.ID)
	if err != nil {
		return nil, err
	}
	out := []LinkView{}
	for _, l := range ls {
		out = append(out, LinkView{ID: l.ID, Scope: string(l.Scope), CreatedAt: l.CreatedAt, RevokedAt: l.RevokedAt})
	}
	return out, nil
}

// RevokeLink ends one of the owner's links at once.
func (s *ExplorationService) RevokeLink(ctx context.Context, caller Caller, id, linkID string) (LinkView, error) {
	e, err := s.owned(ctx, caller, id)
	if err != nil {
		return LinkView{}, err
	}
	l, err := s.store.RevokeLink(ctx, e.ID, linkID, s.now())
	if err != nil {
		return LinkView{}, err
	}
	return LinkView{ID: l.ID, Scope: string(l.Scope), CreatedAt: l.CreatedAt, RevokedAt: l.RevokedAt}, nil
}

// Claimed is the answer of a claim.
type Claimed struct {
	Exploration string `json:"exploration"`
	Claimed     bool   `json:"claimed"`
}

// Claim makes the caller's session the owner of an unowned exploration,
// reached with its continue link (or its id, which opens an unowned one).
// One that already has an owner stays theirs: claimed is false.
func (s *ExplorationService) Claim(ctx context.Context, caller Caller, ref string) (Claimed, error) {
	if caller.Subject == "" {
		return Claimed{}, errs.New(errs.Unauthorised, "claiming an exploration needs a session")
	}
	e, _, err := s.resolve(ctx, ref, caller, explorations.ContinueAccess)
	if err != nil {
		return Claimed{}, err
	}
	if e.Owner != "" {
		return Claimed{Exploration: e.ID, Claimed: false}, nil
	}
	ok, err := s.store.Claim(ctx, e.ID, caller.Subject, s.now())
	if err != nil {
		return Claimed{}, err
	}
	return Claimed{Exploration: e.ID, Claimed: ok}, nil
}

// ResumePacket is the markdown a link's token opens at /s/:token.
func (s *ExplorationService) ResumePacket(ctx context.Context, token, base string) (string, error) {
	if !explorations.ValidToken(token) {
		return "", explorations.NotFound()
	}
	e, access, err := s.resolve(ctx, token, Caller{}, explorations.ReadAccess)
	if err != nil {
		return "", err
	}
	steps, err := s.store.Steps(ctx, e.ID)
	if err != nil {
		return "", err
	}
	notes, err := s.store.Notes(ctx, e.ID)
	if err != nil {
		return "", err
	}
	return explorations.ResumePacket(e, steps, notes, access, base, token), nil
}

// PostedReading is the answer to a posted reading.
type PostedReading struct {
	Exploration string `json:"exploration"`
	SHA256      string `json:"sha256"`
	Stored      bool   `json:"stored"`
	Origin      string `json:"origin"`
}

// PostReading keeps a reading made on the person's own machine, so the site
// can draw it: the owner or a continue link may post it, anyone else gets the
// one not-found answer before the body is read. The name must be the SHA-256
// of the body's canonical JSON and the body a valid snapshot (bad_input
// otherwise). A reading the site already holds changes nothing (stored
// false); new ones are at most PETAL_POSTED_SNAPSHOTS_PER_DAY a day.
// body yields the request's bytes, already inflated and capped by the door.
func (s *ExplorationService) PostReading(ctx context.Context, caller Caller, ref, name string, body io.Reader) (PostedReading, error) {
	e, _, err := s.resolve(ctx, ref, caller, explorations.ContinueAccess)
	if err != nil {
		return PostedReading{}, err
	}
	if err := CheckSHA256("the snapshot's name", name); err != nil {
		return PostedReading{}, err
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return PostedReading{}, decodeError(err)
	}
	snap, sha, canonical, err := snapshots.Parse(raw)
	if err != nil {
		return PostedReading{}, err
	}
	if sha != name {
		return PostedReading{}, errs.Newf(errs.BadInput, "the snapshot's SHA-256 is %s, not the %s its address names", sha, name).
			WithHint("put it at /api/v1/explorations/<ref>/snapshots/<the sha256 of its canonical JSON (RFC 8785)>")
	}
	out := PostedReading{Exploration: e.ID, SHA256: sha, Origin: OriginTheirMachine}
	held, err := s.snapshots.Get(ctx, sha)
	switch {
	case err == nil:
		out.Origin = held.Origin
	case errs.Is(err, errs.NotFound):
		now := s.now()
		midnight := explorations.StartOfDayUTC(now)
		n, err := s.store.PostedReadingsSince(ctx, midnight)
		if err != nil {
			return PostedReading{}, err
		}
		if n >= s.cfg.PostedSnapshotsPerDay {
			return PostedReading{}, RateLimited("this site took all the new readings it takes today", midnight.Add(24*time.Hour).Sub(now))
		}
		if out.Stored, err = StoreCanonical(ctx, s.snapshots, snap, sha, canonical, OriginTheirMachine); err != nil {
			return PostedReading{}, err
		}
	default:
		return PostedReading{}, err
	}
	if err := s.store.RecordPostedReading(ctx, e.ID, sha, out.Stored, s.now()); err != nil {
		return PostedReading{}, err
	}
	return out, nil
}
