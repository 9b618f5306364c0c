package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/siteapp"
	"github.com/petal-near/petal/ports"
)

// keepLogo keeps a map's mark showing a logo of bytes b, its bytes in blobs.
func keepLogo(t *testing.T, marks *postgres.MapMarkRepository, mapID string, b []byte) string {
	t.Helper()
	sha := hexSHA(b)
	require.NoError(t, marks.Keep(t.Context(), ports.MarkWrite{MapID: mapID, Mark: json.RawMessage(`{"logo":{}}`), Again: time.Hour,
		Logo: &ports.StoredPicture{SHA256: sha, MediaType: "image/png", Bytes: b, Width: 1, Height: 1}}))
	return sha
}

// dropLogo has the mark show no logo, and retention delete the pictures
// nobody shows, as it does after UnshownPicturesKept.
func dropLogo(t *testing.T, db *pgtest.DB, marks *postgres.MapMarkRepository, mapID string) {
	t.Helper()
	require.NoError(t, marks.Keep(t.Context(), ports.MarkWrite{MapID: mapID, Mark: json.RawMessage(`{"logo":null}`), Again: time.Hour}))
	_, err := postgres.NewRetention(db.DB).Delete(t.Context(), ports.UnshownPictures, 0, 100)
	require.NoError(t, err)
}

// orphanLines is blob_orphans as "kind key" lines.
func orphanLines(t *testing.T, db *pgtest.DB) []string {
	t.Helper()
	return ids(t, db, `SELECT kind || ' ' || key FROM blob_orphans ORDER BY key`)
}

func hasBlob(t *testing.T, blobs ports.Blobs, key string) bool {
	t.Helper()
	ok, err := blobs.Has(t.Context(), key)
	require.NoError(t, err)
	return ok
}

// A row deleted leaves its key as an orphan; the sweep deletes the blob once
// the grace has passed, never before, and never one a row names again.
func TestBlobsNoRowNamesAreSweptAfterTheGrace(t *testing.T) {
	db := pgtest.New(t)
	blobs := memory.NewBlobs()
	marks := postgres.NewMapMarkRepository(db.DB).KeepingBodiesIn(blobs)
	snaps := postgres.NewSnapshotRepository(db.DB).KeepingBodiesIn(blobs)
	sweeper := postgres.NewBlobSweeper(db.DB, blobs)

	dropped := keepLogo(t, marks, "near:mainnet:a.near", []byte("a logo dropped"))
	back := keepLogo(t, marks, "near:mainnet:b.near", []byte("a logo dropped, then shown again"))
	shown := keepLogo(t, marks, "near:mainnet:c.near", []byte("a logo still shown"))
	_, err := snaps.Put(t.Context(), bodySample(7))
	require.NoError(t, err)
	snapKey := hexSHA(bodySample(7).Gzipped)
	require.Empty(t, orphanLines(t, db), "nothing is orphaned while rows name their blobs")

	dropLogo(t, db, marks, "near:mainnet:a.near")
	dropLogo(t, db, marks, "near:mainnet:b.near")
	_, err = db.Pool.Exec(t.Context(), `DELETE FROM snapshots WHERE sha256 = $1`, bodySample(7).SHA256)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"pictures " + back, "pictures " + dropped, "snapshots " + snapKey}, orphanLines(t, db))

	got, err := sweeper.Sweep(t.Context(), time.Hour, 100)
	require.NoError(t, err)
	assert.True(t, got.Done)
	assert.Empty(t, got.Deleted, "nothing is deleted inside the grace")
	assert.True(t, hasBlob(t, blobs, dropped))

	keepLogo(t, marks, "near:mainnet:b.near", []byte("a logo dropped, then shown again"))
	got, err = sweeper.Sweep(t.Context(), 0, 100)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{ports.PictureBodies: 1, ports.SnapshotBodies: 1}, got.Deleted)
	assert.True(t, got.Done)
	assert.False(t, hasBlob(t, blobs, dropped), "the dropped logo's blob is deleted")
	assert.False(t, hasBlob(t, blobs, snapKey), "the deleted snapshot's blob is deleted")
	assert.True(t, hasBlob(t, blobs, back), "a logo shown again keeps its blob")
	assert.True(t, hasBlob(t, blobs, shown))
	assert.Empty(t, orphanLines(t, db))

	// A batch smaller than the orphans says it is not done.
	keepLogo(t, marks, "near:mainnet:a.near", []byte("one"))
	keepLogo(t, marks, "near:mainnet:d.near", []byte("two"))
	dropLogo(t, db, marks, "near:mainnet:a.near")
	dropLogo(t, db, marks, "near:mainnet:d.near")
	got, err = sweeper.Sweep(t.Context(), 0, 1)
	require.NoError(t, err)
	assert.False(t, got.Done)
	assert.Len(t, orphanLines(t, db), 1)
}

