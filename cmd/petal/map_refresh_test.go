package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/domain/specs"
)

const refreshJobName = "map_refresh"

// refreshSite is a database whose map_refresh job isn't due until a test
// says so, the fake chain, and the site's env with perDay reads a day.
func refreshSite(t *testing.T, perDay int) (*pgtest.DB, *nearrpctest.Server, map[string]string) {
	t.Helper()
	db := pgtest.New(t)
	_, err := db.Pool.Exec(t.Context(), `INSERT INTO scheduled_jobs (name, next_at) VALUES ($1, now() + interval '1 hour')`, refreshJobName)
	require.NoError(t, err)
	fake := nearrpctest.New(t)
	return db, fake, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL,
		"PETAL_MAP_REFRESH_PER_DAY": fmt.Sprint(perDay)}
}

// drawEarlier puts on the map a person's drawing of an earlier reading of
// a target (what the fake chain answers, a day or an hour before, its first
// weight changed), published elsewhere and brought in by the sync; it
// returns the map's id and the earlier reading's sha256.
func drawEarlier(t *testing.T, p *testPetal, fake *nearrpctest.Server, network, params string, before time.Duration, n int) (string, string) {
	t.Helper()
	snap, err := p.Svc.Snapshots.Read(t.Context(), network, json.RawMessage(params), nil)
	require.NoError(t, err)
	at, err := time.Parse(time.RFC3339Nano, snap.Block.Time)
	require.NoError(t, err)
	snap.Block = snapshots.Block{Height: snap.Block.Height - 100, Hash: fmt.Sprint("earlier", n), Time: at.Add(-before).UTC().Format(time.RFC3339)}
	sha := storeFlowerSnapshot(t, p, snap)
	mapID := published.MapOf(snap.Chain, snap.Params)
	spec, err := specs.Propose(&snap, sha, "")
	require.NoError(t, err)
	f := published.Flower{Schema: published.Schema, Spec: spec, Snapshot: sha, About: "read earlier", Map: mapID,
		MadeBy: "alice.near", MadeAt: fmt.Sprintf("2026-11-30T12:0%d:00Z", n)}
	id, record, err := f.Canonical()
	require.NoError(t, err)
	publishElsewhere(t, fake, "alice.near", id, record)
	_, err = p.Svc.MapSync.Run(t.Context())
	require.NoError(t, err)
	return mapID, sha
}

func lookAt(t *testing.T, p *testPetal, mapID string, times int) {
	t.Helper()
	for range times {
		res, body := p.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape(mapID), "")
		require.Equal(t, http.StatusOK, res.StatusCode, body)
	}
}

func makeRefreshDue(t *testing.T, db *pgtest.DB) {
	t.Helper()
	_, err := db.Pool.Exec(t.Context(), `UPDATE scheduled_jobs SET next_at = now() WHERE name = $1`, refreshJobName)
	require.NoError(t, err)
}

type historyReading struct {
	Snapshot  string `json:"snapshot"`
	Previous  *string
	Refreshed bool `json:"refreshed"`
}

func historyOf(t *testing.T, p *testPetal, mapID string) []historyReading {
	t.Helper()
	res, body := p.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape(mapID)+"/history", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var h struct {
		Readings []historyReading `json:"readings"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &h))
	return h.Readings
}

func countRows(t *testing.T, db *pgtest.DB, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, db.Pool.QueryRow(t.Context(), query, args...).Scan(&n))
	return n
}

// Two replicas, one read a day, two maps looked at: exactly one replica
// runs the job, it reads the map whose reading is oldest, keeps the new
// reading as a reading of that map (no flower, no drawing), the other
// replica's map shows it too, and the day's budget holds the second map
// back.
func TestMapRefreshReadsWithinBudgetOnOneReplica(t *testing.T) {
	t.Parallel()
	db, fake, env := refreshSite(t, 1)
	a := startPetalOn(t, env, db, db.DB)
	b := startPetalOn(t, env, db, db.DB)
	dao, daoEarlier := drawEarlier(t, a, fake, "near-dao-members", `{"dao":"marketing.sputnik-dao.near"}`, 24*time.Hour, 1)
	pool, _ := drawEarlier(t, a, fake, "near-staking-pool", `{"pool":"astro-stakers.poolv1.near"}`, time.Hour, 2)
	_, err := b.Svc.MapSync.Run(t.Context())
	require.NoError(t, err)
	lookAt(t, a, dao, 2)
	// b hears of a's drawings by its map's LISTEN: its first look waits for
	// that (a 404 till then, which counts no look).
	require.Eventually(t, func() bool {
		res, _ := b.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape(pool), "")
		return res.StatusCode == http.StatusOK
	}, 10*time.Second, 20*time.Millisecond, "replica b knows the pool's map")
	lookAt(t, b, pool, 2) // looked at more (three times), but its reading is newer
	flowers := countRows(t, db, `SELECT count(*) FROM published_flowers`)
	require.Equal(t, 2, flowers)

	makeRefreshDue(t, db)
	var wg sync.WaitGroup
	ran := make([]bool, 2)
	for i, p := range []*testPetal{a, b} {
		wg.Go(func() {
			r, err := p.Svc.Jobs.RunDue(t.Context(), refreshJobName)
			assert.NoError(t, err)
			ran[i] = r
		})
	}
	wg.Wait()
	assert.NotEqual(t, ran[0], ran[1], "exactly one replica runs the job: %v", ran)
	assert.Equal(t, 1, countRows(t, db, `SELECT reads FROM map_refresh_days`))
	assert.Equal(t, 1, countRows(t, db, `SELECT count(*) FROM map_readings WHERE map = $1`, dao))
	assert.Equal(t, 0, countRows(t, db, `SELECT count(*) FROM map_readings WHERE map = $1`, pool))
	assert.Equal(t, flowers, countRows(t, db, `SELECT count(*) FROM published_flowers`), "no drawing is made")

	for _, p := range []*testPetal{a, b} {
		require.Eventually(t, func() bool { return len(historyOf(t, p, dao)) == 2 }, 10*time.Second, 50*time.Millisecond, "each replica's map has the reading")
		h := historyOf(t, p, dao)
		assert.Equal(t, daoEarlier, h[0].Snapshot)
		assert.False(t, h[0].Refreshed)
		assert.True(t, h[1].Refreshed)
		require.NotNil(t, h[1].Previous)
		assert.Equal(t, daoEarlier, *h[1].Previous)
	}
	res, body := a.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape(dao), "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	var card struct {
		Map struct {
			Readings []struct {
				Refreshed bool              `json:"refreshed"`
				Drawings  []json.RawMessage `json:"drawings"`
			} `json:"readings"`
		} `json:"map"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &card))
	require.Len(t, card.Map.Readings, 2, body)
	assert.True(t, card.Map.Readings[0].Refreshed, "the newest reading is the refreshed one")
	assert.Empty(t, card.Map.Readings[0].Drawings, "nobody drew it")
	assert.Len(t, card.Map.Readings[1].Drawings, 1)

	// The day's one read is spent: the pool waits for tomorrow.
	makeRefreshDue(t, db)
	ranAgain, err := a.Svc.Jobs.RunDue(t.Context(), refreshJobName)
	require.NoError(t, err)
	require.True(t, ranAgain, "the job ran (its lease was free and it was due)")
	assert.Equal(t, 0, countRows(t, db, `SELECT count(*) FROM map_readings WHERE map = $1`, pool))
	assert.Equal(t, 1, countRows(t, db, `SELECT reads FROM map_refresh_days`))
}

