package mapsapp

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/corrections"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/specs"
	"github.com/petal-near/petal/ports"
)

// MapSync brings in flowers published to SocialDB from anywhere, not only
// through this site (docs/map.md, "The sync"): it pages through SocialDB's
// accounts, lists each page's petal/flower/* keys, reads the records it
// doesn't hold yet, and keeps every valid one: drawn when its snapshot is
// stored here, listed as snapshot_missing when not. A record that isn't a
// valid flower/v1, is filed under another id than its own, names another
// maker than the account it is under, or doesn't fit its snapshot is never
// kept. Every read is a view call at finality final.
type MapSync struct {
	social  ports.SocialDB
	flowers ports.PublishedFlowers
	// corrections are people's corrections of the flowers, published beside
	// them (petal/correction/*): kept once their flower is.
	corrections ports.FlowerCorrections
	positions   ports.JobPositions
	library     *snapshotsapp.SnapshotLibrary
	log         *slog.Logger
	every       time.Duration
	networks    []string

	records           ports.Counter
	correctionRecords ports.Counter
}

// What one sync reads at a time.
const (
	syncAccountsPage = 200     // accounts per page of get_accounts_paged, and per keys call
	syncGetBatch     = 50      // records per get call
	syncKeysBytes    = 4 << 20 // the most of a keys answer read
	syncGetBytes     = syncGetBatch*published.MaxRecordBytes + 64<<10
	syncKeepsAtOnce  = 4
	// syncCorrectionBytes bounds a get of a batch of corrections.
	syncCorrectionBytes = syncGetBatch*corrections.MaxRecordBytes + 64<<10
	// syncDeadline bounds a run. Each network gets an equal share of
	// syncBudget, and where its walk stopped is kept (job_positions), so the
	// next run, on any replica, goes on from there; what was kept stays kept.
	syncDeadline = 5 * time.Minute
	syncBudget   = 4 * time.Minute
	syncJob      = "map_sync"
)

// SyncNetworks are the NEAR networks whose SocialDB the sync reads.
var SyncNetworks = []string{"near:mainnet", "near:testnet"}

// NewMapSync makes the sync over SocialDB and the published flowers' store.
// Every PETAL_MAP_SYNC_MIN minutes; 0 turns it off (Job is then nil).
func NewMapSync(cfg config.Config, social ports.SocialDB, flowers ports.PublishedFlowers, corrections ports.FlowerCorrections, positions ports.JobPositions, library *snapshotsapp.SnapshotLibrary, log *slog.Logger, m ports.Metrics) *MapSync {
	m = ports.MetricsOrNone(m)
	return &MapSync{social: social, flowers: flowers, corrections: corrections, positions: positions, library: library, log: log,
		every: time.Duration(cfg.MapSyncMin) * time.Minute, networks: SyncNetworks,
		records: m.Counter("petal_map_sync_records_total",
			"SocialDB flower records the map sync looked at, by outcome: kept (drawn), missing (kept as snapshot_missing), known (held already), arrived (flowers kept as snapshot_missing whose snapshot is stored here now), refused (not a valid flower, or not its own key's).", "outcome"),
		correctionRecords: m.Counter("petal_map_sync_corrections_total",
			"SocialDB correction records the map sync looked at, by outcome: kept, known (held already), refused (not a valid correction/v1 of its own key, or of a flower not kept here on that network: looked at again on the next walk).", "outcome"),
	}
}

// Job is the sync as a scheduled job (one replica at a time), or nil when
// PETAL_MAP_SYNC_MIN is 0. A job never run before is due at once, so a new
// cluster syncs at start.
func (s *MapSync) Job() *jobsapp.Job {
	if s.every <= 0 {
		return nil
	}
	return &jobsapp.Job{Name: syncJob, Every: s.every, Deadline: syncDeadline, Run: s.Run}
}

// Run goes on with each network's walk of SocialDB's accounts for its share
// of the run's budget; it returns how many records it kept.
func (s *MapSync) Run(ctx context.Context) (int64, error) {
	var kept int64
	share := syncBudget / time.Duration(len(s.networks))
	for _, network := range s.networks {
		nctx, cancel := context.WithTimeout(ctx, share)
		n, err := s.syncNetwork(nctx, network)
		spent := nctx.Err() != nil
		cancel()
		kept += n
		switch {
		case err != nil && ctx.Err() == nil && spent:
			// This network's share is spent; its walk goes on next run.
			s.log.Info("map sync: a network's share of the run is spent; its walk goes on at the next run", "network", network)
		case err != nil:
			return kept, err
		}
	}
	return kept, nil
}

