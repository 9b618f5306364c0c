package explorationsapp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"time"

	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

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
// false). A new one takes a place under the day's caps (the site's
// PETAL_POSTED_SNAPSHOTS_PER_DAY, and PETAL_POSTED_SNAPSHOTS_PER_ADDRESS of
// it per address and per owner) and, for an owner who isn't signed in, its canonical size from the
// data budget; both are checked before the body is read, and a refusal
// stores nothing.
//
// The body is read twice at most. The first pass streams it through the
// SHA-256 and the shape checker (PostedLimits), holding nothing: a reading
// past a limit is refused there, and one already held whose bytes hash to
// its name is answered at once, never parsed. Only then is it decoded, in
// one of the library's decode slots when it is large.
func (s *ExplorationService) PostReading(ctx context.Context, caller toolkit.Caller, ref, name string, body PostedBody) (PostedReading, error) {
	e, _, err := s.Resolve(ctx, ref, caller, explorations.ContinueAccess)
	if err != nil {
		return PostedReading{}, err
	}
	if err := snapshotsapp.CheckSHA256("the snapshot's name", name); err != nil {
		return PostedReading{}, err
	}
	out := PostedReading{Exploration: e.ID, SHA256: name, Origin: snapshotsapp.OriginTheirMachine}
	held, err := s.snapshots.Get(ctx, name)
	switch {
	case err == nil:
		// Held already: the body must still be the reading its name says,
		// which bytes hashing to that name are without being parsed.
		rawSHA, size, accounts, err := scanPosted(body)
		if err != nil {
			return PostedReading{}, err
		}
		if rawSHA != name {
			if _, _, err := parsePosted(ctx, s.library, body, size, accounts, name); err != nil {
				return PostedReading{}, err
			}
		}
		out.Origin = held.Origin
		if err := s.store.RecordPostedReading(ctx, e.ID, name, false, s.now()); err != nil {
			return PostedReading{}, err
		}
		return out, nil
	case !errs.Is(err, errs.NotFound):
		return PostedReading{}, err
	}
	if err := s.budget.Fits(ctx, e.Owner, snapshotsapp.RowBytes); err != nil {
		return PostedReading{}, err
	}
	now := s.now()
	midnight := explorations.StartOfDayUTC(now)
	refused, err := s.store.ReservePostedReading(ctx, ports.PostedSlot{Exploration: e.ID, SHA256: name, Address: caller.Address,
		Owner: e.Owner, At: now, Since: midnight}, s.cfg.PostedCaps())
	if err != nil {
		return PostedReading{}, err
	}
	wait := midnight.Add(24 * time.Hour).Sub(now)
	switch refused {
	case "site":
		return PostedReading{}, toolkit.RateLimited("this site took all the new readings it takes today", wait)
	case "address":
		return PostedReading{}, toolkit.RateLimited(fmt.Sprintf("this address posted the %d new readings one address may post today", s.cfg.PostedCaps().PerAddress), wait)
	case "owner":
		return PostedReading{}, toolkit.RateLimited(fmt.Sprintf("this exploration's owner has the %d new readings one owner may post today", s.cfg.PostedCaps().PerOwner), wait)
	}
	stored := false
	defer func() {
		if !stored {
			if err := s.store.ReleasePostedReading(context.WithoutCancel(ctx), e.ID, name); err != nil {
				s.logError(ctx, "releasing a posted reading's place", err)
			}
		}
	}()
	_, size, accounts, err := scanPosted(body)
	if err != nil {
		return PostedReading{}, err
	}
	snap, canonical, err := parsePosted(ctx, s.library, body, size, accounts, name)
	if err != nil {
		return PostedReading{}, err
	}
	sha := name
	refund, err := s.budget.Spend(ctx, e.Owner, snapshotsapp.RowBytes+int64(len(canonical)))
	if err != nil {
		return PostedReading{}, err
	}
	if out.Stored, err = snapshotsapp.StoreCanonical(ctx, s.snapshots, snap, sha, canonical, snapshotsapp.OriginTheirMachine); err != nil {
		refund()
		return PostedReading{}, err
	}
	if !out.Stored {
		// Another post stored it first: this one changed nothing.
		refund()
		if err := s.store.ReleasePostedReading(ctx, e.ID, name); err != nil {
			return PostedReading{}, err
		}
		stored = true
		if err := s.store.RecordPostedReading(ctx, e.ID, sha, false, s.now()); err != nil {
			return PostedReading{}, err
		}
		return out, nil
	}
	stored = true
	return out, nil
}

// PostedBody is a posted reading's body as the door holds it: the bytes as
// sent (at most the wire limit), which Open yields from the start each time
// it is called, inflated afresh and capped at the inflated limit. Holding the
// wire bytes rather than the inflated ones keeps a reading waiting for its
// turn to be decoded at 2 MiB at most.
type PostedBody interface {
	Open() (io.ReadCloser, error)
}

// scanPosted streams a posted body through the SHA-256 of its bytes and the
// shape checker, keeping none of it.
func scanPosted(body PostedBody) (sha string, size int64, accounts int, err error) {
	rc, err := body.Open()
	if err != nil {
		return "", 0, 0, toolkit.DecodeError(err)
	}
	defer func() { _ = rc.Close() }()
	h := sha256.New()
	shape := snapshots.NewShapeChecker(snapshots.PostedLimits)
	size, err = io.Copy(io.MultiWriter(h, shape), rc)
	if err == nil {
		err = shape.Close()
	}
	if err != nil {
		return "", 0, 0, toolkit.DecodeError(err)
	}
	return hex.EncodeToString(h.Sum(nil)), size, shape.Accounts(), nil
}

// parsePosted decodes a body that passed scanPosted, in a decode slot when it
// is large, and checks it is the reading its name says.
func parsePosted(ctx context.Context, library *snapshotsapp.SnapshotLibrary, body PostedBody, size int64, accounts int, name string) (snapshots.Snapshot, []byte, error) {
	release, err := library.DecodeSlot(ctx, size)
	if err != nil {
		return snapshots.Snapshot{}, nil, err
	}
	defer release()
	rc, err := body.Open()
	if err != nil {
		return snapshots.Snapshot{}, nil, toolkit.DecodeError(err)
	}
	defer func() { _ = rc.Close() }()
	raw := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	if _, err := raw.ReadFrom(rc); err != nil {
		return snapshots.Snapshot{}, nil, toolkit.DecodeError(err)
	}
	snap, sha, canonical, err := snapshots.ParseShapedCounted(raw.Bytes(), accounts)
	if err != nil {
		return snapshots.Snapshot{}, nil, err
	}
	if sha != name {
		return snapshots.Snapshot{}, nil, errs.Newf(errs.BadInput, "the snapshot's SHA-256 is %s, not the %s its address names", sha, name).
			WithHint("post it named by the sha256 of its canonical JSON (RFC 8785)")
	}
	return snap, canonical, nil
}
