package snapshotsapp_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// A cached snapshot's weights are ranked once, by whichever call needs them
// first, and every later load of it shares them; the figures from them are
// the figures computed afresh, to the digit.
func TestACachedSnapshotsWeightsAreRankedOnce(t *testing.T) {
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	store := memory.NewSnapshotStore()
	sh := snapshotsapp.ShippedSnapshots()[0]
	_, err = snapshotsapp.StoreCanonical(context.Background(), store, sh.Snapshot, sh.SHA256, sh.Canonical, snapshotsapp.OriginThisSite)
	require.NoError(t, err)
	library := snapshotsapp.NewSnapshotLibrary(cfg, store, ports.NoMetrics{})

	first, err := library.Load(t.Context(), sh.SHA256)
	require.NoError(t, err)
	second, err := library.Load(t.Context(), sh.SHA256)
	require.NoError(t, err)
	r1, err := first.Ranked()
	require.NoError(t, err)
	r2, err := second.Ranked()
	require.NoError(t, err)
	require.Same(t, r1, r2, "one ranking for the cached snapshot")

	got, err := r1.Figures(first.Snapshot, "")
	require.NoError(t, err)
	want, err := snapshots.ComputeFigures(first.Snapshot, "")
	require.NoError(t, err)
	require.Equal(t, want, got)
}
