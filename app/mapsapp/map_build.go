package mapsapp

import (
	"context"
	"time"

	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/domain/specs"
	"github.com/petal-near/petal/ports"
)

// build brings the flowers held up to date (the whole store, or only the
// ones heard of) and makes the index. Readings and keys are read once per
// snapshot and spec in the process's life.
func (s *MapService) build(ctx context.Context, gen uint64) (*mapState, error) {
	s.mu.Lock()
	walk, pending, arrived := s.walk || s.held == nil, s.pending, s.arrived
	s.walk, s.pending, s.arrived = false, nil, nil
	s.mu.Unlock()
	for _, snap := range arrived {
		delete(s.missingAt, snap)
	}
	if err := s.catchUp(ctx, walk, pending); err != nil {
		s.mu.Lock()
		s.walk = s.walk || walk
		s.pending = append(pending, s.pending...)
		s.mu.Unlock()
		return nil, err
	}
	drawings := make([]maps.Drawing, 0, len(s.held))
	specsBySHA := make(map[string]specs.Spec, len(s.held))
	now := s.clock.Now()
	for _, h := range s.held {
		if h.excluded {
			continue
		}
		if !h.resolved {
			if at, ok := s.missingAt[h.Snapshot]; ok && now.Sub(at) < missingRetry {
				continue
			}
			r, keys, err := s.drawingFacts(ctx, h.mapFlower)
			switch {
			case errs.Is(err, errs.NotFound):
				// Listed as snapshot_missing by the flowers' own lists;
				// drawn nowhere, and looked for again at a build a while
				// later (or at once when it is stored through this process).
				s.missingAt[h.Snapshot] = now
				continue
			case err == errNotDrawable:
				h.excluded = true
				continue
			case err != nil:
				return nil, err
			}
			s.readingsHeld[h.Snapshot] = r
			h.drawing = maps.Drawing{Flower: h.ID, Spec: h.SpecSHA, Snapshot: h.Snapshot, Map: h.Map, Name: h.Name,
				Title: h.Spec.Title, About: h.About, MadeBy: h.MadeBy, MadeAt: h.MadeAt, Keys: keys}
			h.resolved = true
		}
		specsBySHA[h.SpecSHA] = h.Spec
		drawings = append(drawings, h.drawing)
	}
	if err := s.catchUpRefreshed(ctx, walk); err != nil {
		return nil, err
	}
	realDrawings := len(drawings)
	drawings, readings := s.withDemo(drawings, s.readingsHeld, specsBySHA)
	refreshed := s.refreshedHeld
	if realDrawings == 0 {
		refreshed = nil // the demo map's cards are made up
	}
	st := &mapState{
		demo:  realDrawings == 0 && len(drawings) > 0,
		index: maps.BuildWith(drawings, readings, refreshed, s.hidden, s.clock.Now()),
		gen:   gen,
		specs: specsBySHA,
		pages: newMapPageCache(),
	}
	s.withMarks(ctx, st)
	return st, nil
}

