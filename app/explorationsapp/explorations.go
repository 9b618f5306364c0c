package explorationsapp

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/ports"
)

// ExplorationService is explorations: a project's question, steps and notes,
// its links, and the readings posted to it. Its tools are start_exploration,
// list_explorations, get_exploration, save_step and add_note; links, claims
// and posted readings need a session or a link, so only the HTTP door offers
// them.
type ExplorationService struct {
	cfg       config.Config
	store     ports.ExplorationStore
	snapshots ports.SnapshotStore
	flowers   *flowersapp.FlowerService
	library   *snapshotsapp.SnapshotLibrary // decodes posted readings
	clock     ports.Clock
	random    ports.Random
	budget    *snapshotsapp.DataBudget
	opens     ports.Opens // when each was last opened, for retention
	log       *slog.Logger
	watcher   ExplorationWatcher // nil: nobody
}

// ExplorationWatcher hears of explorations' links being used and of their
// changes: a person's agents' jobs refuse a worker's link once its job was
// stopped or sent again, mark the job alive on every call through it, and
// fire the conversation's live signal.
type ExplorationWatcher interface {
	// LinkUsed is asked before a link opens anything; an error refuses it.
	LinkUsed(ctx context.Context, linkID string) error
	// Changed: a step or a note was added.
	Changed(ctx context.Context, exploration string)
	// WorkingHere is who works in the exploration now (a job's worker), or nil.
	WorkingHere(ctx context.Context, exploration string) *WorkerPresence
}

// WorkerPresence is the person's agent working in a job's conversation:
// its name (client), which of its workers, the job, and its last call.
type WorkerPresence struct {
	Client   string     `json:"client"`
	N        int        `json:"n"`
	Worker   *string    `json:"worker"`
	Job      string     `json:"job"`
	LastSeen *time.Time `json:"last_seen"`
}

// Watch has w hear of links used and changes.
func (s *ExplorationService) Watch(w ExplorationWatcher) { s.watcher = w }

// changed tells the watcher an exploration changed.
func (s *ExplorationService) changed(ctx context.Context, exploration string) {
	if s.watcher != nil {
		s.watcher.Changed(ctx, exploration)
	}
}

// NewExplorationService makes the exploration service. A step's inline spec
// is checked against its snapshot by the flowers' own validation.
// What strangers write counts against budget.
func NewExplorationService(cfg config.Config, store ports.ExplorationStore, snapshots ports.SnapshotStore, flowers *flowersapp.FlowerService, library *snapshotsapp.SnapshotLibrary, clock ports.Clock, random ports.Random, budget *snapshotsapp.DataBudget,
	opens ports.Opens, log *slog.Logger) *ExplorationService {
	return &ExplorationService{cfg: cfg, store: store, snapshots: snapshots, flowers: flowers, library: library, clock: clock, random: random, budget: budget, opens: opens, log: log}
}

// logError logs what went wrong after a request was answered, with the
// request's id.
func (s *ExplorationService) logError(ctx context.Context, what string, err error) {
	if s.log != nil {
		s.log.ErrorContext(ctx, what, "err", err)
	}
}

// ExplorationView is an exploration as every door answers it.
type ExplorationView struct {
	ID        string    `json:"id"`
	Question  string    `json:"question"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Access is what the caller may do: owner, continue or read.
	Access string `json:"access" jsonschema:"what the caller may do: owner, continue or read"`
}

// RefineSchema: the accesses there are.
func (ExplorationView) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "access").Enum = []any{"owner", "continue", "read"}
}

// A step's spec, when it carries one, is a flower-spec/v1 object.
func (StepView) RefineSchema(s *jsonschema.Schema) { toolkit.Property(s, "spec").Type = "object" }

// ExplorationList is list_explorations' answer: a page of the caller's own.
type ExplorationList struct {
	Explorations []ExplorationView `json:"explorations"`
	NextCursor   *string           `json:"next_cursor"`
}

// ExplorationWhole is get_exploration's answer: the exploration and one page
// of its steps and notes. NextCursor, when not null, fetches the next page.
type ExplorationWhole struct {
	ExplorationView
	Steps      []StepView `json:"steps"`
	Notes      []NoteView `json:"notes"`
	NextCursor *string    `json:"next_cursor" jsonschema:"the cursor of the next page, null on the last"`
	// Presence is the person's agent working here on a job (additive).
	Presence *WorkerPresence `json:"presence,omitempty"`
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

func (s *ExplorationService) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }

// Resolve finds the exploration ref names and what caller may do with it.
// Anyone with less than need gets the one not-found answer.
func (s *ExplorationService) Resolve(ctx context.Context, ref string, caller toolkit.Caller, need explorations.Access) (explorations.Exploration, explorations.Access, error) {
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
		if s.watcher != nil {
			if err := s.watcher.LinkUsed(ctx, l.ID); err != nil {
				return e, 0, err
			}
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
	if s.opens != nil {
		// Noted for retention; a failure costs nothing but the note.
		if err := s.opens.ExplorationOpened(ctx, e.ID); err != nil && s.log != nil {
			s.log.WarnContext(ctx, "noting an exploration opened", "exploration", e.ID, "err", err)
		}
	}
	return e, access, nil
}
