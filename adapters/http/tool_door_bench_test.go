package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
)

// The tool door's cost on a cheap tool: GET /api/v1/networks (list_networks,
// which reads nothing) through the whole stack, against a bare net/http
// handler answering the same bytes. Per-address limits are counted in memory
// here; with PETAL_LIMITS=postgres each call adds one statement
// (BenchmarkAllow in adapters/postgres). Run with:
//
//	go test ./adapters/http -run '^$' -bench ToolDoor -benchtime 20000x
func BenchmarkToolDoor(b *testing.B) {
	// Every call is counted, as served, under a limit the load never reaches.
	cfg, err := config.LoadConfig(func(k string) string {
		if k == "PETAL_TOOL_CALLS_PER_MIN" {
			return "1000000000"
		}
		return ""
	})
	require.NoError(b, err)
	snapshots := &snapshotsapp.SnapshotService{} // list_networks reads nothing of its own
	registry := toolkit.NewRegistry(cfg, memory.NewRateLimiter(memory.SystemClock{}), []toolkit.ToolSet{snapshots})
	petal := New(Deps{Config: cfg, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Registry: registry, Snapshots: snapshots,
		Metrics: newPromMetrics()}).Handler()

	rec := httptest.NewRecorder()
	petal.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/networks", nil))
	require.Equal(b, http.StatusOK, rec.Code, rec.Body.String())
	body := rec.Body.Bytes()
	b.Logf("the answer: %d bytes", len(body))
	contentType := rec.Header().Get("Content-Type")
	bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{{"handler/bare", bare}, {"handler/petal", petal}} {
		b.Run(tc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/networks", nil)
			w := &countingWriter{header: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.header)
				w.code, w.n = 0, 0
				tc.h.ServeHTTP(w, req)
				if w.code != http.StatusOK || w.n != len(body) {
					b.Fatalf("%d, %d bytes", w.code, w.n)
				}
			}
		})
	}
	b.Run("loopback-ratio", func(b *testing.B) {
		pairedRatio(b, serveOnLoopback(b, petal)+"/api/v1/networks", serveOnLoopback(b, bare)+"/api/v1/networks", len(body))
	})
}
