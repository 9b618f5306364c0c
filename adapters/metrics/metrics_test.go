package metrics

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func scrape(t *testing.T, r *Registry) (int, string) {
	t.Helper()
	srv := httptest.NewServer(r.Handler(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + "/metrics")
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

func TestEachKindIsExposed(t *testing.T) {
	r := New()
	c := r.Counter("petal_test_calls_total", "Calls.", "outcome")
	c.Add(2, "ok")
	c.Add(1, "failed")
	g := r.Gauge("petal_test_open", "Open.")
	g.Add(3)
	g.Add(-1)
	h := r.Histogram("petal_test_seconds", "Latency.", []float64{0.1, 1}, "route")
	h.Observe(0.05, "/a")
	h.Observe(0.5, "/a")
	r.Observe("petal_test_rows", "Rows.", []string{"state"}, func(_ context.Context, emit func(float64, ...string)) error {
		emit(7, "held")
		return nil
	})

	status, body := scrape(t, r)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `petal_test_calls_total{outcome="ok"} 2`)
	assert.Contains(t, body, `petal_test_calls_total{outcome="failed"} 1`)
	assert.Contains(t, body, "petal_test_open 2")
	assert.Contains(t, body, `petal_test_seconds_bucket{route="/a",le="0.1"} 1`)
	assert.Contains(t, body, `petal_test_seconds_bucket{route="/a",le="1"} 2`)
	assert.Contains(t, body, `petal_test_seconds_count{route="/a"} 2`)
	assert.Contains(t, body, `petal_test_rows{state="held"} 7`)
	assert.Contains(t, body, "# HELP petal_test_calls_total Calls.")
	assert.Contains(t, body, "go_goroutines")
}

// Two components declaring the same metric share it; declaring a name again
// as something else is a mistake shown at once.
func TestDeclaringTwice(t *testing.T) {
	r := New()
	a := r.Counter("petal_test_total", "T.", "k")
	b := r.Counter("petal_test_total", "T.", "k")
	a.Add(1, "x")
	b.Add(1, "x")
	assert.InDelta(t, 2, testutil.ToFloat64(r.declared["petal_test_total"].metric.(counter).v.WithLabelValues("x")), 0)
	assert.Panics(t, func() { r.Gauge("petal_test_total", "T.", "k") })
	assert.Panics(t, func() { r.Counter("petal_test_total", "T.", "other") })
}

// A scrape-time read that fails leaves its metric out and is counted; the
// rest of the scrape is served.
func TestAFailedReadIsLeftOut(t *testing.T) {
	r := New()
	r.Observe("petal_test_broken", "Broken.", nil, func(context.Context, func(float64, ...string)) error {
		return errors.New("database down")
	})
	r.Observe("petal_test_wrong_labels", "Wrong labels.", []string{"a"}, func(_ context.Context, emit func(float64, ...string)) error {
		emit(1) // no value for label a
		return nil
	})
	r.Gauge("petal_test_fine", "Fine.").Set(1)
	// Collectors run at once, so a scrape may show the failures of the one
	// before: scrape twice.
	_, _ = scrape(t, r)
	status, body := scrape(t, r)
	require.Equal(t, http.StatusOK, status)
	assert.NotContains(t, body, "petal_test_broken ")
	assert.NotContains(t, body, "petal_test_wrong_labels ")
	assert.Contains(t, body, "petal_test_fine 1")
	assert.Regexp(t, `petal_metrics_read_errors_total\{metric="petal_test_broken"\} [12]\n`, body)
	assert.Regexp(t, `petal_metrics_read_errors_total\{metric="petal_test_wrong_labels"\} [12]\n`, body)
}

func TestPprofIsServed(t *testing.T) {
	srv := httptest.NewServer(New().Handler(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	res, err := http.Get(srv.URL + "/debug/pprof/heap?debug=1")
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, string(b), "heap profile")
}
