package relationsapp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/petal-near/petal/app/internal/hiddenmaps"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/relations"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// RelationService is who holds power across the map (docs/relations.md): the
// membership index kept in ports.RelationStore, and the relations tools
// (account_groups, shared_accounts, related_groups, relations_overview,
// power_path) read from it. A group is a map with the accounts of its newest
// holdings reading; hidden maps are in no answer.
type RelationService struct {
	store    ports.RelationStore
	library  *snapshotsapp.SnapshotLibrary
	hidden   []string
	hiddenOK map[string]bool
	owners   sameOwners
	log      *slog.Logger

	// background holds a place for each large reading being indexed beside
	// the request that kept it.
	background chan struct{}

	offered  ports.Counter
	rebuild  ports.Histogram
	paths    ports.Counter
	expanded ports.Histogram
}

// Limits of the relations tools.
const (
	RelationsDefaultLimit = 50
	RelationsMaxLimit     = 200
	PathDefaultDepth      = 4
	PathMaxDepth          = 6
	PathDefaultBudget     = 20_000
	PathMaxBudget         = 200_000
	PathMaxPaths          = 5
	// relationsCatchUpBatch is how many readings one run of the catch-up
	// job offers.
	relationsCatchUpBatch = 50
	// relationsInlineMax: a kept reading of up to this many accounts is
	// indexed in the request that keeps it (milliseconds). A larger one is
	// indexed beside it, so publishing a 100,000-account token's flower
	// doesn't wait seconds on its group's rebuild.
	relationsInlineMax = 5_000
	// relationsBackgroundMax large readings are indexed beside requests at
	// once on a process (rebuilds queue on one lock anyway); past it the
	// catch-up job takes them.
	relationsBackgroundMax = 4
	// relationsBackgroundTimeout bounds one of them.
	relationsBackgroundTimeout = 5 * time.Minute
)

// NewRelationService makes the relations over the store, reading snapshots
// through the library and "same owner" claims from the site's shipped claims.
func NewRelationService(store ports.RelationStore, library *snapshotsapp.SnapshotLibrary, log *slog.Logger, m ports.Metrics) (*RelationService, error) {
	hidden, err := hiddenmaps.Load()
	if err != nil {
		return nil, err
	}
	// The shipped claims are read here, not through SiteClaims (which reads
	// the map, which reads the relations).
	site, err := NewSiteClaims()
	if err != nil {
		return nil, err
	}
	m = ports.MetricsOrNone(m)
	s := &RelationService{store: store, library: library, hiddenOK: map[string]bool{}, log: log, owners: sameOwnersOf(site),
		background: make(chan struct{}, relationsBackgroundMax),
		offered:    m.Counter("petal_relations_offered_total", "Readings offered to the relations index, by outcome (rebuilt, older, skipped, failed, deferred).", "outcome"),
		rebuild: m.Histogram("petal_relations_rebuild_seconds", "How long rebuilding one group's members and pairs took (its transaction, after its snapshot was read).",
			[]float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
		paths: m.Counter("petal_relations_paths_total", "power_path searches, by outcome (found, none, exhausted).", "outcome"),
		expanded: m.Histogram("petal_relations_path_expanded", "Memberships a power_path search followed.",
			[]float64{10, 100, 1000, 5000, 20000, 50000, 200000}),
	}
	for id := range hidden {
		s.hidden = append(s.hidden, id)
		s.hiddenOK[id] = true
	}
	return s, nil
}

// FlowerKept offers a newly kept flower's reading to the index (the keeping
// path calls it; the catch-up job offers what it missed): in the request
// for a reading of up to relationsInlineMax accounts, beside it for a
// larger one.
func (s *RelationService) FlowerKept(ctx context.Context, k published.Kept) {
	if k.Status != published.StatusOK {
		return
	}
	if loaded, err := s.library.Load(ctx, k.Snapshot); err == nil && len(loaded.Snapshot.Accounts) > relationsInlineMax {
		select {
		case s.background <- struct{}{}:
			go func() {
				defer func() {
					<-s.background
					if p := recover(); p != nil {
						s.log.Error("relations: indexing a kept flower's reading panicked", "map", k.Map, "panic", p)
					}
				}()
				bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), relationsBackgroundTimeout)
				defer cancel()
				s.offerKept(bctx, k)
			}()
		default:
			s.offered.Add(1, "deferred")
			s.log.InfoContext(ctx, "relations: a large reading is left to the catch-up job (enough are being indexed)",
				"map", k.Map, "snapshot", k.Snapshot, "accounts", len(loaded.Snapshot.Accounts))
		}
		return
	}
	s.offerKept(ctx, k)
}

