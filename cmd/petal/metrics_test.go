package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

// get fetches url and returns its status and body.
func get(t *testing.T, url string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// metricLine finds the sample of name whose labels include every one of
// labels (like `route="/api/v1/info"`) and returns its value as text.
func metricLine(exposition, name string, labels ...string) (string, bool) {
	for line := range strings.Lines(exposition) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(line, l)
		}
		if ok {
			return line[strings.LastIndexByte(line, ' ')+1:], true
		}
	}
	return "", false
}

// petal serve with PETAL_METRICS_ADDR answers Prometheus' /metrics and pprof
// on that listener, and neither on the public one; the requests it served are
// counted by route and status, the pool and the shared state are read at
// scrape time, and every request's log line carries its request_id.
func TestMetricsListener(t *testing.T) {
	db := pgtest.New(t)
	t.Setenv("DATABASE_URL", db.URL)
	t.Setenv("PETAL_METRICS_ADDR", "127.0.0.1:0")
	addr, out, stop := servePetal(t)
	var metricsAddr string
	require.Eventually(t, func() bool {
		rec := out.logRecord("metrics and pprof are served")
		if rec == nil {
			return false
		}
		metricsAddr = strings.TrimSuffix(rec["addr"].(string), "/metrics")
		return true
	}, 10*time.Second, 20*time.Millisecond, "the metrics listener is logged:\n%s", out)

	for range 3 {
		status, _ := get(t, addr+"/api/v1/info", "X-Request-Id", "metrics-info")
		require.Equal(t, http.StatusOK, status)
	}
	status, _ := get(t, addr+"/api/v1/agent/runs/run_nope")
	require.Equal(t, http.StatusNotFound, status)

	status, body := get(t, metricsAddr+"/metrics")
	require.Equal(t, http.StatusOK, status, body)
	n, ok := metricLine(body, "petal_http_request_duration_seconds_count", `route="/api/v1/info"`, `method="GET"`, `code="200"`)
	require.True(t, ok, "requests by route and status:\n%s", body)
	assert.Equal(t, "3", n)
	n, ok = metricLine(body, "petal_http_request_duration_seconds_count", `route="/api/v1/agent/runs/:id"`, `code="404"`)
	require.True(t, ok, "a route pattern, never the path:\n%s", body)
	assert.Equal(t, "1", n)
	assert.NotContains(t, body, "run_nope", "no label comes from what the client sent")
	_, ok = metricLine(body, "petal_http_request_duration_seconds_bucket", `route="/api/v1/info"`, `le="0.005"`)
	assert.True(t, ok, "latency buckets")
	n, ok = metricLine(body, "petal_db_pool_connections", `state="max"`)
	require.True(t, ok, "pool stats:\n%s", body)
	assert.NotEqual(t, "0", n)
	n, ok = metricLine(body, "petal_runs_running")
	require.True(t, ok, "runs read from the database:\n%s", body)
	assert.Equal(t, "0", n)
	n, ok = metricLine(body, "petal_holds_outstanding", `measure="micros"`)
	require.True(t, ok, "holds read from the database:\n%s", body)
	assert.Equal(t, "0", n)
	_, ok = metricLine(body, "go_goroutines")
	assert.True(t, ok, "the Go runtime's metrics")
	_, ok = metricLine(body, "petal_metrics_read_errors_total")
	assert.False(t, ok, "no scrape-time read failed:\n%s", body)

	// The scheduled sweep runs at start; its runs are counted by job and outcome.
	require.Eventually(t, func() bool {
		_, body := get(t, metricsAddr+"/metrics")
		n, ok := metricLine(body, "petal_job_runs_total", `job="sweep_lapsed_leases"`, `outcome="ok"`)
		return ok && n != "0"
	}, 30*time.Second, 100*time.Millisecond, "the sweep's runs are counted")
	_, body = get(t, metricsAddr+"/metrics")
	_, ok = metricLine(body, "petal_job_duration_seconds_count", `job="sweep_lapsed_leases"`)
	assert.True(t, ok, "and timed:\n%s", body)
	n, ok = metricLine(body, "petal_sweep_runs_ended_total")
	require.True(t, ok, "what sweeps ended:\n%s", body)
	assert.Equal(t, "0", n, "nothing to sweep here")

	status, body = get(t, metricsAddr+"/debug/pprof/")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "goroutine")
	status, body = get(t, metricsAddr+"/debug/pprof/goroutine?debug=1")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, "goroutine profile")

	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/goroutine?debug=1"} {
		status, _ := get(t, addr+path)
		assert.Equal(t, http.StatusNotFound, status, "%s is never on the public listener", path)
	}

	stop()
	lines := 0
	for line := range strings.Lines(out.String()) {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil || rec["msg"] != "request" {
			continue
		}
		assert.NotEmpty(t, rec["request_id"], "every request line has its request_id: %s", line)
		if rec["request_id"] == "metrics-info" {
			lines++
		}
	}
	assert.Equal(t, 3, lines, "the client's X-Request-Id is the one logged")
}

