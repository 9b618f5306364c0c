package mapsapp

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/ports"
)

//go:embed map-marks.json
var curatedMarksFile []byte

// CuratedMarks is the curated list shipped in petal (app/mapsapp/map-marks.json),
// checked: petal does not start with an invalid one.
func CuratedMarks() (map[string]maps.CuratedMark, error) { return maps.CheckCurated(curatedMarksFile) }

// How the map_marks job reads (docs/map.md).
const (
	marksJob = "map_marks"
	// MarksReadEvery is how long a mark read stands before it is read again.
	MarksReadEvery = 24 * time.Hour
	// A failed read is tried again after marksRetryFirst, doubled with
	// each failure in a row, at most MarksReadEvery.
	marksRetryFirst = 10 * time.Minute
	// marksBatch is how many maps one run reads at most.
	marksBatch = 50
	// marksDeadline bounds a run; marksReadTimeout each map's chain read.
	marksDeadline    = 2 * time.Minute
	marksReadTimeout = 15 * time.Second
	// marksAnswerMax bounds a contract's answer read: a logo of at most
	// maps.MaxLogoBytes as base64 and the rest, with room; past it the read
	// is refused whole (cannot_read), as any chain answer too large.
	marksAnswerMax = 256 << 10
)

// MarkReader reads the maps' marks (board #85) as a scheduled job, one
// replica at a time: for each map that has none or a stale one, the chain
// first (a token's ft_metadata, a Sputnik DAO's get_config), then the
// curated list, kept in ports.MapMarks and carried by the map's cards.
type MarkReader struct {
	chain   ports.NearViews
	store   ports.MapMarks
	maps    *MapService
	curated map[string]maps.CuratedMark
	clock   ports.Clock
	log     *slog.Logger
	every   time.Duration
	outcome ports.Counter
}

// NewMarkReader makes the map_marks job's reader. The shipped list is
// checked here, so petal does not start with an invalid one.
func NewMarkReader(cfg config.Config, chain ports.NearViews, store ports.MapMarks, mapService *MapService, clock ports.Clock, log *slog.Logger, m ports.Metrics) (*MarkReader, error) {
	curated, err := CuratedMarks()
	if err != nil {
		return nil, err
	}
	m = ports.MetricsOrNone(m)
	return &MarkReader{chain: chain, store: store, maps: mapService, curated: curated, clock: clock, log: log,
		every: time.Duration(cfg.MapMarksMin) * time.Minute,
		outcome: m.Counter("petal_map_marks_total",
			"Maps' marks the map_marks job read, by outcome: read (kept), no_contract (the contract is not on the chain: kept from the curated list alone), failed (the chain's read failed: what the chain said before kept, the curated list applied, tried again later), logo_refused (kept without the logo the chain gave: not a picture the site keeps).", "outcome"),
	}, nil
}

// Job is the reading as a scheduled job, or nil when PETAL_MAP_MARKS_MIN
// is 0.
func (r *MarkReader) Job() *jobsapp.Job {
	if r.every <= 0 {
		return nil
	}
	return &jobsapp.Job{Name: marksJob, Every: r.every, Deadline: marksDeadline, Run: r.Run}
}

// Run reads the marks of at most marksBatch maps that are due (never read
// first), and returns how many it kept. A map whose read fails keeps what it
// had and is tried again later; the run goes on with the next.
func (r *MarkReader) Run(ctx context.Context) (int64, error) {
	st, err := r.maps.current(ctx)
	if err != nil {
		return 0, err
	}
	if st.demo {
		return 0, nil // the demo maps' contracts are made up: nothing to read, nothing to keep
	}
	subjects := map[string]maps.Subject{}
	ids := []string{}
	for _, s := range st.index.Subjects() {
		subjects[s.ID] = s
		ids = append(ids, s.ID)
	}
	due, err := r.store.Due(ctx, ids, marksBatch)
	if err != nil {
		return 0, err
	}
	var kept, changed int64
	for _, id := range due {
		if ctx.Err() != nil {
			break // the deadline: the next run goes on
		}
		w, outcome, err := r.read(ctx, subjects[id])
		if err != nil && ctx.Err() != nil {
			break // cut by the run's deadline, not the chain's failure: due again next run
		}
		if err != nil {
			r.outcome.Add(1, "failed")
			r.log.WarnContext(ctx, "map_marks: a mark could not be read", "map", id, "err", err)
			refilled, ferr := r.refill(ctx, id)
			if ferr == nil {
				ferr = r.store.Failed(ctx, id, refilled, err.Error(), marksRetryFirst, MarksReadEvery)
			}
			if ferr != nil {
				return kept, ferr
			}
			if refilled != nil {
				changed++
			}
			continue
		}
		if err := r.store.Keep(ctx, w); err != nil {
			return kept, err
		}
		r.outcome.Add(1, outcome)
		kept++
	}
	if kept+changed > 0 {
		// This replica's cards carry them at once; the others within
		// marksRecheck.
		r.maps.RefreshMarks(ctx)
	}
	return kept, nil
}

// refill is the mark a map whose chain could not be read has now: what it
// had from the chain, and the curated list filling the rest (a list entry
// never waits for the chain to answer). nil when that is what it had.
func (r *MarkReader) refill(ctx context.Context, id string) (json.RawMessage, error) {
	raw, err := r.store.Mark(ctx, id)
	if err != nil {
		return nil, err
	}
	var prev *maps.Mark
	if raw != nil {
		prev = &maps.Mark{}
		if json.Unmarshal(raw, prev) != nil {
			prev = nil // unreadable: composed afresh from the list alone
		}
	}
	m, changed := maps.Refill(id, prev, r.curatedOf(id), r.clock.Now())
	if !changed {
		return nil, nil // as it was (none, when nothing is known until the chain answers)
	}
	b, err := json.Marshal(m)
	if err != nil || len(b) > maps.MaxMarkJSON {
		return nil, errs.New(errs.Internal, "the mark could not be encoded within its bound").WithCause(err)
	}
	return b, nil
}