// catchUp reads the whole store into held (walk), or the flowers named.
func (s *MapService) catchUp(ctx context.Context, walk bool, ids []string) error {
	if walk {
		held := map[string]*heldFlower{}
		q := ports.FlowerQuery{Limit: published.MaxPage}
		for {
			page, err := s.store.List(ctx, q)
			if err != nil {
				return err
			}
			for _, k := range page.Flowers {
				if f, ok := s.flowerOf(k); ok {
					held[f.ID] = &heldFlower{mapFlower: f}
				}
			}
			if page.Next.IsStart() {
				break
			}
			q.After = page.Next
		}
		s.held, s.readingsHeld = held, map[string]maps.Reading{}
		return nil
	}
	for _, id := range ids {
		if _, ok := s.held[id]; ok {
			continue
		}
		k, err := s.store.Get(ctx, id)
		if errs.Is(err, errs.NotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if f, ok := s.flowerOf(k); ok {
			s.held[f.ID] = &heldFlower{mapFlower: f}
		}
	}
	return nil
}

// flowerOf reads a kept flower's record. A kept record was valid when kept;
// one that no longer reads is left off the map and logged.
func (s *MapService) flowerOf(k published.Kept) (mapFlower, bool) {
	f, _, _, problems := published.Parse(k.Record)
	if len(problems) > 0 {
		s.log.Warn("map: a kept flower no longer reads as flower/v1", "flower", k.ID, "problem", problems[0].Path+": "+problems[0].Message)
		return mapFlower{}, false
	}
	sha, _, err := specs.Name(f.Spec)
	if err != nil {
		return mapFlower{}, false
	}
	return mapFlower{ID: k.ID, Spec: f.Spec, SpecSHA: sha, Snapshot: f.Snapshot, Map: f.Map, Name: f.Name, About: f.About,
		MadeBy: f.MadeBy, MadeAt: k.MadeAt}, true
}

// errNotDrawable is a kept flower the map doesn't draw: its spec doesn't fit
// its snapshot, or its map isn't the one its snapshot reads.
var errNotDrawable = errs.New(errs.CannotRead, "this flower doesn't fit its snapshot")

// drawingFacts is a flower's reading and its colour keys, from the caches or
// from its snapshot (read once, for both). A spec is checked against its
// snapshot before its keys are kept; nil keys in the cache mark one that
// failed, so it is checked once.
func (s *MapService) drawingFacts(ctx context.Context, f mapFlower) (maps.Reading, []specs.Key, error) {
	r, haveReading := s.readings.Get(f.Snapshot)
	keys, haveKeys := s.keys.Get(f.SpecSHA)
	if haveReading && haveKeys {
		if keys == nil || r.Map != f.Map {
			return maps.Reading{}, nil, errNotDrawable
		}
		return r, keys, nil
	}
	loaded, err := s.library.Load(ctx, f.Snapshot)
	if err != nil {
		return maps.Reading{}, nil, err
	}
	snap := loaded.Snapshot
	if !haveReading {
		r = s.readingFrom(f.Snapshot, loaded)
	}
	if !haveKeys {
		keys = nil
		if problems := specs.CheckAgainst(f.Spec, f.Snapshot, snap); len(problems) > 0 {
			s.log.Warn("map: a published flower doesn't fit its snapshot", "flower", f.ID, "problem", problems[0].Path+": "+problems[0].Message)
		} else if flower, err := specs.Layout(f.Spec, snap); err != nil {
			s.log.Warn("map: a published flower could not be laid out", "flower", f.ID, "err", err)
		} else {
			keys = flower.Keys
			if keys == nil {
				keys = []specs.Key{}
			}
		}
		s.keys.Put(f.SpecSHA, keys)
	}
	if keys == nil || r.Map != f.Map {
		return maps.Reading{}, nil, errNotDrawable
	}
	return r, keys, nil
}

func readingOf(sha string, snap *snapshots.Snapshot) maps.Reading {
	asOf, _ := time.Parse(time.RFC3339Nano, snap.Block.Time)
	count := len(snap.Accounts)
	if snap.Source.Cut != nil {
		count = snap.Source.Cut.Total // a reading that kept its top accounts still counts them all
	}
	return maps.Reading{Snapshot: sha, Network: snap.Network, Title: snap.Title, About: snap.About,
		AsOf: asOf.UTC(), Count: count, Params: snap.Params, Map: published.MapOf(snap.Chain, snap.Params)}
}

// readingFrom is a loaded snapshot's reading with its headline figures, made
// once and cached: from the ranked weights the snapshot cache keeps, never
// per request.
func (s *MapService) readingFrom(sha string, loaded snapshotsapp.Loaded) maps.Reading {
	r := readingOf(sha, loaded.Snapshot)
	if ranked, err := loaded.Ranked(); err == nil {
		if fs, err := ranked.Figures(loaded.Snapshot, ""); err == nil {
			r.Headline = maps.HeadlineOf(r.Count, fs.Figures)
		}
	}
	s.readings.Put(sha, r)
	return r
}

// catchUpRefreshed reads the readings the map_refresh job kept again, at a
// walk or when one was kept (here or on another replica). A reading whose
// snapshot isn't here, or that reads another map than its row's, is left
// out.
func (s *MapService) catchUpRefreshed(ctx context.Context, walk bool) error {
	s.mu.Lock()
	stale := s.refreshedStale || walk
	s.refreshedStale = false
	s.mu.Unlock()
	if s.refresh == nil || !stale {
		return nil
	}
	kept, err := s.refresh.Readings(ctx, refreshReadingsHeld)
	if err != nil {
		s.mu.Lock()
		s.refreshedStale = true
		s.mu.Unlock()
		return err
	}
	held := make([]maps.Reading, 0, len(kept))
	for _, k := range kept {
		r, ok := s.readings.Get(k.Snapshot)
		if !ok {
			loaded, err := s.library.Load(ctx, k.Snapshot)
			if err != nil {
				continue
			}
			r = s.readingFrom(k.Snapshot, loaded)
		}
		if r.Map == k.Map {
			held = append(held, r)
		}
	}
	s.refreshedHeld = held
	return nil
}

// readRefreshedFrom has the map show the readings the map_refresh job kept
// in store, and count the looks at each map when countViews (the job is on).
func (s *MapService) readRefreshedFrom(store ports.MapRefresh, countViews bool) {
	s.mu.Lock()
	s.refresh, s.countViews, s.refreshedStale = store, countViews, true
	s.mu.Unlock()
}

// refreshedKept: a reading kept in this process is on its map at the next
// request here.
func (s *MapService) refreshedKept() {
	s.mu.Lock()
	s.refreshedStale = true
	s.mu.Unlock()
	s.Added("")
}

// HeardRefreshed: another replica kept a refreshed reading (its NOTIFY on
// the flowers' channel, ports.RefreshedPayload); rebuilt in the background.
func (s *MapService) HeardRefreshed() {
	s.mu.Lock()
	s.refreshedStale = true
	s.mu.Unlock()
	s.want.Add(1)
	s.RefreshSoon()
}

// viewed counts one look at a map, when the map_refresh job is on. A count
// that fails costs the look nothing: it is logged.
func (s *MapService) viewed(ctx context.Context, id string) {
	if s.refresh == nil || !s.countViews {
		return
	}
	vctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), viewCountTimeout)
	defer cancel()
	if err := s.refresh.Viewed(vctx, id, s.clock.Now()); err != nil {
		s.log.Warn("map: a look at a map could not be counted", "map", id, "err", err)
	}
}

// viewCountTimeout bounds counting one look, which a page waits on.
const viewCountTimeout = time.Second