// A DAO whose policy hasn't changed since the job's last reading is skipped
// without spending the budget; a pool whose chain fails is backed off and
// not tried again before its time.
func TestMapRefreshSkipsUnchangedAndBacksOffFailing(t *testing.T) {
	t.Parallel()
	db, fake, env := refreshSite(t, 10)
	p := startPetalOn(t, env, db, db.DB)
	dao, _ := drawEarlier(t, p, fake, "near-dao-members", `{"dao":"marketing.sputnik-dao.near"}`, 24*time.Hour, 1)
	pool, _ := drawEarlier(t, p, fake, "near-staking-pool", `{"pool":"astro-stakers.poolv1.near"}`, time.Hour, 2)
	lookAt(t, p, dao, 1)
	lookAt(t, p, pool, 1)

	makeRefreshDue(t, db)
	ran, err := p.Svc.Jobs.RunDue(t.Context(), refreshJobName)
	require.NoError(t, err)
	require.True(t, ran, "the job ran (its lease was free and it was due)")
	require.Equal(t, 2, countRows(t, db, `SELECT count(*) FROM map_readings`))
	require.Equal(t, 2, countRows(t, db, `SELECT reads FROM map_refresh_days`))
	assert.Equal(t, 1, countRows(t, db, `SELECT count(*) FROM map_refresh_targets WHERE mark LIKE 'get_policy:%'`))

	// Both due again at once; the pool's contract now fails.
	_, err = db.Pool.Exec(t.Context(), `UPDATE map_refresh_targets SET next_try = now()`)
	require.NoError(t, err)
	fake.Inject(nearrpctest.Fault{Contract: "astro-stakers.poolv1.near", Status: http.StatusInternalServerError})
	policies := fake.CountCalls("get_policy")
	makeRefreshDue(t, db)
	ran, err = p.Svc.Jobs.RunDue(t.Context(), refreshJobName)
	require.NoError(t, err)
	require.True(t, ran, "the job ran (its lease was free and it was due)")
	assert.Equal(t, policies+1, fake.CountCalls("get_policy"), "only the cheap check was made of the DAO")
	assert.Equal(t, 3, countRows(t, db, `SELECT reads FROM map_refresh_days`), "the skipped DAO spent nothing; the failed pool spent its read")
	assert.Equal(t, 2, countRows(t, db, `SELECT count(*) FROM map_readings`))
	var failures int
	var wait float64
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT failures, extract(epoch FROM next_try - now()) FROM map_refresh_targets WHERE map = $1`, pool).Scan(&failures, &wait))
	assert.Equal(t, 1, failures)
	assert.InDelta(t, 30*60, wait, 60, "backed off half an hour")

	// Not tried again before its time: the pool's contract isn't called.
	poolCalls := fake.CountCalls("get_number_of_accounts")
	makeRefreshDue(t, db)
	ran, err = p.Svc.Jobs.RunDue(t.Context(), refreshJobName)
	require.NoError(t, err)
	require.True(t, ran, "the job ran (its lease was free and it was due)")
	assert.Equal(t, poolCalls, fake.CountCalls("get_number_of_accounts"))
	assert.Equal(t, 1, countRows(t, db, `SELECT failures FROM map_refresh_targets WHERE map = $1`, pool))
}
