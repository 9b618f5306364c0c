package flowersapp_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// flowers is the flower service over in-memory stores holding one shipped
// snapshot, with no views and no data budget; it answers that snapshot's name.
func flowers(t *testing.T) (*flowersapp.FlowerService, string) {
	t.Helper()
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	store := memory.NewSnapshotStore()
	sh := snapshotsapp.ShippedSnapshots()[0]
	_, err = snapshotsapp.StoreCanonical(context.Background(), store, sh.Snapshot, sh.SHA256, sh.Canonical, snapshotsapp.OriginThisSite)
	require.NoError(t, err)
	library := snapshotsapp.NewSnapshotLibrary(cfg, store, ports.NoMetrics{})
	return flowersapp.NewFlowerService(library, memory.NewSpecStore(), nil, nil), sh.SHA256
}

// A proposed spec validates, under the name it was proposed with, and is
// kept: its draft is served, and the draft's bytes hash to that name.
func TestAProposedSpecValidatesAndIsKeptUnderItsName(t *testing.T) {
	s, sha := flowers(t)
	p, err := s.Propose(t.Context(), "", sha, "")
	require.NoError(t, err)
	require.Regexp(t, `^[0-9a-f]{64}$`, p.SpecSHA256)

	raw, err := json.Marshal(p.Spec)
	require.NoError(t, err)
	v, err := s.Validate(t.Context(), "", raw)
	require.NoError(t, err)
	require.True(t, v.Valid, "problems: %v", v.Problems)
	assert.Equal(t, p.SpecSHA256, v.SpecSHA256)

	draft, err := s.Draft(t.Context(), v.SpecSHA256)
	require.NoError(t, err)
	sum := sha256.Sum256(draft)
	assert.Equal(t, v.SpecSHA256, hex.EncodeToString(sum[:]))
}

// A spec naming a snapshot this site doesn't hold is not valid, says so at
// /snapshot, and gets no name.
func TestASpecOfAnUnknownSnapshotIsRefusedWithItsProblem(t *testing.T) {
	s, sha := flowers(t)
	p, err := s.Propose(t.Context(), "", sha, "")
	require.NoError(t, err)
	p.Spec.Snapshot = "0000000000000000000000000000000000000000000000000000000000000000"
	raw, err := json.Marshal(p.Spec)
	require.NoError(t, err)
	v, err := s.Validate(t.Context(), "", raw)
	require.NoError(t, err)
	require.False(t, v.Valid)
	require.Len(t, v.Problems, 1)
	assert.Equal(t, "/snapshot", v.Problems[0].Path)
	assert.Empty(t, v.SpecSHA256, "an invalid spec has no name")
}

// compute_figures takes a stored snapshot or one sent inline, exactly one.
func TestFiguresNeedExactlyOneSnapshot(t *testing.T) {
	s, sha := flowers(t)
	sh := snapshotsapp.ShippedSnapshots()[0]

	_, err := s.ComputeFigures(t.Context(), sha, sh.Canonical, "")
	require.True(t, errs.Is(err, errs.BadInput), "both: %v", err)
	_, err = s.ComputeFigures(t.Context(), "", nil, "")
	require.True(t, errs.Is(err, errs.BadInput), "neither: %v", err)

	stored, err := s.ComputeFigures(t.Context(), sha, nil, "")
	require.NoError(t, err)
	assert.Equal(t, sha, stored.SHA256)
	assert.Equal(t, snapshotsapp.OriginThisSite, stored.Origin)

	inline, err := s.ComputeFigures(t.Context(), "", sh.Canonical, "")
	require.NoError(t, err)
	assert.Equal(t, sha, inline.SHA256, "an inline snapshot is named by its canonical hash")
	assert.Empty(t, inline.Origin, "one sent inline has no origin")
	assert.Equal(t, stored.FigureSet, inline.FigureSet)
}

// A draft's name that is no SHA-256 is simply not found, and never read.
func TestADraftOfNoNameIsNotFound(t *testing.T) {
	s, _ := flowers(t)
	_, err := s.Draft(t.Context(), "../etc/passwd")
	require.True(t, errs.Is(err, errs.NotFound), "%v", err)
}