// slowDeletes holds each Delete until released, as a slow store would.
type slowDeletes struct {
	ports.Blobs
	started chan string
	release chan struct{}
}

func (s *slowDeletes) Delete(ctx context.Context, key string) error {
	s.started <- key
	<-s.release
	return s.Blobs.Delete(ctx, key)
}

// A writer that names a key while the sweep is deleting its blob waits for
// the sweep, then finds the blob gone and writes it again: no row is left
// naming a blob the store lacks.
func TestAWriterNamingAKeyTheSweepIsDeletingWritesItAgain(t *testing.T) {
	db := pgtest.New(t)
	blobs := memory.NewBlobs()
	marks := postgres.NewMapMarkRepository(db.DB).KeepingBodiesIn(blobs)
	logo := []byte("a logo sent again while it is swept")
	sha := keepLogo(t, marks, "near:mainnet:a.near", logo)
	dropLogo(t, db, marks, "near:mainnet:a.near")

	slow := &slowDeletes{Blobs: blobs, started: make(chan string, 1), release: make(chan struct{})}
	swept := make(chan error, 1)
	go func() {
		_, err := postgres.NewBlobSweeper(db.DB, slow).Sweep(context.Background(), 0, 100)
		swept <- err
	}()
	require.Equal(t, sha, <-slow.started, "the sweep is deleting the logo's blob")

	kept := make(chan error, 1)
	go func() {
		kept <- marks.Keep(context.Background(), ports.MarkWrite{MapID: "near:mainnet:a.near", Mark: json.RawMessage(`{"logo":{}}`), Again: time.Hour,
			Logo: &ports.StoredPicture{SHA256: sha, MediaType: "image/png", Bytes: logo, Width: 1, Height: 1}})
	}()
	// The writer found the blob there (the delete has not happened) and now
	// waits on the orphan's line the sweep holds.
	require.Eventually(t, func() bool {
		var waiting int
		require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks WHERE NOT granted`).Scan(&waiting))
		return waiting > 0
	}, 10*time.Second, 10*time.Millisecond)
	close(slow.release)
	require.NoError(t, <-swept)
	require.NoError(t, <-kept)

	assert.True(t, hasBlob(t, blobs, sha), "the writer wrote the swept blob again")
	p, err := postgres.NewProfileRepository(db.DB).KeepingBodiesIn(blobs).Picture(t.Context(), sha)
	require.NoError(t, err)
	assert.Equal(t, logo, p.Bytes)
	assert.Empty(t, orphanLines(t, db))
}

// Writers dropping and showing the same pictures again and again while
// sweeps run with no grace: every row still names a blob the store has.
func TestSweepsAndWritersAtOnceLeaveNoRowWithoutItsBlob(t *testing.T) {
	db := pgtest.New(t)
	blobs := memory.NewBlobs()
	marks := postgres.NewMapMarkRepository(db.DB).KeepingBodiesIn(blobs)
	sweeper := postgres.NewBlobSweeper(db.DB, blobs)
	ret := postgres.NewRetention(db.DB)
	ctx := t.Context()
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			mapID := fmt.Sprintf("near:mainnet:m%d.near", w)
			for i := range 15 {
				logo := fmt.Appendf(nil, "logo %d", i%3) // the writers share three pictures
				err := marks.Keep(ctx, ports.MarkWrite{MapID: mapID, Mark: json.RawMessage(`{"logo":{}}`), Again: time.Hour,
					Logo: &ports.StoredPicture{SHA256: hexSHA(logo), MediaType: "image/png", Bytes: logo, Width: 1, Height: 1}})
				if !assert.NoError(t, err) {
					return
				}
				if !assert.NoError(t, marks.Keep(ctx, ports.MarkWrite{MapID: mapID, Mark: json.RawMessage(`{"logo":null}`), Again: time.Hour})) {
					return
				}
				_, err = ret.Delete(ctx, ports.UnshownPictures, 0, 100)
				assert.NoError(t, err)
			}
		})
	}
	wg.Go(func() {
		for range 40 {
			_, err := sweeper.Sweep(ctx, 0, 100)
			assert.NoError(t, err)
		}
	})
	wg.Wait()
	// Every picture a row holds reads back whole.
	names := ids(t, db, `SELECT sha256 FROM media`)
	profiles := postgres.NewProfileRepository(db.DB).KeepingBodiesIn(blobs)
	for _, sha := range names {
		_, err := profiles.Picture(ctx, sha)
		assert.NoError(t, err, "picture %s", sha)
	}
	// And once the last sweep has run, nothing unnamed is left behind.
	_, err := sweeper.Sweep(ctx, 0, 100)
	require.NoError(t, err)
	assert.Equal(t, len(names), blobs.Len(), "the store holds exactly the blobs rows name")
}

// refusingDeletes is a store that refuses every delete.
type refusingDeletes struct{ ports.Blobs }

func (refusingDeletes) Delete(context.Context, string) error { return errors.New("the store is down") }

// The job sweeps on one replica, counts what it deleted, and a store that
// refuses leaves the orphan to be tried again after the grace.
func TestTheDeleteBlobsJobSweepsAndCountsAndWaitsOutAFailure(t *testing.T) {
	db := pgtest.New(t)
	blobs := memory.NewBlobs()
	marks := postgres.NewMapMarkRepository(db.DB).KeepingBodiesIn(blobs)
	sha := keepLogo(t, marks, "near:mainnet:a.near", []byte("a logo for the job"))
	dropLogo(t, db, marks, "near:mainnet:a.near")
	ago := func() {
		_, err := db.Pool.Exec(t.Context(), `UPDATE blob_orphans SET orphaned_at = now() - interval '2 hours'`)
		require.NoError(t, err)
	}
	ago()

	spy := &metricsSpy{}
	refused := jobsapp.NewScheduler(postgres.NewJobLeases(db.DB), processID(t), quietLog())
	refused.Add(siteapp.DeleteBlobsJob(postgres.NewBlobSweeper(db.DB, refusingDeletes{blobs}), spy))
	var report jobsapp.JobReport
	refused.Observe(func(r jobsapp.JobReport) { report = r })
	ran, err := refused.RunDue(t.Context(), "delete_blobs")
	require.NoError(t, err)
	require.True(t, ran)
	assert.Equal(t, jobsapp.JobFailed, report.Outcome)
	require.ErrorContains(t, report.Err, "the store is down")
	assert.Equal(t, 1.0, spy.get("petal_blobs_delete_failures_total"))
	assert.True(t, hasBlob(t, blobs, sha))
	got, err := postgres.NewBlobSweeper(db.DB, blobs).Sweep(t.Context(), time.Hour, 100)
	require.NoError(t, err)
	assert.Empty(t, got.Deleted, "a refused delete waits out the grace again")

	ago()
	// The lease says the job ran; its next run, called straight:
	n, err := siteapp.DeleteBlobsJob(postgres.NewBlobSweeper(db.DB, blobs), spy).Run(t.Context())
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
	assert.Equal(t, 1.0, spy.get("petal_blobs_deleted_total", ports.PictureBodies))
	assert.False(t, hasBlob(t, blobs, sha))
	assert.Empty(t, orphanLines(t, db))
}
