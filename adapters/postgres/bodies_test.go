package postgres_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/siteapp"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestSnapshotRepositoryContractWithBodiesInBlobs(t *testing.T) {
	porttest.SnapshotStoreContract(t, func(t *testing.T) ports.SnapshotStore {
		return postgres.NewSnapshotRepository(pgtest.New(t).DB).KeepingBodiesIn(memory.NewBlobs())
	})
}

func bodySample(n int) ports.StoredSnapshot {
	return ports.StoredSnapshot{
		SHA256: fmt.Sprintf("%064x", n), Network: "near-dao-members", TargetKey: fmt.Sprintf("t%d", n),
		Block:  snapshots.Block{Height: uint64(n), Hash: "h", Time: "2026-11-01T12:00:00Z"},
		Origin: "this_site", Count: n, Title: "a reading", About: "a test reading",
		Gzipped: fmt.Appendf(nil, "gzip bytes of reading %d", n),
	}
}

func hexSHA(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// keepOldPicture writes a media row as petal did before issue 31: its bytes
// in the row.
func keepOldPicture(t *testing.T, db *pgtest.DB, n int) (string, []byte) {
	t.Helper()
	b := fmt.Appendf(nil, "picture bytes %d", n)
	sha := hexSHA(b)
	_, err := db.Pool.Exec(t.Context(), `INSERT INTO media (sha256, media_type, bytes, width, height, created_at)
VALUES ($1, 'image/png', $2, 1, 1, now())`, sha, b)
	require.NoError(t, err)
	return sha, b
}

func inRows(t *testing.T, db *pgtest.DB) (snaps, pictures int) {
	t.Helper()
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM snapshots WHERE body_gzip IS NOT NULL),
	(SELECT count(*) FROM media WHERE bytes IS NOT NULL)`).Scan(&snaps, &pictures))
	return snaps, pictures
}

// New bodies go to the store and only their key to the row; rows written
// before (bodies in the row) read as before.
func TestBodiesAreWrittenToTheBlobStoreAndOldRowsStillRead(t *testing.T) {
	db := pgtest.New(t)
	blobs := memory.NewBlobs()
	old := postgres.NewSnapshotRepository(db.DB)
	_, err := old.Put(t.Context(), bodySample(1))
	require.NoError(t, err)
	repo := postgres.NewSnapshotRepository(db.DB).KeepingBodiesIn(blobs)
	_, err = repo.Put(t.Context(), bodySample(2))
	require.NoError(t, err)

	var key *string
	var inRow []byte
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT body_gzip, body_blob FROM snapshots WHERE sha256 = $1`, bodySample(2).SHA256).Scan(&inRow, &key))
	assert.Nil(t, inRow, "the new body is not in the row")
	require.NotNil(t, key)
	assert.Equal(t, hexSHA(bodySample(2).Gzipped), *key, "the key is the SHA-256 of the gzip as stored")
	for _, n := range []int{1, 2} {
		got, err := repo.Get(t.Context(), bodySample(n).SHA256)
		require.NoError(t, err)
		assert.Equal(t, bodySample(n).Gzipped, got.Gzipped)
	}
	// Without the store, a moved body is an error that says where it is.
	_, err = old.Get(t.Context(), bodySample(2).SHA256)
	require.ErrorContains(t, err, "PETAL_BLOB_URL is off")

	// Pictures and logos the same way.
	profiles := postgres.NewProfileRepository(db.DB).KeepingBodiesIn(blobs)
	logo := []byte("a logo's bytes")
	marks := postgres.NewMapMarkRepository(db.DB).KeepingBodiesIn(blobs)
	require.NoError(t, marks.Keep(t.Context(), ports.MarkWrite{MapID: "m1", Mark: []byte(`{"name":"M"}`), Again: time.Hour,
		Logo: &ports.StoredPicture{SHA256: hexSHA(logo), MediaType: "image/png", Bytes: logo, Width: 1, Height: 1}}))
	p, err := profiles.Picture(t.Context(), hexSHA(logo))
	require.NoError(t, err)
	assert.Equal(t, logo, p.Bytes)
	_, pictures := inRows(t, db)
	assert.Zero(t, pictures, "the logo's bytes are in the store, not the row")
	assert.Equal(t, 2, blobs.Len())
}

// killAfter is a store that "dies" after its nth write: the write lands,
// then the move's context ends, as when a replica is killed between the
// blob's write and the row's update.
type killAfter struct {
	ports.Blobs
	n      atomic.Int64
	after  int64
	cancel context.CancelFunc
}

func (k *killAfter) Put(ctx context.Context, key string, body []byte) error {
	if err := k.Blobs.Put(ctx, key, body); err != nil {
		return err
	}
	if k.n.Add(1) == k.after {
		k.cancel()
		return context.Canceled
	}
	return nil
}

