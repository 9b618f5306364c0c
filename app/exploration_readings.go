package app

import (
	"context"
	"io"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/snapshots"
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
