package mapsapp

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/internal/bytecache"
	"github.com/petal-near/petal/app/internal/hiddenmaps"
	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/viewsapp"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/specs"
	"github.com/petal-near/petal/ports"
)

// MapService is the shared map (docs/map.md): the published flowers whose
// snapshots are here, as maps, readings and views. It keeps the whole map as
// one immutable index per process, built from the store, and answers every
// list from it (and each list's encoded pages from a cache bounded in
// bytes). A flower kept in this process marks the index stale and the next
// request rebuilds it before answering; one kept on another replica (its
// NOTIFY) is rebuilt in the background while requests are answered from the
// index a moment old. Nothing per request reads the store of flowers.
type MapService struct {
	library *snapshotsapp.SnapshotLibrary
	store   MapFlowerStore
	hidden  map[string]maps.Hidden
	clock   ports.Clock
	log     *slog.Logger
	public  bool
	demo    bool                 // config.ShowsDemoMap: an empty map shows the demo drawings (map_demo.go)
	views   viewsapp.PersonViews // the view a ?view= names, or a signed-in person's own
	names   MapNamer             // a signed-in person's names on their petals; nil: none
	// relations gives /map its groups and pairs (nil: empty arrays).
	relations *relationsapp.RelationService
	// marks are the maps' marks the cards carry (nil: every mark null);
	// marksChecked is when this process last asked whether they changed.
	marks         ports.MapMarks
	marksChecked  atomic.Int64
	checkingMarks atomic.Bool

	// What the next build reads: the flowers heard of since the last one,
	// or the whole store (at start, after the listener reconnected, or when
	// too many came at once). held is the flowers read so far; only a build
	// (one at a time) touches it.
	mu      sync.Mutex
	pending []string
	walk    bool
	held    map[string]*heldFlower
	arrived []string // snapshots whose flowers were marked ok here since the last build
	// missingAt is when each missing snapshot was last looked for: a build
	// looks again only missingRetry later, so many flowers of snapshots that
	// aren't here cost no rebuild a read each.
	missingAt map[string]time.Time
	// readingsHeld are the readings of the flowers held, by snapshot.
	readingsHeld map[string]maps.Reading
	// refresh keeps the readings the map_refresh job made (nil: none) and,
	// with countViews, the looks at each map it reads first by.
	// refreshedStale has the next build read them again; refreshedHeld are
	// the ones read.
	refresh        ports.MapRefresh
	countViews     bool
	refreshedStale bool
	refreshedHeld  []maps.Reading

	state      atomic.Pointer[mapState]
	refreshing atomic.Bool
	want       atomic.Uint64 // bumped by every change; an index built before it is stale
	// mustHave is the last change made in this process: an index older than
	// it is never answered from.
	mustHave atomic.Uint64
	rebuild  singleflight.Group

	keys     *bytecache.ByteCache[string, []specs.Key] // by spec sha256: a spec's colours never change under its name
	readings *bytecache.ByteCache[string, maps.Reading]
	svgs     *bytecache.ByteCache[svgKey, renderedSVG]
	looks    *bytecache.ByteCache[string, maps.Look] // views named by hash: one never changes under its name

	builds     ports.Counter
	buildTime  ports.Histogram
	pageLookup ports.Counter
	svgLookup  ports.Counter
}

// MapFlowerStore is what the map reads of the published flowers' store.
type MapFlowerStore interface {
	Get(ctx context.Context, id string) (published.Kept, error)
	List(ctx context.Context, q ports.FlowerQuery) (ports.FlowerPage, error)
}

// Watching is the published flowers' store as every writer in this process
// uses it: a flower kept through it is on this process's map at once (the
// next request rebuilds with it), before its NOTIFY comes back.
func (s *MapService) Watching(store ports.PublishedFlowers) ports.PublishedFlowers {
	return watchedFlowers{PublishedFlowers: store, maps: s}
}

type watchedFlowers struct {
	ports.PublishedFlowers
	maps *MapService
}

func (w watchedFlowers) Keep(ctx context.Context, f published.Kept) (published.Kept, bool, error) {
	k, kept, err := w.PublishedFlowers.Keep(ctx, f)
	if err == nil && kept {
		w.maps.Added(k.ID)
	}
	return k, kept, err
}

// SetStatus: a flower whose snapshot arrived is drawn at the next build.
func (w watchedFlowers) SetStatus(ctx context.Context, snapshot, status string) (int64, error) {
	n, err := w.PublishedFlowers.SetStatus(ctx, snapshot, status)
	if err == nil && n > 0 {
		w.maps.mu.Lock()
		w.maps.arrived = append(w.maps.arrived, snapshot)
		w.maps.mu.Unlock()
		w.maps.Added("")
	}
	return n, err
}