// The move job moves every old row's bytes; killed half-way it leaves every
// body readable, and the next run finishes.
func TestMoveBodiesKilledHalfWayLosesNothing(t *testing.T) {
	db := pgtest.New(t)
	old := postgres.NewSnapshotRepository(db.DB)
	const n = 30
	for i := 1; i <= n; i++ {
		_, err := old.Put(t.Context(), bodySample(i))
		require.NoError(t, err)
	}
	pictures := map[string][]byte{}
	for i := range 5 {
		sha, b := keepOldPicture(t, db, i)
		pictures[sha] = b
	}
	blobs := memory.NewBlobs()
	readsAll := func() {
		t.Helper()
		repo := postgres.NewSnapshotRepository(db.DB).KeepingBodiesIn(blobs)
		for i := 1; i <= n; i++ {
			got, err := repo.Get(t.Context(), bodySample(i).SHA256)
			require.NoError(t, err)
			require.Equal(t, bodySample(i).Gzipped, got.Gzipped)
		}
		profiles := postgres.NewProfileRepository(db.DB).KeepingBodiesIn(blobs)
		for sha, b := range pictures {
			p, err := profiles.Picture(t.Context(), sha)
			require.NoError(t, err)
			require.Equal(t, b, p.Bytes)
		}
	}

	// Killed on the 25th write: 24 rows moved, the 25th's blob written and
	// its row not yet updated.
	ctx, cancel := context.WithCancel(t.Context())
	dying := &killAfter{Blobs: blobs, after: 25, cancel: cancel}
	job := siteapp.MoveBodiesJob(postgres.NewBodyMover(db.DB, dying), nil)
	_, err := job.Run(ctx)
	require.ErrorIs(t, err, context.Canceled)
	snaps, pics := inRows(t, db)
	assert.Equal(t, n-24, snaps, "24 rows moved before the kill, the 25th not")
	assert.Equal(t, 5, pics)
	assert.Equal(t, 25, blobs.Len(), "the 25th body is in the store, nothing names it yet")
	readsAll()

	// The next run (another replica's, say) finishes, the 25th included.
	m := metricsSpy{}
	moved, err := siteapp.MoveBodiesJob(postgres.NewBodyMover(db.DB, blobs), &m).Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, int64(n-24+5), moved)
	snaps, pics = inRows(t, db)
	assert.Zero(t, snaps)
	assert.Zero(t, pics)
	assert.Equal(t, n+5, blobs.Len())
	readsAll()
	assert.Equal(t, float64(n-24), m.get("petal_bodies_moved_total", ports.SnapshotBodies))
	assert.Equal(t, float64(5), m.get("petal_bodies_moved_total", ports.PictureBodies))
	assert.Positive(t, m.get("petal_bodies_moved_bytes_total", ports.SnapshotBodies))

	// A run with nothing left moves nothing and fails nothing.
	moved, err = job.Run(t.Context())
	require.NoError(t, err)
	assert.Zero(t, moved)
}

// A row the store refuses stays in PostgreSQL, counted as failed, and the
// rows after it still move.
func TestMoveBodiesPassesOverARowTheStoreRefuses(t *testing.T) {
	db := pgtest.New(t)
	old := postgres.NewSnapshotRepository(db.DB)
	for i := 1; i <= 3; i++ {
		_, err := old.Put(t.Context(), bodySample(i))
		require.NoError(t, err)
	}
	blobs := memory.NewBlobs()
	refused := hexSHA(bodySample(1).Gzipped)
	blobs.BeforePut = func(key string) error {
		if key == refused {
			return errors.New("the store is full")
		}
		return nil
	}
	m := metricsSpy{}
	moved, err := siteapp.MoveBodiesJob(postgres.NewBodyMover(db.DB, blobs), &m).Run(t.Context())
	require.ErrorContains(t, err, "the store is full")
	assert.Equal(t, int64(2), moved)
	snaps, _ := inRows(t, db)
	assert.Equal(t, 1, snaps)
	assert.Equal(t, float64(1), m.get("petal_bodies_move_failures_total", ports.SnapshotBodies))
	got, err := old.KeepingBodiesIn(blobs).Get(t.Context(), bodySample(1).SHA256)
	require.NoError(t, err)
	assert.Equal(t, bodySample(1).Gzipped, got.Gzipped, "the refused body still reads from its row")
}

// Two replicas' schedulers asked at once to run the move: one runs it.
func TestMoveBodiesRunsOnOneReplicaAtATime(t *testing.T) {
	db := pgtest.New(t)
	old := postgres.NewSnapshotRepository(db.DB)
	for i := 1; i <= 5; i++ {
		_, err := old.Put(t.Context(), bodySample(i))
		require.NoError(t, err)
	}
	blobs := memory.NewBlobs()
	var inFlight, most atomic.Int64
	release := make(chan struct{})
	blobs.BeforePut = func(string) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		return nil
	}
	leases := postgres.NewJobLeases(db.DB)
	var wg sync.WaitGroup
	var ran atomic.Int64
	for range 2 {
		s := jobsapp.NewScheduler(leases, processID(t), quietLog())
		s.Add(siteapp.MoveBodiesJob(postgres.NewBodyMover(db.DB, blobs), nil))
		wg.Go(func() {
			did, err := s.RunDue(t.Context(), "move_bodies")
			assert.NoError(t, err)
			if did {
				ran.Add(1)
			}
		})
	}
	// Both have asked by the time one is writing and the other returned.
	require.Eventually(t, func() bool { return inFlight.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	close(release)
	wg.Wait()
	assert.Equal(t, int64(1), ran.Load(), "one replica moved, the other skipped")
	assert.Equal(t, int64(1), most.Load(), "never two writes of the move at once")
	snaps, _ := inRows(t, db)
	assert.Zero(t, snaps)
}

// metricsSpy keeps the counters a component adds to, by name and labels.
type metricsSpy struct {
	ports.NoMetrics
	mu   sync.Mutex
	sums map[string]float64
}

type spyCounter struct {
	spy  *metricsSpy
	name string
}

func (c spyCounter) Add(d float64, labels ...string) {
	c.spy.mu.Lock()
	defer c.spy.mu.Unlock()
	if c.spy.sums == nil {
		c.spy.sums = map[string]float64{}
	}
	c.spy.sums[fmt.Sprint(c.name, labels)] += d
}

func (m *metricsSpy) Counter(name, _ string, _ ...string) ports.Counter {
	return spyCounter{spy: m, name: name}
}

func (m *metricsSpy) get(name string, labels ...string) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sums[fmt.Sprint(name, labels)]
}
