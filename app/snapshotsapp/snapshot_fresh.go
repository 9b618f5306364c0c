package snapshotsapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// SnapshotAnswer is get_snapshot's answer: a summary, never the body.
type SnapshotAnswer struct {
	SHA256     string `json:"sha256"`
	Network    string `json:"network"`
	TargetKey  string `json:"target_key"`
	AsOf       string `json:"as_of"`
	StoredOnly bool   `json:"stored_only"`
	Title      string `json:"title"`
	About      string `json:"about"`
	Count      int    `json:"count"`
	Summary    string `json:"summary"`
	// Origin is where the reading came from: this_site (this site's own
	// readers), their_machine (posted by someone's own agent, served by its
	// name only) or demo (made up, shipped for demos).
	Origin string `json:"origin"`
	Demo   bool   `json:"demo,omitempty"` // the made-up demo reading: never a real DAO's members
}

func answerOf(sha, key string, snap snapshots.Snapshot, storedOnly bool, origin string) SnapshotAnswer {
	summary := snapshots.Summary(snap)
	if origin == OriginDemo {
		// The summary is what the agent's tool_result carries: it says so too.
		summary = "A made-up demo reading (demo: true), not the real members of any DAO. " + summary
	}
	return SnapshotAnswer{SHA256: sha, Network: snap.Network, TargetKey: key, AsOf: snap.Block.Time, StoredOnly: storedOnly,
		Title: snap.Title, About: snap.About, Count: len(snap.Accounts), Summary: summary,
		Origin: origin, Demo: origin == OriginDemo}
}

// freshRetryAfter is what a fresh read past its turn is told to wait.
const freshRetryAfter = 5 * time.Second

func (s *SnapshotService) getSnapshot(ctx context.Context, call toolkit.Call, in getSnapshotInput) (SnapshotAnswer, error) {
	if in.Network == "" {
		return SnapshotAnswer{}, errs.New(errs.BadInput, "network is required: a network id such as near-dao-members", "see list_networks")
	}
	r, ok := ReaderByID(in.Network)
	if !ok {
		return SnapshotAnswer{}, errs.Newf(errs.BadInput, "network: no network %q", in.Network).WithHint("see list_networks")
	}
	if len(in.Params) == 0 {
		return SnapshotAnswer{}, errs.New(errs.BadInput, "params is required: the network's params as an object", "see get_network "+r.ID)
	}
	t, err := r.prepare(s, in.Params)
	if err != nil {
		return SnapshotAnswer{}, err
	}
	key, err := snapshots.TargetKey(t.network, t.params)
	if err != nil {
		return SnapshotAnswer{}, err
	}
	if in.At != "" {
		if in.Fresh {
			return SnapshotAnswer{}, errs.New(errs.BadInput, "at and fresh can't go together: at names a stored snapshot, fresh reads a new one")
		}
		if err := CheckSHA256("at", in.At); err != nil {
			return SnapshotAnswer{}, err
		}
		got, err := s.library.Load(ctx, in.At)
		if err != nil {
			return SnapshotAnswer{}, err
		}
		if k, _ := snapshots.TargetKey(got.Snapshot.Network, got.Snapshot.Params); k != key {
			return SnapshotAnswer{}, errs.Newf(errs.BadInput, "at names a snapshot of %s, not of this target", k)
		}
		return answerOf(in.At, key, *got.Snapshot, true, got.Origin), nil
	}
	if !in.Fresh {
		// Latest is this site's own readings only: a posted reading or the
		// demo is never what a target's stored reading is for anyone.
		latest, err := s.store.Latest(ctx, key)
		switch {
		case err == nil:
			got, err := s.library.Load(ctx, latest.SHA256)
			if err != nil {
				return SnapshotAnswer{}, err
			}
			return answerOf(latest.SHA256, key, *got.Snapshot, true, got.Origin), nil
		case !errs.Is(err, errs.NotFound):
			return SnapshotAnswer{}, err
		}
	}
	return s.readFresh(ctx, call.Caller.Address, t, key, call.Progress)
}

// FreshReadSlots is the name of the fresh reads' semaphore.
const FreshReadSlots = "fresh_read"

// freshLeaseSlack is how long a fresh read's slot outlives its read's
// deadline, for keeping the snapshot; past it a dead holder's slot is free.
const freshLeaseSlack = 30 * time.Second