// mapFlower is one published flower as the map needs it.
type mapFlower struct {
	ID       string
	Spec     specs.Spec
	SpecSHA  string
	Snapshot string
	Map      string
	Name     string
	About    string
	MadeBy   string
	MadeAt   time.Time
}

// heldFlower is a flower held and, once its snapshot was read, its drawing.
type heldFlower struct {
	mapFlower
	drawing  maps.Drawing
	resolved bool
	excluded bool // kept, but not drawable (errNotDrawable): never on the map
}

// maxPending is how many flowers heard of one at a time are read one by one;
// past it the next build walks the whole store instead.
const maxPending = 1000

type mapState struct {
	index *maps.Index
	gen   uint64
	specs map[string]specs.Spec // every drawing's spec, by its sha256
	pages *bytecache.ByteCache[pageKey, []byte]
	// marks are the cards' marks as read with the index (by map id).
	marks        map[string]json.RawMessage
	marksVersion ports.MarksVersion
	marksLoaded  bool
	// demo: the index is the demo drawings (no real flower is on the map).
	demo bool
}

func newMapPageCache() *bytecache.ByteCache[pageKey, []byte] {
	return bytecache.NewByteCache[pageKey](mapPageCacheBytes, mapPageCacheBytes/4, func(b []byte) int { return len(b) + 96 })
}

// Memory the map's caches may hold.
const (
	mapPageCacheBytes = 64 << 20
	mapSVGCacheBytes  = 32 << 20
	mapKeysCacheBytes = 16 << 20
	mapReadingsBytes  = 16 << 20
	// missingRetry is how long a build trusts that a snapshot is missing.
	missingRetry = time.Minute
	// mapBuildTimeout bounds a rebuild (or a drawing), which requests may be
	// waiting on. A first build cut short is not lost: the snapshots' facts
	// and the specs' keys it read stay cached, so the next goes further.
	mapBuildTimeout = 2 * time.Minute
)