// syncNetwork walks a network's accounts a page at a time from where the
// last run stopped, keeping the position after each page; a walk that
// reaches the last page starts again at the next run.
func (s *MapSync) syncNetwork(ctx context.Context, network string) (int64, error) {
	from, err := s.positions.Position(ctx, syncJob, network)
	if err != nil {
		return 0, err
	}
	var kept int64
	for {
		accounts, err := s.social.Accounts(ctx, network, int(from), syncAccountsPage)
		if err != nil {
			return kept, err
		}
		if len(accounts) > 0 {
			n, err := s.syncAccounts(ctx, network, accounts)
			kept += n
			if err != nil {
				return kept, err
			}
		}
		if len(accounts) < syncAccountsPage {
			return kept, s.positions.SetPosition(ctx, syncJob, network, 0)
		}
		from += int64(len(accounts))
		if err := s.positions.SetPosition(ctx, syncJob, network, from); err != nil {
			return kept, err
		}
	}
}

// syncAccounts reads one page of accounts' flower keys, then the records
// this site doesn't hold yet, a batch at a time.
func (s *MapSync) syncAccounts(ctx context.Context, network string, accounts []string) (int64, error) {
	patterns := make([]string, 0, len(accounts))
	for _, a := range accounts {
		if published.ValidNearAccount(a) {
			patterns = append(patterns, a+"/petal/flower/*", a+"/"+corrections.KeyPrefix+"*")
		}
	}
	if len(patterns) == 0 {
		return 0, nil
	}
	keys, err := s.social.Keys(ctx, network, patterns, syncKeysBytes)
	if err != nil {
		return 0, err
	}
	var unknown []string
	arrived := map[string]bool{}
	// Flowers first, so a correction of a flower of the same page finds it.
	var unknownCorrections []string
	for _, k := range keys {
		if _, id, ok := corrections.ParseKey(k.Path); ok {
			if _, err := s.corrections.Get(ctx, id); err == nil {
				s.correctionRecords.Add(1, "known")
			} else if errs.Is(err, errs.NotFound) {
				unknownCorrections = append(unknownCorrections, k.Path)
			} else {
				return 0, err
			}
			continue
		}
		_, id, ok := flowerKey(k.Path)
		if !ok {
			s.records.Add(1, "refused")
			continue
		}
		if k, err := s.flowers.Get(ctx, id); err == nil {
			s.records.Add(1, "known")
			if k.Status == published.StatusSnapshotMissing && !arrived[k.Snapshot] {
				if err := s.snapshotArrived(ctx, k.Snapshot); err != nil {
					return 0, err
				}
				arrived[k.Snapshot] = true
			}
			continue
		} else if !errs.Is(err, errs.NotFound) {
			return 0, err
		}
		unknown = append(unknown, k.Path)
	}
	var kept int64
	for len(unknown) > 0 {
		batch := unknown[:min(syncGetBatch, len(unknown))]
		unknown = unknown[len(batch):]
		values, err := s.social.Get(ctx, network, batch, syncGetBytes)
		if err != nil {
			return kept, err
		}
		// Each keep is its own short transaction; a few at once overlap
		// their commits.
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(syncKeepsAtOnce)
		var newly atomic.Int64
		for _, v := range values {
			g.Go(func() error {
				ok, err := s.take(gctx, network, v)
				if ok {
					newly.Add(1)
				}
				return err
			})
		}
		err = g.Wait()
		kept += newly.Load()
		if err != nil {
			return kept, err
		}
	}
	for len(unknownCorrections) > 0 {
		batch := unknownCorrections[:min(syncGetBatch, len(unknownCorrections))]
		unknownCorrections = unknownCorrections[len(batch):]
		values, err := s.social.Get(ctx, network, batch, syncCorrectionBytes)
		if err != nil {
			return kept, err
		}
		for _, v := range values {
			if err := s.takeCorrection(ctx, network, v); err != nil {
				return kept, err
			}
		}
	}
	return kept, nil
}

