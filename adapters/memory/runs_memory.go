package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// The agent's stores in memory: leases, runs and their event logs, the event
// bus, attestation reports. They stand in for PostgreSQL's in app tests that
// only need the stores to exist, and pass the same contract suites
// (porttest.RunStoreContract, LeasesContract, EventBusContract,
// AttestationsContract). One process's memory is never shared by replicas:
// petal serve always wires PostgreSQL's.

// RunStore keeps runs and their event logs in memory. Its appends wake the
// watchers of hub's buses.
type RunStore struct {
	clock  ports.Clock
	leases *Leases
	hub    *EventHub

	mu     sync.Mutex
	runs   map[string]*runs.Run
	events map[string][]runs.Event
}

var _ ports.RunStore = (*RunStore)(nil)

// NewRunRepository makes an empty run store whose orphans are judged by leases
// and whose appends are heard on hub.
func NewRunRepository(clock ports.Clock, leases *Leases, hub *EventHub) *RunStore {
	return &RunStore{clock: clock, leases: leases, hub: hub, runs: map[string]*runs.Run{}, events: map[string][]runs.Event{}}
}

func copyRun(r *runs.Run) runs.Run {
	out := *r
	out.Thread = slices.Clone(r.Thread)
	out.Draft = bytes.Clone(r.Draft)
	out.Flower = bytes.Clone(r.Flower)
	return out
}

func nonNilThread(t []runs.Message) []runs.Message {
	if t == nil {
		return []runs.Message{}
	}
	return slices.Clone(t)
}

// Create implements ports.RunStore.
func (s *RunStore) Create(ctx context.Context, run runs.Run, first ...runs.NewEvent) (runs.Run, error) {
	if err := checkStored(first); err != nil {
		return run, err
	}
	s.mu.Lock()
	if _, ok := s.runs[run.ID]; ok {
		s.mu.Unlock()
		return run, fmt.Errorf("create run: run %s exists", run.ID)
	}
	now := s.clock.Now()
	r := &runs.Run{ID: run.ID, Owner: run.Owner, Status: runs.Running, Model: run.Model, ProcessID: run.ProcessID,
		Thread: nonNilThread(run.Thread), Draft: bytes.Clone(run.Draft), Settings: run.Settings, CreatedAt: now, UpdatedAt: now}
	s.runs[run.ID] = r
	last := s.appendLocked(r, first)
	s.mu.Unlock()
	s.published(run.ID, last, len(first))
	return s.Get(ctx, run.ID)
}

// Get implements ports.RunStore.
func (s *RunStore) Get(_ context.Context, id string) (runs.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return runs.Run{}, errs.Newf(errs.NotFound, "no run %s", id)
	}
	return copyRun(r), nil
}

// Resume implements ports.RunStore.
func (s *RunStore) Resume(ctx context.Context, id, processID string, thread []runs.Message, first ...runs.NewEvent) (runs.Run, error) {
	if err := checkStored(first); err != nil {
		return runs.Run{}, err
	}
	s.mu.Lock()
	r, ok := s.runs[id]
	if !ok {
		s.mu.Unlock()
		return runs.Run{}, errs.Newf(errs.NotFound, "no run %s", id)
	}
	if r.Status == runs.Running {
		s.mu.Unlock()
		return runs.Run{}, errs.New(errs.Conflict, "this run is still going", "follow it at GET /api/v1/agent/runs/"+id+", or stop it first")
	}
	r.Status, r.ProcessID, r.Thread, r.UpdatedAt = runs.Running, processID, nonNilThread(thread), s.clock.Now()
	last := s.appendLocked(r, first)
	s.mu.Unlock()
	s.published(id, last, len(first))
	return s.Get(ctx, id)
}

// SaveThread implements ports.RunStore.
func (s *RunStore) SaveThread(_ context.Context, id string, thread []runs.Message) error {
	return s.update(id, func(r *runs.Run) { r.Thread = nonNilThread(thread) })
}

// SetExploration implements ports.RunStore.
func (s *RunStore) SetExploration(_ context.Context, id, exploration string) error {
	return s.update(id, func(r *runs.Run) { r.Exploration = exploration })
}

// SetTitle implements ports.RunStore.
func (s *RunStore) SetTitle(_ context.Context, id, title string) error {
	return s.update(id, func(r *runs.Run) { r.Title = title })
}

// SetSettings implements ports.RunStore.
func (s *RunStore) SetSettings(_ context.Context, id string, settings runs.Settings) error {
	return s.update(id, func(r *runs.Run) { r.Settings = settings })
}

func (s *RunStore) update(id string, f func(*runs.Run)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[id]
	if !ok {
		return errs.Newf(errs.NotFound, "no run %s", id)
	}
	f(r)
	r.UpdatedAt = s.clock.Now()
	return nil
}