// Without PETAL_METRICS_ADDR nothing else listens: the default is off.
func TestMetricsListenerOffByDefault(t *testing.T) {
	db := pgtest.New(t)
	t.Setenv("DATABASE_URL", db.URL)
	_, out, stop := servePetal(t)
	stop()
	assert.Nil(t, out.logRecord("metrics and pprof are served"))
}

// scrapeOf reads p's metrics as Prometheus would.
func scrapeOf(t *testing.T, p *testPetal) string {
	t.Helper()
	srv := httptest.NewServer(p.Svc.Metrics.Handler(slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()
	status, body := get(t, srv.URL+"/metrics")
	require.Equal(t, http.StatusOK, status)
	return body
}

func metricValue(t *testing.T, exposition, name string, labels ...string) float64 {
	t.Helper()
	v, ok := metricLine(exposition, name, labels...)
	if !ok {
		return -1
	}
	f, err := strconv.ParseFloat(v, 64)
	require.NoError(t, err)
	return f
}

// A chat on the model and a fresh read leave their marks: the model call by
// outcome, the NEAR RPC calls by method and outcome, the fresh read, the run
// ended done, what the ledger charged and the hold it closed, the viewer's
// stream and its wait on the bus opened and closed, and the bus's own
// notifications come back with their lag.
func TestMetricsOfAChatAndAFreshRead(t *testing.T) {
	t.Parallel()
	model := nearaitest.New(t, nearaitest.Completion("m1", "deepseek-ai/DeepSeek-V3.1", "Here it is."))
	env := modelEnv(model)
	rpc := nearrpctest.New(t)
	env["PETAL_NEAR_RPC_MAINNET"] = rpc.URL
	env["PETAL_NEAR_PAGE_SIZE"] = "2"
	p := startPetal(t, env)

	status, out := p.getSnapshot(t, `{"network":"near-dao-members","params":{"dao":"marketing"},"fresh":true}`)
	require.Equal(t, http.StatusOK, status, "%v", out)

	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt).rest(t)
	require.Equal(t, "done", evs[len(evs)-1].Name, "%v", names(evs))

	var body string
	require.Eventually(t, func() bool {
		body = scrapeOf(t, p)
		return metricValue(t, body, "petal_sse_streams_open", `kind="run"`) == 0 &&
			metricValue(t, body, "petal_event_bus_watchers") == 0 &&
			metricValue(t, body, "petal_event_bus_notify_lag_seconds_count") > 0
	}, 10*time.Second, 50*time.Millisecond, "the stream and its wait are closed, and a notification came back")

	assert.Equal(t, 1.0, metricValue(t, body, "petal_model_call_duration_seconds_count", `model="deepseek-ai/DeepSeek-V3.1"`, `outcome="ok"`), body)
	assert.Positive(t, metricValue(t, body, "petal_near_rpc_call_duration_seconds_count", `chain="near:mainnet"`, `method="block"`, `outcome="ok"`), body)
	assert.Positive(t, metricValue(t, body, "petal_near_rpc_call_duration_seconds_count", `chain="near:mainnet"`, `method="query"`, `outcome="ok"`), body)
	assert.Equal(t, 1.0, metricValue(t, body, "petal_fresh_read_duration_seconds_count", `outcome="ok"`), body)
	assert.Equal(t, 0.0, metricValue(t, body, "petal_fresh_reads_in_flight"), body)
	assert.Equal(t, 1.0, metricValue(t, body, "petal_runs_ended_total", `status="done"`), body)
	assert.Equal(t, 1.0, metricValue(t, body, "petal_ledger_holds_closed_total", `how="settled"`), body)
	assert.Positive(t, metricValue(t, body, "petal_ledger_charged_micros_total", `kind="call"`), body)
	assert.Equal(t, 0.0, metricValue(t, body, "petal_holds_outstanding", `measure="holds"`), body)
	assert.Equal(t, 0.0, metricValue(t, body, "petal_runs_running"), body)
	assert.Equal(t, 1.0, metricValue(t, body, "petal_http_request_duration_seconds_count", `route="/api/v1/agent/chat"`, `code="200"`), body)
}
