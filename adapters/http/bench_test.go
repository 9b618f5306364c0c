package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/ports"
)

// The measure of the middleware's cost: requests per second of GET
// /api/v1/info through the whole stack (request id, access log, panics,
// metrics, route, CORS, body limit, JSON with tools_version), against a bare net/http
// handler answering the same bytes, both on real loopback listeners, loaded
// in the same run. Run with:
//
//	go test ./adapters/http -run '^$' -bench BenchmarkInfo -benchtime 20000x -count 5
//
// BenchmarkInfo/ratio interleaves the two and reports petal's req/s over the
// bare handler's; the goal is at least 0.7.

// infoServers serves the two handlers and returns their URLs.
func infoServers(tb testing.TB) (petalURL, bareURL string, body []byte) {
	tb.Helper()
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(tb, err)
	// The access log is formatted as in production, then dropped: the
	// measure is petal's work, not the terminal's.
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	// Metrics on client_golang, as served: the measure includes counting.
	s := New(Deps{Config: cfg, Log: log, Registry: toolkit.NewRegistry(cfg, memory.NewRateLimiter(memory.SystemClock{}), nil), Metrics: newPromMetrics()})

	// The bytes petal answers, which the bare handler answers too.
	ps := serveOnLoopback(tb, s.Handler())
	res, err := http.Get(ps + "/api/v1/info")
	require.NoError(tb, err)
	body, err = io.ReadAll(res.Body)
	require.NoError(tb, err)
	res.Body.Close()
	require.Equal(tb, http.StatusOK, res.StatusCode)
	contentType := res.Header.Get("Content-Type")

	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/info" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
	return ps, serveOnLoopback(tb, bare), body
}

func serveOnLoopback(tb testing.TB, h http.Handler) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	tb.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return "http://" + ln.Addr().String()
}

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}}
}

func get(tb testing.TB, client *http.Client, url string, want int) {
	res, err := client.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	n, err := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if err != nil || int(n) != want || res.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s: %d, %d bytes, %v", url, res.StatusCode, n, err)
	}
}

// load sends n requests from parallel clients and returns how long they took.
func load(tb testing.TB, client *http.Client, url string, n, workers, size int) time.Duration {
	start := time.Now()
	jobs := make(chan struct{}, n)
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	done := make(chan struct{})
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for range jobs {
				get(tb, client, url, size)
			}
		}()
	}
	for range workers {
		<-done
	}
	return time.Since(start)
}

func BenchmarkInfo(b *testing.B) {
	petalURL, bareURL, body := infoServers(b)
	client := benchClient()
	for _, tc := range []struct{ name, url string }{{"bare", bareURL}, {"petal", petalURL}} {
		b.Run(tc.name, func(b *testing.B) {
			url := tc.url + "/api/v1/info"
			b.SetParallelism(4)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					get(b, client, url, len(body))
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
	// The ratio from many short paired rounds, alternating which goes first,
	// so both meet the same machine state; the median pair is reported. The
	// machine is shared, so each round is also measured in this process's CPU
	// time (client and server together), which others' load disturbs less:
	// at saturation, requests per second is cores over CPU per request.
	b.Run("ratio", func(b *testing.B) {
		pairedRatio(b, petalURL+"/api/v1/info", bareURL+"/api/v1/info", len(body))
	})
}

// pairedRatio reports petal's requests per second over the bare handler's,
// from many short paired rounds alternating which goes first, so both meet
// the same machine state; the median pair is reported. The machine is
// shared, so each round is also measured in this process's CPU time (client
// and server together), which others' load disturbs less: at saturation,
// requests per second is cores over CPU per request.
func pairedRatio(b *testing.B, petalURL, bareURL string, size int) {
	client := benchClient()
	const round, workers = 500, 8
	pairs := max(b.N/round, 5)
	var wall, cpu []float64
	var petalWall, bareWall time.Duration
	for i := range pairs {
		measure := func(url string) (time.Duration, time.Duration) {
			c0 := cpuTime()
			w := load(b, client, url, round, workers, size)
			return w, cpuTime() - c0
		}
		var pw, pc, bw, bc time.Duration
		if i%2 == 0 {
			bw, bc = measure(bareURL)
			pw, pc = measure(petalURL)
		} else {
			pw, pc = measure(petalURL)
			bw, bc = measure(bareURL)
		}
		petalWall += pw
		bareWall += bw
		wall = append(wall, bw.Seconds()/pw.Seconds())
		cpu = append(cpu, bc.Seconds()/pc.Seconds())
	}
	b.ReportMetric(median(wall), "petal/bare-wall")
	b.ReportMetric(median(cpu), "petal/bare-cpu")
	n := float64(pairs * round)
	b.ReportMetric(n/petalWall.Seconds(), "petal-req/s")
	b.ReportMetric(n/bareWall.Seconds(), "bare-req/s")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// cpuTime is the user and system time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkInfoHandler is the same comparison without the network: the
// handlers alone, so the middleware's own cost per request shows plainly.
func BenchmarkInfoHandler(b *testing.B) {
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(b, err)
	serverWith := func(m ports.Metrics) http.Handler {
		return New(Deps{Config: cfg, Log: slog.New(slog.NewJSONHandler(io.Discard, nil)), Registry: toolkit.NewRegistry(cfg, memory.NewRateLimiter(memory.SystemClock{}), nil), Metrics: m}).Handler()
	}
	body := []byte(`{"tools_version":"1.0.0","build_id":"dev","server_implementation":"petal"}`)
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", jsonContentType)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	})
	for _, tc := range []struct {
		name string
		h    http.Handler
	}{
		{"bare", bare},
		{"petal", serverWith(newPromMetrics())},
		// The same stack counting nothing: the difference is what the
		// metrics cost a request.
		{"petal-without-metrics", serverWith(ports.NoMetrics{})},
	} {
		b.Run(tc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/info", nil)
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
}

// countingWriter is the cheapest ResponseWriter: it keeps the status and
// counts the bytes, so the benchmark measures the handlers, not a recorder.
type countingWriter struct {
	header http.Header
	code   int
	n      int
}

func (w *countingWriter) Header() http.Header { return w.header }
func (w *countingWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.n += len(p)
	return len(p), nil
}
