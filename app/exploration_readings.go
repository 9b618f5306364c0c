package app

import (
	"context"
	"fmt"
	"io"
	"time"

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

// PostedCaps are the day's caps on new posted readings for this site: the
// site's, and the share one address or one owner may take of it.
func (c Config) PostedCaps() ports.PostedCaps {
	share := min(c.PostedPerAddress, c.PostedSnapshotsPerDay)
	return ports.PostedCaps{Site: c.PostedSnapshotsPerDay, PerAddress: share, PerOwner: share}
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
// body yields the request's bytes, already inflated and capped by the door.
func (s *ExplorationService) PostReading(ctx context.Context, caller Caller, ref, name string, body io.Reader) (PostedReading, error) {
	e, _, err := s.resolve(ctx, ref, caller, explorations.ContinueAccess)
	if err != nil {
		return PostedReading{}, err
	}
	if err := CheckSHA256("the snapshot's name", name); err != nil {
		return PostedReading{}, err
	}
	out := PostedReading{Exploration: e.ID, SHA256: name, Origin: OriginTheirMachine}
	held, err := s.snapshots.Get(ctx, name)
	switch {
	case err == nil:
		// Held already: the body must still be the reading its name says.
		if _, _, _, err := s.readPosted(body, name); err != nil {
			return PostedReading{}, err
		}
		out.Origin = held.Origin
		if err := s.store.RecordPostedReading(ctx, e.ID, name, false, s.now()); err != nil {
			return PostedReading{}, err
		}
		return out, nil
	case !errs.Is(err, errs.NotFound):
		return PostedReading{}, err
	}
	if err := s.budget.Fits(ctx, e.Owner, RowBytes); err != nil {
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
		return PostedReading{}, RateLimited("this site took all the new readings it takes today", wait)
	case "address":
		return PostedReading{}, RateLimited(fmt.Sprintf("this address posted the %d new readings one address may post today", s.cfg.PostedCaps().PerAddress), wait)
	case "owner":
		return PostedReading{}, RateLimited(fmt.Sprintf("this exploration's owner has the %d new readings one owner may post today", s.cfg.PostedCaps().PerOwner), wait)
	}
	stored := false
	defer func() {
		if !stored {
			if err := s.store.ReleasePostedReading(context.WithoutCancel(ctx), e.ID, name); err != nil {
				s.logError("releasing a posted reading's place", err)
			}
		}
	}()
	snap, sha, canonical, err := s.readPosted(body, name)
	if err != nil {
		return PostedReading{}, err
	}
	refund, err := s.budget.Spend(ctx, e.Owner, RowBytes+int64(len(canonical)))
	if err != nil {
		return PostedReading{}, err
	}
	if out.Stored, err = StoreCanonical(ctx, s.snapshots, snap, sha, canonical, OriginTheirMachine); err != nil {
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

// readPosted reads a posted body and checks it is the reading name names.
func (s *ExplorationService) readPosted(body io.Reader, name string) (snapshots.Snapshot, string, []byte, error) {
	raw, err := io.ReadAll(body)
	if err != nil {
		return snapshots.Snapshot{}, "", nil, decodeError(err)
	}
	snap, sha, canonical, err := snapshots.Parse(raw)
	if err != nil {
		return snapshots.Snapshot{}, "", nil, err
	}
	if sha != name {
		return snapshots.Snapshot{}, "", nil, errs.Newf(errs.BadInput, "the snapshot's SHA-256 is %s, not the %s its address names", sha, name).
			WithHint("put it at /api/v1/explorations/<ref>/snapshots/<the sha256 of its canonical JSON (RFC 8785)>")
	}
	return snap, sha, canonical, nil
}