func (r *MarkReader) curatedOf(id string) *maps.CuratedMark {
	if c, ok := r.curated[id]; ok {
		return &c
	}
	return nil
}

// read is one map's mark: the chain's word first, then the curated list's,
// and the outcome it counts as. A contract that isn't there (no account, no
// code) says nothing: the mark is the list's alone, kept as a read.
func (r *MarkReader) read(ctx context.Context, s maps.Subject) (ports.MarkWrite, string, error) {
	now := r.clock.Now()
	var said chainSaid
	outcome := "read"
	if strings.HasPrefix(s.Chain, "near:") {
		rctx, cancel := context.WithTimeout(ctx, marksReadTimeout)
		defer cancel()
		var found bool
		var err error
		switch s.Kind {
		case maps.KindToken:
			said, found, err = r.readToken(rctx, s, now)
		case maps.KindDAO:
			said, found, err = r.readDAO(rctx, s)
		default:
			found = true // a pool: nothing to read, the list alone
		}
		if err != nil {
			return ports.MarkWrite{}, "", err
		}
		if !found {
			outcome = "no_contract"
		}
	}
	mark := maps.Compose(s.ID, said.name, said.symbol, r.curatedOf(s.ID), said.logo, now)
	b, err := json.Marshal(mark)
	if err != nil || len(b) > maps.MaxMarkJSON {
		return ports.MarkWrite{}, "", errs.New(errs.Internal, "the mark could not be encoded within its bound").WithCause(err)
	}
	return ports.MarkWrite{MapID: s.ID, Mark: b, Logo: said.picture, Again: MarksReadEvery}, outcome, nil
}

// chainSaid is what a contract says of itself, each part checked.
type chainSaid struct {
	name, symbol maps.ChainPart
	logo         *maps.MarkLogo
	picture      *ports.StoredPicture
}

// view calls a contract's view method; found is false when the contract
// isn't there (no account, no code), which is an answer, not a failure.
func (r *MarkReader) view(ctx context.Context, s maps.Subject, method string) (result []byte, found bool, err error) {
	v, err := r.chain.View(ctx, s.Chain, s.Address, method, nil, marksAnswerMax)
	if errs.Is(err, errs.NotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return v.Result, true, nil
}

// readToken reads a token's ft_metadata: its name, symbol and icon.
func (r *MarkReader) readToken(ctx context.Context, s maps.Subject, now time.Time) (chainSaid, bool, error) {
	var said chainSaid
	result, found, err := r.view(ctx, s, "ft_metadata")
	if !found || err != nil {
		return said, found, err
	}
	meta, err := maps.ParseFTMetadata(result)
	if err != nil {
		return said, true, err
	}
	ref := maps.ChainRef(s.Address, "ft_metadata")
	said.name.Value, said.name.Ref = r.checked(s.ID, "name", meta.Name, maps.CheckName), ref
	said.symbol.Value, said.symbol.Ref = r.checked(s.ID, "symbol", meta.Symbol, maps.CheckSymbol), ref
	if meta.Icon == "" {
		return said, true, nil
	}
	p, err := maps.CheckIcon(meta.Icon)
	if err != nil {
		r.outcome.Add(1, "logo_refused")
		r.log.InfoContext(ctx, "map_marks: a token's icon is refused", "map", s.ID, "why", err.Error())
		return said, true, nil
	}
	said.logo = maps.LogoOf(p, maps.SourceChain, maps.StatusRead, ref+" icon", now)
	said.picture = &ports.StoredPicture{SHA256: p.SHA256, MediaType: p.MediaType, Bytes: p.Bytes, Width: p.Width, Height: p.Height}
	return said, true, nil
}

// readDAO reads a Sputnik DAO's get_config: the name it shows people (its
// metadata's displayName) before its account-like name.
func (r *MarkReader) readDAO(ctx context.Context, s maps.Subject) (chainSaid, bool, error) {
	var said chainSaid
	result, found, err := r.view(ctx, s, "get_config")
	if !found || err != nil {
		return said, found, err
	}
	cfg, err := maps.ParseDAOConfig(result)
	if err != nil {
		return said, true, err
	}
	ref := maps.ChainRef(s.Address, "get_config")
	if dn := r.checked(s.ID, "displayName", cfg.DisplayName, maps.CheckName); dn != "" {
		said.name = maps.ChainPart{Value: dn, Ref: ref + " metadata.displayName"}
	} else if n := r.checked(s.ID, "name", cfg.Name, maps.CheckName); n != "" {
		said.name = maps.ChainPart{Value: n, Ref: ref + " name"}
	}
	return said, true, nil
}

// checked is v as check keeps it, or "" (logged) when it is refused: a part
// refused leaves the rest of the mark.
func (r *MarkReader) checked(id, part, v string, check func(string) (string, error)) string {
	if v == "" {
		return ""
	}
	out, err := check(v)
	if err != nil {
		var refusal *maps.MarkRefusal
		if errors.As(err, &refusal) {
			r.log.Info("map_marks: a part of a mark is refused", "map", id, "part", part, "why", refusal.Reason)
		}
		return ""
	}
	return out
}