func (s *RelationService) offerKept(ctx context.Context, k published.Kept) {
	if _, err := s.Offer(ctx, k.Map, k.Snapshot); err != nil {
		s.log.WarnContext(ctx, "relations: a kept flower's reading could not be indexed (the catch-up job tries again)",
			"map", k.Map, "snapshot", k.Snapshot, "err", err)
	}
}

// Offer offers one reading of a map: it becomes the group's members when it
// is the map's newest holdings reading (decided by the store, in the
// transaction that rebuilds the group).
func (s *RelationService) Offer(ctx context.Context, group, snapshot string) (bool, error) {
	loaded, err := s.library.Load(ctx, snapshot)
	if err != nil {
		s.offered.Add(1, "failed")
		return false, err
	}
	snap := loaded.Snapshot
	asOf, err := time.Parse(time.RFC3339Nano, snap.Block.Time)
	if err != nil {
		s.offered.Add(1, "failed")
		return false, errs.New(errs.CannotRead, "the reading's block time is not RFC 3339").WithCause(err)
	}
	rd := ports.RelationReading{Group: group, Snapshot: snapshot, AsOf: asOf.UTC(), Reader: snap.Network, Title: snap.Title,
		Holdings: relations.Holdings(snap.Network)}
	if rd.Holdings {
		// An older reading than the group's changes nothing: skip the work.
		if sha, at, ok, err := s.store.Newest(ctx, group); err != nil {
			return false, err
		} else if ok && (sha == snapshot || at.After(rd.AsOf) || (at.Equal(rd.AsOf) && sha < snapshot)) {
			rd.Holdings = false
		}
	}
	if rd.Holdings {
		rd.Members, rd.Total, err = membersOf(snap)
		if err != nil {
			s.offered.Add(1, "failed")
			return false, errs.New(errs.CannotRead, "the reading's accounts could not be indexed").WithCause(err)
		}
	}
	started := time.Now()
	rebuilt, err := s.store.Offer(ctx, rd)
	switch {
	case err != nil:
		s.offered.Add(1, "failed")
		return false, err
	case rebuilt:
		s.offered.Add(1, "rebuilt")
		s.rebuild.Observe(time.Since(started).Seconds())
		s.log.InfoContext(ctx, "relations: group rebuilt", "group", group, "snapshot", snapshot, "members", len(rd.Members),
			"took_ms", time.Since(started).Milliseconds())
	case rd.Holdings:
		s.offered.Add(1, "older")
	default:
		s.offered.Add(1, "skipped")
	}
	return rebuilt, nil
}

func membersOf(snap *snapshots.Snapshot) ([]relations.Member, string, error) {
	ws := make([]relations.Weighted, len(snap.Accounts))
	for i, a := range snap.Accounts {
		ws[i] = relations.Weighted{Account: a.ID, Weight: a.Weight}
	}
	return relations.Members(ws)
}

// CatchUp offers readings of kept flowers the index never saw (flowers kept
// before the index existed, a snapshot that arrived later, an offer that
// failed), a batch at a time. A reading that fails is put off, longer each
// time, so readings that never index can't fill every batch.
func (s *RelationService) CatchUp(ctx context.Context) (int64, error) {
	refs, err := s.store.Unoffered(ctx, relationsCatchUpBatch)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range refs {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if _, err := s.Offer(ctx, r.Group, r.Snapshot); err != nil {
			retryIn := catchUpRetry(r.Attempts)
			s.log.WarnContext(ctx, "relations: a reading could not be indexed", "map", r.Group, "snapshot", r.Snapshot,
				"attempts", r.Attempts+1, "retry_in", retryIn, "err", err)
			if err := s.store.Failed(ctx, r, retryIn, err.Error()); err != nil {
				return n, err
			}
			continue
		}
		n++
	}
	return n, nil
}