// NewMapService makes the map over the snapshot library and its source, with
// the relations whose groups and pairs /map carries and the marks its cards
// carry (either nil: empty), and the hidden maps shipped in petal (an invalid
// file is an error, so petal does not start showing a map someone meant to
// hide).
func NewMapService(cfg config.Config, library *snapshotsapp.SnapshotLibrary, store MapFlowerStore, views viewsapp.PersonViews,
	relations *relationsapp.RelationService, marks ports.MapMarks, clock ports.Clock, log *slog.Logger, m ports.Metrics) (*MapService, error) {
	hidden, err := hiddenmaps.Load()
	if err != nil {
		return nil, err
	}
	m = ports.MetricsOrNone(m)
	s := &MapService{
		library: library, store: store, relations: relations, marks: marks, walk: true, missingAt: map[string]time.Time{}, views: views, hidden: hidden, clock: clock, log: log, public: cfg.Public, demo: cfg.ShowsDemoMap(),
		keys: bytecache.NewByteCache[string](mapKeysCacheBytes, 1<<20, func(k []specs.Key) int {
			n := 64
			for _, key := range k {
				n += 48 + len(key.Label)
			}
			return n
		}),
		readings: bytecache.NewByteCache[string](mapReadingsBytes, 1<<20, func(r maps.Reading) int {
			return 256 + len(r.Title) + len(r.About) + len(r.Params) + len(r.Network)
		}),
		looks:  bytecache.NewByteCache[string](1<<20, 1<<10, func(maps.Look) int { return 256 }),
		svgs:   bytecache.NewByteCache[svgKey](mapSVGCacheBytes, 1<<20, func(r renderedSVG) int { return len(r.svg) + 128 }),
		builds: m.Counter("petal_map_builds_total", "Rebuilds of this process's map index, by outcome (ok, failed).", "outcome"),
		buildTime: m.Histogram("petal_map_build_seconds", "How long a rebuild of the map index took (reading the published flowers, the snapshots new to it, and building).",
			[]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
		pageLookup: m.Counter("petal_map_page_cache_lookups_total", "Lookups of encoded map pages (maps, views, one map), by result (hit, miss).", "result"),
		svgLookup:  m.Counter("petal_map_svg_cache_lookups_total", "Lookups of rendered map pictures, by result (hit, miss).", "result"),
	}
	m.Observe("petal_map_cache_bytes", "Bytes the map's caches hold, by cache (pages, svgs, keys, readings).", []string{"cache"},
		func(_ context.Context, emit func(float64, ...string)) error {
			if st := s.state.Load(); st != nil {
				emit(float64(st.pages.BytesHeld()), "pages")
			}
			emit(float64(s.svgs.BytesHeld()), "svgs")
			emit(float64(s.keys.BytesHeld()), "keys")
			emit(float64(s.readings.BytesHeld()), "readings")
			return nil
		})
	m.Observe("petal_map_items", "What this process's map index lists, by kind (maps, views).", []string{"kind"},
		func(_ context.Context, emit func(float64, ...string)) error {
			if st := s.state.Load(); st != nil {
				emit(float64(st.index.Maps()), "maps")
				emit(float64(st.index.Views()), "views")
			}
			return nil
		})
	return s, nil
}

// Added marks the index stale for a flower kept in this process: the next
// request on this replica rebuilds it before answering (reading only that
// flower), so whoever kept it sees it at once.
func (s *MapService) Added(id string) {
	if id != "" {
		s.note(id)
	}
	v := s.want.Add(1)
	for {
		m := s.mustHave.Load()
		if m >= v || s.mustHave.CompareAndSwap(m, v) {
			return
		}
	}
}

// Heard marks the index stale for a flower another replica kept (its NOTIFY
// names it) and rebuilds in the background; until then requests are answered
// from the index a moment old, so nobody waits for another's change.
func (s *MapService) Heard(id string) {
	s.note(id)
	s.want.Add(1)
	s.RefreshSoon()
}

func (s *MapService) note(id string) {
	s.mu.Lock()
	if len(s.pending) < maxPending {
		s.pending = append(s.pending, id)
	} else {
		s.walk, s.pending = true, nil
	}
	s.mu.Unlock()
}

// Reset marks the index stale and has the next build read the whole store:
// notifications may have been missed (the listener reconnected).
func (s *MapService) Reset() {
	s.mu.Lock()
	s.walk, s.pending = true, nil
	s.mu.Unlock()
	s.want.Add(1)
}

// Refresh rebuilds the index now if it is stale.
func (s *MapService) Refresh(ctx context.Context) error {
	_, err := s.fresh(ctx)
	return err
}

// RefreshSoon rebuilds the index in the background until it is current, one
// rebuild at a time however many changes come (the listener calls it after
// each notification, so requests seldom wait).
func (s *MapService) RefreshSoon() {
	if !s.refreshing.CompareAndSwap(false, true) {
		return // the running refresher sees the change when it looks again
	}
	go func() {
		defer s.refreshing.Store(false)
		for {
			if st := s.state.Load(); st != nil && st.gen == s.want.Load() {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), mapBuildTimeout)
			err := s.Refresh(ctx)
			cancel()
			if err != nil {
				return
			}
		}
	}()
}

// current is the index, rebuilt first when a change came since it was built.
func (s *MapService) current(ctx context.Context) (*mapState, error) {
	if st := s.state.Load(); st != nil {
		s.recheckMarks()
		if st.gen == s.want.Load() {
			return st, nil
		}
		if st.gen >= s.mustHave.Load() {
			// Only changes heard from elsewhere are missing: answer now, and
			// have them in a moment.
			s.RefreshSoon()
			return st, nil
		}
	}
	return s.fresh(ctx)
}

// fresh is the index with every change made so far, rebuilt first if need be.
func (s *MapService) fresh(ctx context.Context) (*mapState, error) {
	// Every change made before now must be in the answer. A build already
	// under way may have started before the latest of them: then one more.
	target := s.want.Load()
	for {
		if st := s.state.Load(); st != nil && st.gen >= target {
			return st, nil
		}
		ch := s.rebuild.DoChan("build", func() (any, error) {
			want := s.want.Load()
			if st := s.state.Load(); st != nil && st.gen == want {
				return st, nil
			}
			// The build outlives the request that started it: others share it.
			bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mapBuildTimeout)
			defer cancel()
			started := time.Now()
			st, err := s.build(bctx, want)
			if err != nil {
				s.builds.Add(1, "failed")
				s.log.Warn("map: the index could not be rebuilt", "err", err)
				return nil, err
			}
			s.builds.Add(1, "ok")
			s.buildTime.Observe(time.Since(started).Seconds())
			s.state.Store(st)
			return st, nil
		})
		select {
		case r := <-ch:
			if r.Err != nil {
				// An older index still answers: better a map a moment old than none.
				if st := s.state.Load(); st != nil {
					return st, nil
				}
				return nil, errs.New(errs.SourceFailed, "the map could not be read", "try again in a moment").WithCause(r.Err)
			}
			if st := r.Val.(*mapState); st.gen >= target {
				return st, nil
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