// Append implements ports.RunStore.
func (s *RunStore) Append(_ context.Context, id string, events ...runs.NewEvent) (int64, error) {
	if err := checkStored(events); err != nil {
		return 0, err
	}
	s.mu.Lock()
	r, ok := s.runs[id]
	if !ok {
		s.mu.Unlock()
		return 0, errs.Newf(errs.NotFound, "no run %s", id)
	}
	if err := growing(r, events); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	last := s.appendLocked(r, events)
	s.mu.Unlock()
	s.published(id, last, len(events))
	return last, nil
}

// growing refuses events for a run that has ended: a sweep may end a run
// while its job, cut off, goes on, and nothing follows an end.
func growing(r *runs.Run, events []runs.NewEvent) error {
	if len(events) > 0 && r.Status != runs.Running {
		return errs.Newf(errs.Conflict, "run %s has ended (%s); nothing is added after its end", r.ID, r.Status)
	}
	return nil
}

// End implements ports.RunStore.
func (s *RunStore) End(_ context.Context, id string, status runs.Status, events ...runs.NewEvent) (int64, error) {
	if !status.Ended() {
		return 0, fmt.Errorf("end run %s: %q is not an ending status", id, status)
	}
	if err := checkStored(events); err != nil {
		return 0, err
	}
	s.mu.Lock()
	r, ok := s.runs[id]
	if !ok {
		s.mu.Unlock()
		return 0, errs.Newf(errs.NotFound, "no run %s", id)
	}
	if err := growing(r, events); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	last := s.appendLocked(r, events)
	r.Status = status
	s.mu.Unlock()
	s.published(id, last, len(events))
	return last, nil
}

// Events implements ports.RunStore.
func (s *RunStore) Events(_ context.Context, id string, from int64, limit int) ([]runs.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []runs.Event{}
	for _, e := range s.events[id] {
		if len(out) == limit {
			break
		}
		if e.Seq >= from {
			e.Data = bytes.Clone(e.Data)
			out = append(out, e)
		}
	}
	return out, nil
}

// InterruptOrphans implements ports.RunStore.
func (s *RunStore) InterruptOrphans(_ context.Context, staleAfter time.Duration, interrupted runs.NewEvent) ([]string, error) {
	// Called under s.mu: the leases' lock is taken after it, as everywhere.
	return s.interrupt(func(r *runs.Run) bool {
		s.leases.mu.Lock()
		defer s.leases.mu.Unlock()
		return !s.leases.alive(r.ProcessID, staleAfter)
	}, interrupted)
}

// InterruptStuck implements ports.RunStore.
func (s *RunStore) InterruptStuck(_ context.Context, quiet time.Duration, interrupted runs.NewEvent) ([]string, error) {
	cut := s.clock.Now().Add(-quiet)
	return s.interrupt(func(r *runs.Run) bool { return r.UpdatedAt.Before(cut) }, interrupted)
}

// Age makes a run's last write d older than it is, standing for time
// passing without one.
func (s *RunStore) Age(id string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.runs[id]; ok {
		r.UpdatedAt = r.UpdatedAt.Add(-d)
	}
}

// interrupt ends the running runs victim picks.
func (s *RunStore) interrupt(victim func(*runs.Run) bool, interrupted runs.NewEvent) ([]string, error) {
	s.mu.Lock()
	var done []string
	var lasts []int64
	for id, r := range s.runs {
		if r.Status != runs.Running || !victim(r) {
			continue
		}
		lasts = append(lasts, s.appendLocked(r, []runs.NewEvent{interrupted}))
		r.Status = runs.Interrupted
		done = append(done, id)
	}
	s.mu.Unlock()
	for i, id := range done {
		s.published(id, lasts[i], 1)
	}
	return done, nil
}

// appendLocked numbers and stores events; s.mu is held.
func (s *RunStore) appendLocked(r *runs.Run, events []runs.NewEvent) int64 {
	for _, e := range events {
		s.events[r.ID] = append(s.events[r.ID], runs.Event{Seq: r.NextSeq, Kind: e.Kind, Data: bytes.Clone(e.Data)})
		if e.Kind == runs.KindFlower {
			r.Flower = bytes.Clone(e.Data)
		}
		r.NextSeq++
	}
	if len(events) > 0 {
		r.UpdatedAt = s.clock.Now()
	}
	return r.NextSeq - 1
}

func (s *RunStore) published(id string, last int64, n int) {
	if n > 0 && s.hub != nil {
		s.hub.appended(id, last)
	}
}

func checkStored(events []runs.NewEvent) error {
	for _, e := range events {
		if !e.Kind.Stored() {
			return fmt.Errorf("append to run: %s events are not stored", e.Kind)
		}
		if !json.Valid(e.Data) {
			return fmt.Errorf("append to run: a %s event's data is not JSON", e.Kind)
		}
	}
	return nil
}
