package mapsapp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"time"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// How the map_refresh job reads (docs/map.md, "A map that keeps itself
// fresh").
const (
	refreshJob = "map_refresh"
	// RefreshEvery is the time between runs; each run reads at most
	// refreshPerRun targets, so a day's budget is spread over the day.
	RefreshEvery  = 15 * time.Minute
	refreshPerRun = 10
	// refreshMaps is how many of the most looked-at maps a run considers.
	refreshMaps = 50
	// refreshDeadline bounds a run, refreshReadTimeout each read (the cheap
	// check and the whole reading), so one slow target can't hold the run.
	refreshDeadline    = 5 * time.Minute
	refreshReadTimeout = 60 * time.Second
	refreshCheckMax    = 1 << 20 // bytes of a cheap check's answer read
	// refreshAgain is how long a target read (or found unchanged) waits
	// before it is considered again.
	refreshAgain = 6 * time.Hour
	// A failing target waits refreshRetryFirst, doubled with each failure
	// in a row, at most refreshRetryMost.
	refreshRetryFirst = 30 * time.Minute
	refreshRetryMost  = 7 * 24 * time.Hour
	// refreshReadingsHeld is how many readings the job kept the map holds:
	// the newest, the budget's days' worth many times over.
	refreshReadingsHeld = 20000
	// refreshDaysKept is how many days of spent budget are kept.
	refreshDaysKept = 7
)

// ChainReader reads a target now, without storing it
// (snapshotsapp.SnapshotService.Read).
type ChainReader interface {
	Read(ctx context.Context, network string, params json.RawMessage, progress func(toolkit.Progress)) (snapshots.Snapshot, error)
}

// MapRefresher is the map_refresh job: one replica at a time, it re-reads
// the maps people look at most, oldest reading first, within the day's
// budget (PETAL_MAP_REFRESH_PER_DAY, counted in the database so replicas
// share it), and keeps each new reading as a reading of its map, never a
// drawing. A target whose chain state can be checked cheaply (a DAO's
// members: the hash of its get_policy) and hasn't changed since the job's
// last reading of it is skipped without spending the budget.
type MapRefresher struct {
	store     ports.MapRefresh
	maps      *MapService
	reader    ChainReader
	snapshots ports.SnapshotStore
	chain     ports.NearViews
	clock     ports.Clock
	log       *slog.Logger
	perDay    int

	outcome ports.Counter
}

// NewMapRefresher makes the map_refresh job. Off (Job nil) when
// PETAL_MAP_REFRESH_PER_DAY is 0 or the site is public (it reads no chain);
// either way the map shows the readings kept before.
func NewMapRefresher(cfg config.Config, store ports.MapRefresh, mapService *MapService, reader ChainReader, snaps ports.SnapshotStore,
	chain ports.NearViews, clock ports.Clock, log *slog.Logger, m ports.Metrics) *MapRefresher {
	m = ports.MetricsOrNone(m)
	perDay := cfg.MapRefreshPerDay
	if cfg.Public {
		perDay = 0
	}
	mapService.readRefreshedFrom(store, perDay > 0)
	return &MapRefresher{store: store, maps: mapService, reader: reader, snapshots: snaps, chain: chain, clock: clock, log: log, perDay: perDay,
		outcome: m.Counter("petal_map_refresh_total",
			"Targets the map_refresh job looked at, by outcome: read (a new reading kept), same (read, but the reading it had), skipped (the chain's cheap check says unchanged: no budget spent), failed (the read or check failed: backed off), budget (the day's reads are spent).", "outcome"),
	}
}

// Job is the refresh as a scheduled job, or nil when it is off.
func (r *MapRefresher) Job() *jobsapp.Job {
	if r.perDay <= 0 {
		return nil
	}
	return &jobsapp.Job{Name: refreshJob, Every: RefreshEvery, Deadline: refreshDeadline, Run: r.Run}
}

