package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/snapshots"
)

func hexOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// keepUnindexed keeps a published flower of a reading without offering it to
// the relations index (the store itself, not the indexing one), as flowers
// kept before the index existed were.
func keepUnindexed(t *testing.T, p *testPetal, group, snapshot string) {
	t.Helper()
	id := hexOf("flower of " + group + snapshot)
	_, _, err := postgres.NewPublishedFlowerRepository(p.DB.DB).Keep(t.Context(), published.Kept{ID: id, Network: "near:mainnet",
		Maker: "maker.near", Map: group, Snapshot: snapshot, Record: []byte(`{}`), MadeAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Status: published.StatusOK, Came: published.CameSynced})
	require.NoError(t, err)
}

func failures(t *testing.T, p *testPetal) (rows, attempts int) {
	t.Helper()
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(),
		`SELECT count(*), coalesce(sum(attempts), 0) FROM relation_offer_failures`).Scan(&rows, &attempts))
	return rows, attempts
}

// Readings the index can't take are put off, longer each time, so sixty of
// them can't hold back a good one behind the catch-up's batch of fifty; and
// one that becomes readable is indexed on its next try and forgets its
// failures.
func TestRelationsCatchUpPutsOffReadingsThatFail(t *testing.T) {
	t.Parallel()
	// The test runs the catch-up itself: the scheduled relations_index job's
	// lease is held before the service starts, so its own run can't race.
	db := pgtest.New(t)
	held, err := postgres.NewJobLeases(db.DB).Claim(t.Context(), (*relationsapp.RelationService)(nil).Job().Name, "proc_test", time.Hour)
	require.NoError(t, err)
	require.True(t, held)
	p := startPetalOn(t, nil, db, db.DB)
	for i := range 60 { // their snapshots are nowhere: every offer fails
		keepUnindexed(t, p, fmt.Sprintf("near:mainnet:bad%02d.sputnik-dao.near", i), hexOf(fmt.Sprint("missing ", i)))
	}
	good := relReading{"near:mainnet:zz-good.sputnik-dao.near", "near-dao-members", "2026-11-01T00:00:00Z", ones("alice.near", "bob.near")}
	s := good.snapshot()
	goodSHA, canonical, err := snapshots.Name(s)
	require.NoError(t, err)
	_, err = snapshotsapp.StoreCanonical(t.Context(), snapshotRepo(p), s, goodSHA, canonical, snapshotsapp.OriginThisSite)
	require.NoError(t, err)
	keepUnindexed(t, p, good.group, goodSHA)

	n, err := p.Svc.Relations.CatchUp(t.Context())
	require.NoError(t, err)
	assert.Zero(t, n, "the first batch is fifty failing readings")
	rows, attempts := failures(t, p)
	assert.Equal(t, 50, rows)
	assert.Equal(t, 50, attempts)

	n, err = p.Svc.Relations.CatchUp(t.Context())
	require.NoError(t, err)
	assert.EqualValues(t, 1, n, "the failing ones are put off: the good reading gets its turn")
	got := relOK(t, p, "/api/v1/relations/account-groups?account=near:mainnet:alice.near", "")
	assert.Equal(t, good.group, got["groups"].([]any)[0].(map[string]any)["group"])
	rows, attempts = failures(t, p)
	assert.Equal(t, 60, rows)
	assert.Equal(t, 60, attempts)

	n, err = p.Svc.Relations.CatchUp(t.Context())
	require.NoError(t, err)
	assert.Zero(t, n)
	_, attempts = failures(t, p)
	assert.Equal(t, 60, attempts, "nothing is due: nothing was tried")

	// A minute later they are due again, and wait twice as long after.
	_, err = p.DB.Pool.Exec(t.Context(), `UPDATE relation_offer_failures SET next_at = now() - interval '1 second'`)
	require.NoError(t, err)
	_, err = p.Svc.Relations.CatchUp(t.Context())
	require.NoError(t, err)
	var twice int
	var wait time.Duration
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*), max(next_at - now()) FROM relation_offer_failures WHERE attempts = 2`).Scan(&twice, &wait))
	assert.Equal(t, 50, twice)
	assert.InDelta(t, (2 * time.Minute).Seconds(), wait.Seconds(), 10)

	// A reading whose snapshot arrives later is indexed on its next try and
	// its failures are forgotten.
	late := relReading{"near:mainnet:late.sputnik-dao.near", "near-dao-members", "2026-11-01T00:00:00Z", ones("carol.near")}
	ls := late.snapshot()
	lateSHA, lateCanonical, err := snapshots.Name(ls)
	require.NoError(t, err)
	keepUnindexed(t, p, late.group, lateSHA)
	_, err = p.DB.Pool.Exec(t.Context(), `UPDATE relation_offer_failures SET next_at = now() + interval '1 hour'`)
	require.NoError(t, err)
	_, err = p.Svc.Relations.CatchUp(t.Context())
	require.NoError(t, err)
	var lateAttempts int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT attempts FROM relation_offer_failures WHERE group_id = $1`, late.group).Scan(&lateAttempts))
	assert.Equal(t, 1, lateAttempts)
	_, err = snapshotsapp.StoreCanonical(t.Context(), snapshotRepo(p), ls, lateSHA, lateCanonical, snapshotsapp.OriginThisSite)
	require.NoError(t, err)
	_, err = p.DB.Pool.Exec(t.Context(), `UPDATE relation_offer_failures SET next_at = now() - interval '1 second' WHERE group_id = $1`, late.group)
	require.NoError(t, err)
	n, err = p.Svc.Relations.CatchUp(t.Context())
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
	var left int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM relation_offer_failures WHERE group_id = $1`, late.group).Scan(&left))
	assert.Zero(t, left, "an indexed reading forgets its failures")
}

// Keeping a flower of a large reading doesn't wait on its group's rebuild:
// with every rebuild held up (the rebuild lock taken here), the keep returns
// at once, and the group is indexed once rebuilds may run. A small reading is
// indexed in the keeping request itself.
func TestALargeReadingIsIndexedBesideTheKeep(t *testing.T) {
	t.Parallel()
	// Only the keep may index the readings here: the catch-up job's lease is
	// held, so a keep that failed to index can't be rescued by it.
	db := pgtest.New(t)
	held, err := postgres.NewJobLeases(db.DB).Claim(t.Context(), (*relationsapp.RelationService)(nil).Job().Name, "proc_test", time.Hour)
	require.NoError(t, err)
	require.True(t, held)
	p := startPetalOn(t, nil, db, db.DB)
	keeps := relationsapp.IndexingKeeps(postgres.NewPublishedFlowerRepository(p.DB.DB), p.Svc.Relations)
	keep := func(ctx context.Context, r relReading) {
		s := r.snapshot()
		sha, canonical, err := snapshots.Name(s)
		require.NoError(t, err)
		_, err = snapshotsapp.StoreCanonical(t.Context(), snapshotRepo(p), s, sha, canonical, snapshotsapp.OriginThisSite)
		require.NoError(t, err)
		_, _, err = keeps.Keep(ctx, published.Kept{ID: hexOf("kept " + sha), Network: "near:mainnet", Maker: "maker.near",
			Map: r.group, Snapshot: sha, Record: []byte(`{}`), MadeAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
			Status: published.StatusOK, Came: published.CameSynced})
		require.NoError(t, err)
	}
	indexed := func(group string) bool {
		var n int
		require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM relation_groups WHERE group_id = $1`, group).Scan(&n))
		return n == 1
	}
	small := relReading{"near:mainnet:small.sputnik-dao.near", "near-dao-members", "2026-11-01T00:00:00Z", ones("alice.near", "bob.near")}
	keep(t.Context(), small)
	assert.True(t, indexed(small.group), "a small reading is indexed in the keep")

	names := make([]string, 5_001)
	for i := range names {
		names[i] = fmt.Sprintf("holder%05d.near", i)
	}
	large := relReading{"near:mainnet:large.tkn.near", "near-ft-balances", "2026-11-01T00:00:00Z", ones(names...)}
	tx, err := p.DB.Pool.Begin(t.Context())
	require.NoError(t, err)
	_, err = tx.Exec(t.Context(), `SELECT pg_advisory_xact_lock(7140014000)`) // the rebuild lock
	require.NoError(t, err)
	// Were the rebuild in the keep, it would wait on the lock held here and
	// fail at this deadline (the group then never indexed) instead of
	// hanging the test.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	keep(ctx, large)
	assert.False(t, indexed(large.group), "the keep returned while its rebuild waits")
	require.NoError(t, tx.Commit(t.Context()))
	require.Eventually(t, func() bool { return indexed(large.group) }, 30*time.Second, 50*time.Millisecond)
}
