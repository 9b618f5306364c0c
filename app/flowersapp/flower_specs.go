package flowersapp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/specs"
)

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
// keeps a valid one for owner. Problems are the caller's to report; err is
// anything else (the store failing, the data budget spent).
func (s *FlowerService) check(ctx context.Context, owner string, raw json.RawMessage) (CheckedSpec, []errs.Problem, error) {
	c, problems, err := s.CheckSpec(ctx, raw)
	if err != nil || len(problems) > 0 {
		return c, problems, err
	}
	if err := s.KeepSpec(ctx, owner, c.SHA256, c.Spec.Snapshot, c.Canonical); err != nil {
		return CheckedSpec{}, nil, err
	}
	return c, nil, nil
}

// CheckSpec is check keeping nothing, for a caller that must store nothing
// when it refuses or only asks (a quote, a publish not yet decided).
func (s *FlowerService) CheckSpec(ctx context.Context, raw json.RawMessage) (CheckedSpec, []errs.Problem, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return CheckedSpec{}, nil, errs.New(errs.BadInput, "spec is required", "send a flower-spec/v1 object as spec")
	}
	spec, problems := specs.ParseSpec(raw)
	if len(problems) > 0 {
		return CheckedSpec{}, problems, nil
	}
	loaded, err := s.LoadSnapshot(ctx, spec.Snapshot)
	if errs.Is(err, errs.NotFound) {
		return CheckedSpec{}, []errs.Problem{{Path: "/snapshot", Message: "no snapshot " + spec.Snapshot + " is stored here"}}, nil
	}
	if err != nil {
		return CheckedSpec{}, nil, err
	}
	snap := loaded.Snapshot
	if problems := specs.CheckAgainst(spec, spec.Snapshot, snap); len(problems) > 0 {
		return CheckedSpec{}, problems, nil
	}
	name, canonical, err := specs.Name(spec)
	if err != nil {
		return CheckedSpec{}, nil, errs.New(errs.Internal, "the spec could not be named").WithCause(err)
	}
	return CheckedSpec{Spec: spec, SHA256: name, Canonical: canonical, Snapshot: snap, Demo: loaded.Demo()}, nil, nil
}

// KeepSpec stores a checked spec under its name for owner, paid from the data
// budget once: a spec kept before costs nothing again.
func (s *FlowerService) KeepSpec(ctx context.Context, owner, name, snapshot string, canonical []byte) error {
	// A spec kept before costs nothing again, and needs no write; a new one
	// is paid for before it is stored, and refused past the data budget
	// with nothing stored.
	if _, err := s.specs.Get(ctx, name); err == nil {
		return nil
	} else if !errs.Is(err, errs.NotFound) {
		return errs.New(errs.Internal, "the spec store could not be read").WithCause(err)
	}
	refund, err := s.budget.Spend(ctx, owner, snapshotsapp.RowBytes+int64(len(canonical)))
	if err != nil {
		return err
	}
	kept, err := s.specs.Keep(ctx, name, snapshot, canonical)
	if err != nil || !kept {
		refund() // failed, or kept by another call meanwhile
	}
	if err != nil {
		return errs.New(errs.Internal, "the spec could not be kept").WithCause(err)
	}
	return nil
}

// Draft is the canonical JSON of a kept spec, for /d/:hash. It is hashed
// again on read: a body that no longer matches its name is never served.
func (s *FlowerService) Draft(ctx context.Context, hash string) ([]byte, error) {
	if !snapshotsapp.SHA256Pattern.MatchString(hash) {
		return nil, errs.Newf(errs.NotFound, "no draft %s", toolkit.CutForMessage(hash))
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