// readFresh runs a reader now, within cfg.FreshReadTimeout: at most
// cfg.FreshReadsAtOnce at a time on the site (every process sharing the
// database, with PETAL_LIMITS=postgres) and one at a time per address, so one
// address can't hold every slot.
func (s *SnapshotService) readFresh(ctx context.Context, address string, t *target, key string, progress func(toolkit.Progress)) (SnapshotAnswer, error) {
	release, err := s.slots.Acquire(ctx, FreshReadSlots, address, max(s.cfg.FreshReadsAtOnce, 1), s.cfg.FreshReadTimeout+freshLeaseSlack)
	switch {
	case errors.Is(err, ports.ErrKeyBusy):
		s.freshReads.Observe(0, "address_busy")
		return SnapshotAnswer{}, toolkit.RateLimited("a fresh read from this address is running already: one at a time", freshRetryAfter)
	case errors.Is(err, ports.ErrSlotsTaken):
		s.freshReads.Observe(0, "no_slot")
		return SnapshotAnswer{}, toolkit.RateLimited(fmt.Sprintf("%d fresh reads are running already; this one waits its turn", max(s.cfg.FreshReadsAtOnce, 1)), freshRetryAfter)
	case err != nil:
		return SnapshotAnswer{}, errs.New(errs.Internal, "the fresh-read slots could not be read").WithCause(err)
	}
	defer func() {
		// The slot goes back even when the caller has gone; if this fails,
		// the lease frees it.
		rctx, cancel := toolkit.Detached(ctx)
		defer cancel()
		if err := release(rctx); err != nil {
			s.log.WarnContext(ctx, "giving a fresh-read slot back", "err", err)
		}
	}()
	rctx, cancel := context.WithTimeout(ctx, s.cfg.FreshReadTimeout)
	defer cancel()
	s.freshInFlight.Add(1)
	start := time.Now()
	snap, err := s.read(rctx, t, progress)
	s.freshInFlight.Add(-1)
	outcome := "ok"
	switch {
	case err == nil:
	case errors.Is(rctx.Err(), context.DeadlineExceeded):
		outcome = "timeout"
	default:
		outcome = "failed"
	}
	s.freshReads.Observe(time.Since(start).Seconds(), outcome)
	if err != nil {
		if errors.Is(rctx.Err(), context.DeadlineExceeded) {
			return SnapshotAnswer{}, errs.Newf(errs.SourceFailed, "the chain took longer than %d s to read", int(s.cfg.FreshReadTimeout.Seconds())).
				WithHint("try again later, or ask for the stored snapshot (without fresh)").WithCause(err)
		}
		if _, ok := errs.As(err); ok {
			return SnapshotAnswer{}, err
		}
		return SnapshotAnswer{}, errs.New(errs.SourceFailed, "the chain could not be read").WithCause(err)
	}
	progress(toolkit.Progress{Stage: "storing", Message: fmt.Sprintf("keeping the snapshot of %d accounts", len(snap.Accounts))})
	// A finished reading is kept even if the caller has gone meanwhile.
	wctx, cancel := toolkit.Detached(ctx)
	defer cancel()
	sha, _, err := StoreSnapshot(wctx, s.store, snap, OriginThisSite)
	if err != nil {
		return SnapshotAnswer{}, err
	}
	s.library.Forget(sha) // held before under another origin, it is this site's now
	return answerOf(sha, key, snap, false, OriginThisSite), nil
}

// read runs a target's reader against the chain, pinned to the final block.
func (s *SnapshotService) read(ctx context.Context, t *target, progress func(toolkit.Progress)) (snapshots.Snapshot, error) {
	if progress == nil {
		progress = func(toolkit.Progress) {}
	}
	rc := &readContext{network: t.chain, progress: progress}
	if _, isEVM := evm.ChainID(t.chain); isEVM {
		if s.evm == nil {
			return snapshots.Snapshot{}, errs.Newf(errs.BadInput, "%s can't be read here: no EVM chain is set up", t.chain)
		}
		rc.say("block", "reading the newest finalized block of "+t.chain, nil, nil)
		reading, err := s.evm.PinEVM(ctx, t.chain)
		if err != nil {
			return snapshots.Snapshot{}, err
		}
		rc.evm = reading
	} else {
		rc.say("block", "reading the newest final block of "+t.chain, nil, nil)
		reading, err := s.near.Pin(ctx, t.chain)
		if err != nil {
			return snapshots.Snapshot{}, err
		}
		rc.near = reading
	}
	snap, err := t.read(ctx, rc)
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	if problems := snapshots.Validate(snap); len(problems) > 0 {
		return snapshots.Snapshot{}, errs.New(errs.CannotRead, "the contract's answers don't make a valid snapshot").WithCause(snapshots.Invalid(problems))
	}
	return snap, nil
}

// Read runs a network's reader now, without storing: for tests and tools
// that make a reading on a person's own machine.
func (s *SnapshotService) Read(ctx context.Context, network string, params json.RawMessage, progress func(toolkit.Progress)) (snapshots.Snapshot, error) {
	r, ok := ReaderByID(network)
	if !ok {
		return snapshots.Snapshot{}, errs.Newf(errs.BadInput, "network: no network %q", network)
	}
	t, err := r.prepare(s, params)
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	return s.read(ctx, t, progress)
}