// Run reads at most refreshPerRun due targets of the most looked-at maps,
// the oldest reading first, and returns how many new readings it kept.
func (r *MapRefresher) Run(ctx context.Context) (int64, error) {
	st, err := r.maps.current(ctx)
	if err != nil {
		return 0, err
	}
	if st.demo {
		return 0, nil // made-up readings: nothing to read again
	}
	now := r.clock.Now()
	if _, err := r.store.ForgetDays(ctx, now.AddDate(0, 0, -refreshDaysKept)); err != nil {
		return 0, err
	}
	viewed, err := r.store.MostViewed(ctx, st.index.MapIDs(), refreshMaps)
	if err != nil || len(viewed) == 0 {
		return 0, err
	}
	type due struct {
		maps.RefreshTarget
		key string
	}
	var candidates []due
	var keys []string
	for _, t := range st.index.RefreshTargets(viewed) {
		if _, ok := snapshotsapp.ReaderByID(t.Network); !ok {
			continue
		}
		key, err := snapshots.TargetKey(t.Network, t.Params)
		if err != nil {
			continue
		}
		candidates = append(candidates, due{t, key})
		keys = append(keys, key)
	}
	states, err := r.store.States(ctx, keys)
	if err != nil {
		return 0, err
	}
	candidates = slices.DeleteFunc(candidates, func(d due) bool {
		if now.Sub(d.AsOf) < refreshAgain {
			return true // read lately, by the job or by someone drawing it
		}
		s, ok := states[d.key]
		return ok && s.NextTry.After(now)
	})
	// The oldest reading first: what is most out of date.
	slices.SortStableFunc(candidates, func(a, b due) int { return a.AsOf.Compare(b.AsOf) })
	var kept int64
	for i, d := range candidates {
		if i == refreshPerRun || ctx.Err() != nil {
			break // the next run goes on
		}
		outcome, err := r.refresh(ctx, d.RefreshTarget, d.key, states[d.key])
		r.outcome.Add(1, outcome)
		switch {
		case outcome == "read":
			kept++
		case outcome == "budget":
			return kept, nil
		case err != nil && ctx.Err() == nil:
			r.log.Warn("map refresh: a target could not be read; backed off", "map", d.Map, "network", d.Network, "err", err)
		}
		if err != nil && ctx.Err() == nil && outcome != "failed" {
			return kept, err // the store itself failed
		}
	}
	return kept, nil
}

// refresh reads one target: the cheap check, the budget, the reading, the
// keeping. Its outcome is the metric's.
func (r *MapRefresher) refresh(ctx context.Context, t maps.RefreshTarget, key string, prev ports.RefreshState) (outcome string, err error) {
	rctx, cancel := context.WithTimeout(ctx, refreshReadTimeout)
	defer cancel()
	fail := func(err error) (string, error) {
		failures := prev.Failures + 1
		wait := refreshRetryFirst << min(failures-1, 16)
		next := r.clock.Now().Add(min(wait, refreshRetryMost))
		if ferr := r.store.Failed(ctx, key, t.Map, err.Error(), next); ferr != nil {
			return "failed", errors.Join(err, ferr)
		}
		return "failed", err
	}
	mark, err := r.chainMark(rctx, t)
	if err != nil {
		return fail(fmt.Errorf("checking the chain: %w", err))
	}
	if mark != "" && mark == prev.Mark {
		return "skipped", r.store.Skipped(ctx, key, t.Map, r.clock.Now().Add(refreshAgain))
	}
	ok, err := r.store.Spend(ctx, r.clock.Now(), r.perDay)
	if err != nil {
		return "", err
	}
	if !ok {
		return "budget", nil
	}
	snap, err := r.reader.Read(rctx, t.Network, t.Params, nil)
	if err != nil {
		return fail(err)
	}
	if got := published.MapOf(snap.Chain, snap.Params); got != t.Map {
		return fail(fmt.Errorf("the reading is of map %s, not %s", got, t.Map))
	}
	// A finished reading is kept even when the run's deadline has come.
	wctx, wcancel := toolkit.Detached(ctx)
	defer wcancel()
	sha, _, err := snapshotsapp.StoreSnapshot(wctx, r.snapshots, snap, snapshotsapp.OriginThisSite)
	if err != nil {
		return fail(err)
	}
	now := r.clock.Now()
	state := ports.RefreshState{TargetKey: key, Mark: mark, NextTry: now.Add(refreshAgain)}
	if err := r.store.Kept(wctx, ports.RefreshedReading{Map: t.Map, Snapshot: sha, KeptAt: now}, state); err != nil {
		return "", err
	}
	r.maps.refreshedKept()
	if r.sameHoldings(ctx, t.Snapshot, &snap) {
		return "same", nil
	}
	return "read", nil
}

// sameHoldings reports whether a new reading holds what the map's last one
// did: the same accounts, weights and groups. Their hashes always differ (a
// reading names its block), so the chain unchanged is told by content.
func (r *MapRefresher) sameHoldings(ctx context.Context, previous string, now *snapshots.Snapshot) bool {
	before, err := r.maps.library.Load(ctx, previous)
	if err != nil {
		return false
	}
	return reflect.DeepEqual(before.Snapshot.Accounts, now.Accounts) && reflect.DeepEqual(before.Snapshot.Groups, now.Groups)
}

// chainMark is a cheap view of the chain that changes whenever the target's
// reading would: "" where there is none. Only a DAO's members have one: the
// SHA-256 of its get_policy answer (the roles and their members are the
// policy). A DAO's proposals have none (votes on older proposals change
// without a new last proposal id), nor a token's holders (transfers move
// balances without changing the total supply), nor a pool's delegators
// (one unstaking what another stakes leaves the total as it was).
func (r *MapRefresher) chainMark(ctx context.Context, t maps.RefreshTarget) (string, error) {
	if t.Network != "near-dao-members" || r.chain == nil {
		return "", nil
	}
	chain, dao, ok := maps.SplitID(t.Map)
	if !ok || dao == "" {
		return "", nil
	}
	v, err := r.chain.View(ctx, chain, dao, "get_policy", []byte("{}"), refreshCheckMax)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(v.Result)
	return "get_policy:" + hex.EncodeToString(h[:]), nil
}
