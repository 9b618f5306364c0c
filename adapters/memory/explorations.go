package memory

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/ports"
)

// Explorations is ports.ExplorationStore in one process's memory, for app
// tests; serve keeps explorations in PostgreSQL. It holds the bounds the
// port promises (explorations.MaxSteps, MaxNotes, MaxLiveLinks, the posted
// readings' caps), each counted and written under one lock, and passes
// porttest.ExplorationStoreContract.
type Explorations struct {
	mu       sync.Mutex
	byID     map[string]*explorations.Exploration
	steps    map[string][]explorations.Step // by exploration, in seq order
	notes    map[string][]explorations.Note
	links    map[string][]explorations.Link // by exploration
	idem     map[[2]string]*ports.IdempotentAnswer
	readings map[[2]string]postedReading // exploration, sha256
}

type postedReading struct {
	isNew          bool
	at             time.Time
	address, owner string
}

var _ ports.ExplorationStore = (*Explorations)(nil)

// NewExplorations makes an empty store.
func NewExplorations() *Explorations {
	return &Explorations{byID: map[string]*explorations.Exploration{}, steps: map[string][]explorations.Step{},
		notes: map[string][]explorations.Note{}, links: map[string][]explorations.Link{},
		idem: map[[2]string]*ports.IdempotentAnswer{}, readings: map[[2]string]postedReading{}}
}

// CreateExploration implements ports.ExplorationStore.
func (s *Explorations) CreateExploration(_ context.Context, e explorations.Exploration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[e.ID]; ok {
		return errs.Newf(errs.Conflict, "exploration %s exists", e.ID)
	}
	s.byID[e.ID] = &e
	return nil
}

// Exploration implements ports.ExplorationStore.
func (s *Explorations) Exploration(_ context.Context, id string) (explorations.Exploration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byID[id]
	if !ok {
		return explorations.Exploration{}, explorations.NotFound()
	}
	return *e, nil
}

// OwnedBy implements ports.ExplorationStore.
func (s *Explorations) OwnedBy(_ context.Context, owner string, after explorations.ListCursor, limit int) ([]explorations.Exploration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []explorations.Exploration
	for _, e := range s.byID {
		if owner == "" || e.Owner != owner {
			continue
		}
		// Newest first: after a cursor means older than it.
		if !after.IsStart() && cmp.Or(e.CreatedAt.Compare(after.At), cmp.Compare(e.ID, after.ID)) >= 0 {
			continue
		}
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b explorations.Exploration) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return out[:min(len(out), limit)], nil
}

// Claim implements ports.ExplorationStore.
func (s *Explorations) Claim(_ context.Context, id, owner string, at time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byID[id]
	if !ok || e.Owner != "" {
		return false, nil
	}
	e.Owner, e.UpdatedAt = owner, at
	return true, nil
}

// AddStep implements ports.ExplorationStore.
func (s *Explorations) AddStep(_ context.Context, step explorations.Step) (explorations.Step, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byID[step.Exploration]
	if !ok {
		return explorations.Step{}, explorations.NotFound()
	}
	if len(s.steps[step.Exploration]) >= explorations.MaxSteps {
		return explorations.Step{}, explorations.TooMany("steps", explorations.MaxSteps)
	}
	step.Seq = len(s.steps[step.Exploration]) + 1
	step.Spec = slices.Clone(step.Spec)
	s.steps[step.Exploration] = append(s.steps[step.Exploration], step)
	e.UpdatedAt = step.CreatedAt
	return step, nil
}

// AddNote implements ports.ExplorationStore.
func (s *Explorations) AddNote(_ context.Context, note explorations.Note) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byID[note.Exploration]
	if !ok {
		return explorations.NotFound()
	}
	if len(s.notes[note.Exploration]) >= explorations.MaxNotes {
		return explorations.TooMany("notes", explorations.MaxNotes)
	}
	s.notes[note.Exploration] = append(s.notes[note.Exploration], note)
	e.UpdatedAt = note.CreatedAt
	return nil
}

// Steps implements ports.ExplorationStore.
func (s *Explorations) Steps(_ context.Context, id string, afterSeq, limit int) ([]explorations.Step, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []explorations.Step
	for _, st := range s.steps[id] {
		if st.Seq > afterSeq && len(out) < limit {
			st.Spec = slices.Clone(st.Spec)
			out = append(out, st)
		}
	}
	return out, nil
}