// takeCorrection checks one correction read from SocialDB and keeps it if
// it is a valid correction/v1 of its own key, made by the account it is
// under, of a flower kept here on that network. One of a flower not kept
// (yet) is refused now, and looked at again on the next walk.
func (s *MapSync) takeCorrection(ctx context.Context, network string, v ports.SocialValue) error {
	refuse := func(why string, args ...any) error {
		s.correctionRecords.Add(1, "refused")
		s.log.Info("map sync: a SocialDB correction is not kept", append([]any{"network", network, "path", v.Path, "why", why}, args...)...)
		return nil
	}
	account, id, ok := corrections.ParseKey(v.Path)
	if !ok {
		return refuse("not a correction's key")
	}
	c, refused := corrections.Read(account, id, []byte(v.Value))
	if refused != nil {
		return refuse(refused.Message)
	}
	f, err := s.flowers.Get(ctx, c.Flower)
	switch {
	case errs.Is(err, errs.NotFound):
		return refuse("its flower isn't kept here", "flower", c.Flower)
	case err != nil:
		return err
	}
	keeping, refused := corrections.Keeping(c, id, network, f.Network, []byte(v.Value), corrections.CameSynced)
	if refused != nil {
		return refuse(refused.Message)
	}
	_, newly, err := s.corrections.Keep(ctx, keeping)
	switch {
	case errs.Is(err, errs.NotFound):
		return refuse("its flower isn't kept here", "flower", c.Flower)
	case err != nil:
		return err
	case newly:
		s.correctionRecords.Add(1, "kept")
	default:
		s.correctionRecords.Add(1, "known")
	}
	return nil
}

// snapshotArrived marks the flowers kept as snapshot_missing of a snapshot
// that is stored here now as ok. Whether each fits it is the map's to check
// when it draws them.
func (s *MapSync) snapshotArrived(ctx context.Context, snapshot string) error {
	_, err := s.library.Load(ctx, snapshot)
	switch {
	case errs.Is(err, errs.NotFound):
		return nil
	case err != nil:
		return err
	}
	n, err := s.flowers.SetStatus(ctx, snapshot, published.StatusOK)
	if n > 0 {
		s.records.Add(float64(n), "arrived")
	}
	return err
}

// flowerKey reads <account>/petal/flower/<id>.
func flowerKey(path string) (account, id string, ok bool) {
	account, rest, _ := strings.Cut(path, "/")
	id, found := strings.CutPrefix(rest, "petal/flower/")
	return account, id, found && published.ValidNearAccount(account) && published.ValidID(id)
}

// take checks one record read from SocialDB and keeps it if it is a valid
// flower of its own key. ok is whether it was newly kept.
func (s *MapSync) take(ctx context.Context, network string, v ports.SocialValue) (ok bool, err error) {
	account, id, valid := flowerKey(v.Path)
	refuse := func(why string, args ...any) (bool, error) {
		s.records.Add(1, "refused")
		s.log.Info("map sync: a SocialDB record is not kept", append([]any{"network", network, "path", v.Path, "why", why}, args...)...)
		return false, nil
	}
	if !valid {
		return refuse("not a flower's key")
	}
	f, gotID, _, problems := published.Parse([]byte(v.Value))
	switch {
	case len(problems) > 0:
		return refuse("not a valid flower/v1", "problem", problems[0].Path+": "+problems[0].Message)
	case gotID != id:
		return refuse("filed under another id than its own", "its_id", gotID)
	case f.MadeBy != account:
		return refuse("made_by is not the account it is under", "made_by", f.MadeBy)
	}
	status := published.StatusOK
	loaded, err := s.library.Load(ctx, f.Snapshot)
	switch {
	case errs.Is(err, errs.NotFound):
		status = published.StatusSnapshotMissing
	case err != nil:
		return false, err
	default:
		if problems := specs.CheckAgainst(f.Spec, f.Snapshot, loaded.Snapshot); len(problems) > 0 {
			return refuse("its spec doesn't fit its snapshot", "problem", problems[0].Path+": "+problems[0].Message)
		}
		if got := published.MapOf(loaded.Snapshot.Chain, loaded.Snapshot.Params); got != f.Map {
			return refuse("its map is not its snapshot's", "map", f.Map, "snapshot_map", got)
		}
	}
	madeAt, _ := time.Parse(time.RFC3339, f.MadeAt)
	_, newly, err := s.flowers.Keep(ctx, published.Kept{ID: id, Network: network, Maker: account, Map: f.Map, Snapshot: f.Snapshot,
		Record: []byte(v.Value), Name: f.Name, MadeAt: madeAt.UTC(), Status: status, Came: published.CameSynced})
	if err != nil {
		return false, err
	}
	switch {
	case !newly:
		s.records.Add(1, "known")
	case status == published.StatusOK:
		s.records.Add(1, "kept")
	default:
		s.records.Add(1, "missing")
	}
	return newly, nil
}
