package snapshotsapp

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/internal/bytecache"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// SnapshotLibrary is the stored snapshots as every service reads them
// (describe, figures, propose, validate, render, get_snapshot, the body
// route): the gzipped bodies and the decoded snapshots each in a cache
// bounded in bytes, one load per snapshot at a time however many callers ask
// for it, and at most cfg.LargeDecodes large bodies decoded at once in this
// process (stored or posted), so memory follows the limits and not the
// traffic. A snapshot never changes under its name, so nothing cached is
// ever stale.
type SnapshotLibrary struct {
	store   ports.SnapshotStore
	bodies  *bytecache.ByteCache[string, Body]
	decoded *bytecache.ByteCache[string, Loaded]
	flight  singleflight.Group
	slots   chan struct{}

	lookups  ports.Counter // by cache and result
	decoding ports.Gauge   // large decodes by state: running, waiting
}

// Body is a snapshot's canonical JSON gzipped exactly as stored, and where
// the snapshot came from.
type Body struct {
	Gzipped []byte
	Origin  string
}

// Loaded is a decoded snapshot and where it came from. Snapshot is shared
// by every caller: read it, never change it.
type Loaded struct {
	Snapshot *snapshots.Snapshot
	Origin   string
	ranked   *rankedOnce // its weights ranked once, kept with it in the cache
}

// rankedOnce is a snapshot's ranked weights, made by the first caller that
// needs them and shared by every later one.
type rankedOnce struct {
	once sync.Once
	r    *snapshots.RankedWeights
	err  error
}

// Ranked is the snapshot's weights parsed and sorted (what compute_figures
// works from): made once per cached snapshot, not per call.
func (l Loaded) Ranked() (*snapshots.RankedWeights, error) {
	if l.ranked == nil {
		return snapshots.RankWeights(l.Snapshot.Accounts)
	}
	l.ranked.once.Do(func() { l.ranked.r, l.ranked.err = snapshots.RankWeights(l.Snapshot.Accounts) })
	return l.ranked.r, l.ranked.err
}

// loadedFootprint is what a decoded snapshot holds in the cache, with room
// for its ranked weights once they are made.
func loadedFootprint(l Loaded) int {
	return snapshots.Footprint(l.Snapshot) + snapshots.RankedFootprint(len(l.Snapshot.Accounts))
}

// Demo reports whether the snapshot is the made-up demo reading.
func (l Loaded) Demo() bool { return l.Origin == OriginDemo }

// Memory the library's caches may hold, and what counts as a large body.
const (
	bodyCacheBytes = 32 << 20
	// A decoded 100,000-account reading is about 30 MiB; the cache holds two
	// of the largest, and one may take up to half of it.
	decodedCacheBytes = 96 << 20
	// largeBody is the inflated size from which a decode takes a slot.
	largeBody = 1 << 20
	// loadTimeout bounds a load that callers share, since it outlives the
	// caller that started it.
	loadTimeout = 60 * time.Second
)

// NewSnapshotLibrary makes the library over the snapshot store, with its
// metrics: what each cache holds, its hits and misses, and the large decodes
// running and waiting.
func NewSnapshotLibrary(cfg config.Config, store ports.SnapshotStore, m ports.Metrics) *SnapshotLibrary {
	l := &SnapshotLibrary{
		store:    store,
		bodies:   bytecache.NewByteCache[string](bodyCacheBytes, bodyCacheBytes/4, func(b Body) int { return len(b.Gzipped) + 64 }),
		decoded:  bytecache.NewByteCache[string](decodedCacheBytes, decodedCacheBytes/2, loadedFootprint),
		slots:    make(chan struct{}, max(cfg.LargeDecodes, 1)),
		lookups:  m.Counter("petal_snapshot_cache_lookups_total", "Lookups in the snapshot caches, by cache (bodies, decoded) and result (hit, miss).", "cache", "result"),
		decoding: m.Gauge("petal_snapshot_large_decodes", "Snapshot bodies over 1 MiB being decoded (running) or waiting for a turn (waiting), stored or posted.", "state"),
	}
	m.Observe("petal_snapshot_cache_bytes", "Bytes the snapshot caches hold, by cache (bodies, decoded; decoded ones estimated).", []string{"cache"},
		func(_ context.Context, emit func(float64, ...string)) error {
			emit(float64(l.bodies.BytesHeld()), "bodies")
			emit(float64(l.decoded.BytesHeld()), "decoded")
			return nil
		})
	return l
}