// Notes implements ports.ExplorationStore.
func (s *Explorations) Notes(_ context.Context, id string, afterAt time.Time, afterID string, limit int) ([]explorations.Note, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []explorations.Note
	for _, n := range s.notes[id] {
		if afterID == "" || cmp.Or(n.CreatedAt.Compare(afterAt), cmp.Compare(n.ID, afterID)) > 0 {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b explorations.Note) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out[:min(len(out), limit)], nil
}

// CreateLink implements ports.ExplorationStore.
func (s *Explorations) CreateLink(_ context.Context, l explorations.Link) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[l.Exploration]; !ok {
		return explorations.NotFound()
	}
	live := 0
	for _, x := range s.links[l.Exploration] {
		if x.RevokedAt == nil {
			live++
		}
	}
	if live >= explorations.MaxLiveLinks {
		return explorations.TooManyLinks()
	}
	s.links[l.Exploration] = append(s.links[l.Exploration], l)
	return nil
}

// LinkByToken implements ports.ExplorationStore.
func (s *Explorations) LinkByToken(_ context.Context, tokenSHA256 string) (explorations.Link, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ls := range s.links {
		for _, l := range ls {
			if l.TokenSHA256 == tokenSHA256 {
				return l, nil
			}
		}
	}
	return explorations.Link{}, errs.New(errs.NotFound, "no such link")
}

// Links implements ports.ExplorationStore.
func (s *Explorations) Links(_ context.Context, explorationID string, after explorations.ListCursor, limit int) ([]explorations.Link, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []explorations.Link
	for _, l := range s.links[explorationID] {
		if after.IsStart() || cmp.Or(l.CreatedAt.Compare(after.At), cmp.Compare(l.ID, after.ID)) > 0 {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b explorations.Link) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out[:min(len(out), limit)], nil
}

// RevokeLink implements ports.ExplorationStore.
func (s *Explorations) RevokeLink(_ context.Context, explorationID, linkID string, at time.Time) (explorations.Link, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ls := s.links[explorationID]
	i := slices.IndexFunc(ls, func(l explorations.Link) bool { return l.ID == linkID })
	if i < 0 {
		return explorations.Link{}, errs.New(errs.NotFound, "no such link on this exploration")
	}
	if ls[i].RevokedAt == nil {
		ls[i].RevokedAt = &at
	}
	return ls[i], nil
}

// ReserveIdempotency implements ports.ExplorationStore.
func (s *Explorations) ReserveIdempotency(_ context.Context, caller, key, fingerprint string, _ time.Time) (*ports.IdempotentAnswer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]string{caller, key}
	if prior, ok := s.idem[k]; ok {
		c := *prior
		c.Answer = slices.Clone(prior.Answer)
		return &c, nil
	}
	s.idem[k] = &ports.IdempotentAnswer{Fingerprint: fingerprint}
	return nil, nil
}

// KeepIdempotentAnswer implements ports.ExplorationStore.
func (s *Explorations) KeepIdempotentAnswer(_ context.Context, caller, key string, answer []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.idem[[2]string{caller, key}]; ok {
		a.Answer = slices.Clone(answer)
	}
	return nil
}

// ReleaseIdempotency implements ports.ExplorationStore.
func (s *Explorations) ReleaseIdempotency(_ context.Context, caller, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]string{caller, key}
	if a, ok := s.idem[k]; ok && a.Answer == nil {
		delete(s.idem, k)
	}
	return nil
}

// RecordPostedReading implements ports.ExplorationStore.
func (s *Explorations) RecordPostedReading(_ context.Context, explorationID, sha256 string, isNew bool, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]string{explorationID, sha256}
	if _, ok := s.readings[k]; !ok {
		s.readings[k] = postedReading{isNew: isNew, at: at}
	}
	return nil
}

// ReservePostedReading implements ports.ExplorationStore.
func (s *Explorations) ReservePostedReading(_ context.Context, slot ports.PostedSlot, caps ports.PostedCaps) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var site, address, owner int
	for _, r := range s.readings {
		if !r.isNew || r.at.Before(slot.Since) {
			continue
		}
		site++
		if r.address == slot.Address {
			address++
		}
		if slot.Owner != "" && r.owner == slot.Owner {
			owner++
		}
	}
	switch {
	case site >= caps.Site:
		return "site", nil
	case address >= caps.PerAddress:
		return "address", nil
	case slot.Owner != "" && owner >= caps.PerOwner:
		return "owner", nil
	}
	k := [2]string{slot.Exploration, slot.SHA256}
	if _, ok := s.readings[k]; !ok {
		s.readings[k] = postedReading{isNew: true, at: slot.At, address: slot.Address, owner: slot.Owner}
	}
	return "", nil
}

// ReleasePostedReading implements ports.ExplorationStore.
func (s *Explorations) ReleasePostedReading(_ context.Context, explorationID, sha256 string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := [2]string{explorationID, sha256}
	if r, ok := s.readings[k]; ok && r.isNew {
		delete(s.readings, k)
	}
	return nil
}

// PostedReadingsSince implements ports.ExplorationStore.
func (s *Explorations) PostedReadingsSince(_ context.Context, t time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.readings {
		if r.isNew && !r.at.Before(t) {
			n++
		}
	}
	return n, nil
}
