package mapsapp

import (
	"context"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/domain/published"
)

// EarlierReading is the reading on the map before a snapshot just read: the
// newest of the same map by the same reader at an earlier block (a person's
// drawing's or the map_refresh job's). ok is false when the snapshot's map
// has none, or the snapshot isn't here.
func (s *MapService) EarlierReading(ctx context.Context, sha string) (mapID, earlier string, asOf time.Time, ok bool, err error) {
	loaded, err := s.library.Load(ctx, sha)
	switch {
	case errs.Is(err, errs.NotFound):
		return "", "", time.Time{}, false, nil
	case err != nil:
		return "", "", time.Time{}, false, err
	}
	snap := loaded.Snapshot
	at, perr := time.Parse(time.RFC3339Nano, snap.Block.Time)
	if perr != nil {
		return "", "", time.Time{}, false, nil
	}
	st, err := s.current(ctx)
	if err != nil || st.demo {
		return "", "", time.Time{}, false, err
	}
	mapID = maps.NormaliseID(published.MapOf(snap.Chain, snap.Params))
	r, found := st.index.Before(mapID, snap.Network, sha, at)
	if !found {
		return "", "", time.Time{}, false, nil
	}
	return mapID, r.Snapshot, r.AsOf, true, nil
}