// Store is the store under the library, for writes and lookups by target.
func (l *SnapshotLibrary) Store() ports.SnapshotStore { return l.store }

// Load is a stored snapshot decoded (or one shipped inside petal), from the
// cache when it is there. Callers asking for the same snapshot at once share
// one load.
func (l *SnapshotLibrary) Load(ctx context.Context, sha string) (Loaded, error) {
	if err := CheckSHA256("sha256", sha); err != nil {
		return Loaded{}, err
	}
	if got, ok := l.decoded.Get(sha); ok {
		l.lookups.Add(1, "decoded", "hit")
		return got, nil
	}
	l.lookups.Add(1, "decoded", "miss")
	ch := l.flight.DoChan("decoded:"+sha, func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
		defer cancel()
		got, err := l.decode(lctx, sha)
		if err == nil {
			l.decoded.Put(sha, got)
		}
		return got, err
	})
	select {
	case <-ctx.Done():
		return Loaded{}, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return Loaded{}, r.Err
		}
		return r.Val.(Loaded), nil
	}
}

func (l *SnapshotLibrary) decode(ctx context.Context, sha string) (Loaded, error) {
	b, err := l.Body(ctx, sha)
	if err != nil {
		return Loaded{}, err
	}
	if b.Origin == OriginDemo {
		if sh, ok := ShippedBySHA(sha); ok {
			return Loaded{Snapshot: &sh.Snapshot, Origin: OriginDemo, ranked: &rankedOnce{}}, nil
		}
	}
	release, err := l.DecodeSlot(ctx, InflatedLength(b.Gzipped))
	if err != nil {
		return Loaded{}, err
	}
	defer release()
	s, _, err := decodeStored(sha, b.Gzipped)
	if err != nil {
		return Loaded{}, err
	}
	return Loaded{Snapshot: &s, Origin: b.Origin, ranked: &rankedOnce{}}, nil
}

// Body is a stored snapshot's body as stored (or one shipped inside
// petal's), for the body route to serve without recompressing.
func (l *SnapshotLibrary) Body(ctx context.Context, sha string) (Body, error) {
	if err := CheckSHA256("sha256", sha); err != nil {
		return Body{}, err
	}
	if b, ok := l.bodies.Get(sha); ok {
		l.lookups.Add(1, "bodies", "hit")
		return b, nil
	}
	l.lookups.Add(1, "bodies", "miss")
	stored, err := l.store.Get(ctx, sha)
	if errs.Is(err, errs.NotFound) {
		if sh, ok := ShippedBySHA(sha); ok {
			return Body{Gzipped: sh.Gzipped, Origin: OriginDemo}, nil
		}
		return Body{}, errs.Newf(errs.NotFound, "no snapshot %s is stored here", sha)
	}
	if err != nil {
		return Body{}, err
	}
	b := Body{Gzipped: stored.Gzipped, Origin: stored.Origin}
	l.bodies.Put(sha, b)
	return b, nil
}

// Forget drops what the caches hold of a snapshot whose origin may have
// changed (this site read the same bytes itself), so the next answer reads
// it again. Other processes keep theirs until it is evicted, which only ever
// under-claims: an origin moves only up to this_site.
func (l *SnapshotLibrary) Forget(sha string) {
	l.bodies.Remove(sha)
	l.decoded.Remove(sha)
}

// DecodeSlot waits for a turn to decode a body of size bytes (inflated) and
// returns what gives it back. Small bodies need no turn; large ones take one
// of cfg.LargeDecodes, so however many arrive at once, only that many are
// decoded at a time in this process and the rest wait, holding only what
// they were sent.
func (l *SnapshotLibrary) DecodeSlot(ctx context.Context, size int64) (release func(), err error) {
	if size < largeBody {
		return func() {}, nil
	}
	l.decoding.Add(1, "waiting")
	defer l.decoding.Add(-1, "waiting")
	select {
	case l.slots <- struct{}{}:
		l.decoding.Add(1, "running")
		return func() { l.decoding.Add(-1, "running"); <-l.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