// catchUpRetry is how long a reading that failed attempts times before waits
// for its next try: a minute, doubling, at most a day. Failures are rarely
// passing (a reading the index can't read stays so), but a snapshot the
// library could not load just now may load later.
func catchUpRetry(attempts int) time.Duration {
	if attempts >= 11 { // 2^11 minutes is past a day
		return 24 * time.Hour
	}
	return min(time.Minute<<attempts, 24*time.Hour)
}

// Job is the catch-up job (relations_index).
func (s *RelationService) Job() jobsapp.Job {
	return jobsapp.Job{Name: "relations_index", Every: time.Minute, Deadline: 5 * time.Minute, Run: s.CatchUp}
}

// IndexingKeeps is a flower store whose newly kept flowers are offered to the
// relations index: every way a flower is kept (publish_flower, the map's
// sync, a public site's shipped rows) goes through it.
func IndexingKeeps(store ports.PublishedFlowers, r *RelationService) ports.PublishedFlowers {
	return indexingKeeps{PublishedFlowers: store, relations: r}
}

type indexingKeeps struct {
	ports.PublishedFlowers
	relations *RelationService
}

func (k indexingKeeps) Keep(ctx context.Context, f published.Kept) (published.Kept, bool, error) {
	stored, kept, err := k.PublishedFlowers.Keep(ctx, f)
	if err == nil && kept {
		k.relations.FlowerKept(ctx, stored)
	}
	return stored, kept, err
}

// groupID checks a group parameter: a map id (normalised), not hidden and
// indexed, else not_found.
func (s *RelationService) groupID(ctx context.Context, field, raw string) (ports.RelationGroup, error) {
	id := maps.NormaliseID(raw)
	if _, _, ok := maps.SplitID(id); !ok || len(id) > 200 {
		return ports.RelationGroup{}, errs.Newf(errs.BadInput, "%s must be a map id, <chain>:<address> or <chain>:population", field).
			WithHint("list_flowers names each flower's map")
	}
	g, err := s.store.Group(ctx, id)
	if errs.Is(err, errs.NotFound) || (err == nil && s.hiddenOK[id]) {
		return ports.RelationGroup{}, errs.Newf(errs.NotFound, "%s: no group %s on the map", field, toolkit.CutForMessage(id)).
			WithHint("list_flowers lists the maps with published flowers; look_up finds a DAO, pool or token to read")
	}
	return g, err
}

func unknownAccount(field, account string) error {
	return errs.Newf(errs.NotFound, "%s: the account %s is in no group on the map", field, toolkit.CutForMessage(account)).
		WithHint("look_up finds an account; list_flowers lists the maps whose readings hold accounts")
}

// cursor codes: a page's next_cursor names its last item.
func encodeKey(k ports.RelationKey) string {
	b, _ := json.Marshal([]any{k.Value, k.Num, k.Den, k.Name, k.Name2})
	return encodeCursorBytes(b)
}

func decodeKey(raw string) (ports.RelationKey, error) {
	bad := errs.New(errs.BadInput, "cursor is not a next_cursor this tool gave", "send the next_cursor of the page before, as given")
	if raw == "" {
		return ports.RelationKey{}, nil
	}
	b, ok := decodeCursorBytes(raw)
	if !ok {
		return ports.RelationKey{}, bad
	}
	var parts [5]json.RawMessage
	if err := json.Unmarshal(b, &parts); err != nil {
		return ports.RelationKey{}, bad
	}
	k := ports.RelationKey{Set: true}
	for i, dst := range []any{&k.Value, &k.Num, &k.Den, &k.Name, &k.Name2} {
		if err := json.Unmarshal(parts[i], dst); err != nil {
			return ports.RelationKey{}, bad
		}
	}
	return k, nil
}

func encodeCursorBytes(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func decodeCursorBytes(s string) ([]byte, bool) {
	if len(s) > 600 {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	return b, err == nil
}

func ptr[T any](v T) *T { return &v }
