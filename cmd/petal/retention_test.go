package main

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

// Retention runs on a serving process while clients keep writing the tables
// it deletes from (new sessions and explorations, runs opened): every request
// is answered as usual, and what was past retention is gone.
func TestRetentionDeletesInBatchesWhileTheServiceServes(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	ctx := t.Context()
	for _, sql := range []string{
		`INSERT INTO sessions (id, subject, created_at, expires_at)
SELECT lpad(to_hex(i), 64, '0'), 'anon_' || lpad(to_hex(i), 32, '0'), now() - interval '31 days', now() - interval '1 day'
FROM generate_series(1, 20000) AS i`,
		`INSERT INTO runs (id, owner, status, model, updated_at, opened_at)
SELECT 'run_old_' || i, 'anon_' || lpad(to_hex(i), 32, '0'), 'done', 'recorded', now() - interval '100 days', now() - interval '100 days'
FROM generate_series(1, 2000) AS i`,
		`INSERT INTO run_events (run_id, seq, kind, data)
SELECT 'run_old_' || i, s, 'message', '{"text":"old"}' FROM generate_series(1, 2000) AS i, generate_series(0, 19) AS s`,
		`INSERT INTO explorations (id, owner, question, created_at, updated_at, opened_at)
SELECT 'exp_old_' || i, '', 'q', now() - interval '100 days', now() - interval '100 days', now() - interval '100 days'
FROM generate_series(1, 2000) AS i`,
		// An old run someone still opens stays; so does it after this test opens it.
		`INSERT INTO runs (id, status, model, updated_at, opened_at) VALUES ('run_kept', 'done', 'recorded', now() - interval '100 days', now() - interval '100 days')`,
		`INSERT INTO run_events (run_id, seq, kind, data) VALUES ('run_kept', 0, 'done', '{}')`,
		// Due a little after the start, so it runs while the clients below do.
		`INSERT INTO scheduled_jobs (name, next_at) VALUES ('retention', now() + interval '5 seconds')`,
	} {
		_, err := db.Pool.Exec(ctx, sql)
		require.NoError(t, err, sql)
	}
	p := startProcess(t, db, map[string]string{"PETAL_TOOL_CALLS_PER_MIN": "1000000"})
	res, body := p.do(t, http.MethodGet, "/api/v1/agent/runs/run_kept", "", "Accept", "application/json")
	require.Equal(t, http.StatusOK, res.StatusCode, body)

	var served, refused atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, r := range []struct{ method, path, body string }{
					{http.MethodPost, "/api/v1/explorations", `{"question":"who votes?"}`},
					{http.MethodGet, "/api/v1/agent/runs/run_kept", ""},
					{http.MethodGet, "/api/v1/info", ""},
				} {
					res, _ := p.do(t, r.method, r.path, r.body, "Accept", "application/json")
					if res.StatusCode >= 300 {
						refused.Add(1)
					}
					served.Add(1)
				}
			}
		})
	}
	var items int64
	var took time.Duration
	require.Eventually(t, func() bool {
		var runs int64
		var started, finished *time.Time
		err := db.Pool.QueryRow(ctx, `SELECT runs, last_items, started_at, finished_at FROM scheduled_jobs WHERE name = 'retention'`).Scan(&runs, &items, &started, &finished)
		require.NoError(t, err)
		if runs > 0 && started != nil && finished != nil {
			took = finished.Sub(*started)
		}
		return runs > 0
	}, 3*time.Minute, 200*time.Millisecond, "the retention job runs")
	close(stop)
	wg.Wait()
	t.Logf("retention deleted %d rows in %s while %d requests were served", items, took, served.Load())
	assert.Zero(t, refused.Load(), "every request was answered as usual")
	assert.Positive(t, served.Load())

	count := func(sql string) int64 {
		var n int64
		require.NoError(t, db.Pool.QueryRow(ctx, sql).Scan(&n))
		return n
	}
	assert.Zero(t, count(`SELECT count(*) FROM sessions WHERE expires_at < now()`))
	assert.Positive(t, count(`SELECT count(*) FROM sessions`), "the sessions opened meanwhile stay")
	assert.Zero(t, count(`SELECT count(*) FROM runs WHERE id LIKE 'run_old_%'`))
	assert.Zero(t, count(`SELECT count(*) FROM run_events WHERE run_id LIKE 'run_old_%'`))
	assert.Zero(t, count(`SELECT count(*) FROM explorations WHERE id LIKE 'exp_old_%'`))
	assert.Positive(t, count(`SELECT count(*) FROM explorations`), "the explorations started meanwhile stay")
	assert.EqualValues(t, 1, count(`SELECT count(*) FROM runs WHERE id = 'run_kept'`), "a run opened lately stays")
	assert.EqualValues(t, 20000+2000+2000, items)
}
