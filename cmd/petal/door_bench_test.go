package main

import (
	"io"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

// BenchmarkNetworksServed: GET /api/v1/networks from a real `petal serve`
// (its whole middleware and tool door, per-address limits counted where
// PETAL_LIMITS says) against a bare net/http server in this process
// answering the same bytes, in paired rounds alternating which goes first;
// the median pair's wall-clock ratio is reported. The bare server and the
// client share this process (and its CPUs); deploy/bench/door.sh is issue
// 20's setup, each server pinned to a core of its own. Run:
//
//	go test ./cmd/petal -run '^$' -bench NetworksServed -benchtime 20000x
func BenchmarkNetworksServed(b *testing.B) {
	for _, limits := range []string{"postgres", "memory"} {
		b.Run("limits="+limits, func(b *testing.B) {
			db := pgtest.New(b)
			p := startProcess(b, db, map[string]string{"PETAL_LIMITS": limits, "PETAL_TOOL_CALLS_PER_MIN": "1000000000"})
			res, err := http.Get(p.URL + "/api/v1/networks")
			require.NoError(b, err)
			body, err := io.ReadAll(res.Body)
			require.NoError(b, err)
			res.Body.Close()
			require.Equal(b, http.StatusOK, res.StatusCode, string(body))
			contentType := res.Header.Get("Content-Type")
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(b, err)
			bare := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", contentType)
				_, _ = w.Write(body)
			})}
			go func() { _ = bare.Serve(ln) }()
			b.Cleanup(func() { _ = bare.Close() })

			client := &http.Client{Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64}}
			const round, workers = 500, 8
			load := func(url string) time.Duration {
				jobs := make(chan struct{}, round)
				for range round {
					jobs <- struct{}{}
				}
				close(jobs)
				start := time.Now()
				done := make(chan struct{})
				for range workers {
					go func() {
						defer func() { done <- struct{}{} }()
						for range jobs {
							res, err := client.Get(url)
							if err != nil {
								b.Error(err)
								return
							}
							n, _ := io.Copy(io.Discard, res.Body)
							res.Body.Close()
							if res.StatusCode != http.StatusOK || int(n) != len(body) {
								b.Errorf("%s: %d, %d bytes", url, res.StatusCode, n)
								return
							}
						}
					}()
				}
				for range workers {
					<-done
				}
				return time.Since(start)
			}
			petalURL, bareURL := p.URL+"/api/v1/networks", "http://"+ln.Addr().String()+"/api/v1/networks"
			var ratios []float64
			var petalWall, bareWall time.Duration
			b.ResetTimer()
			for i := range max(b.N/round, 5) {
				var pw, bw time.Duration
				if i%2 == 0 {
					bw, pw = load(bareURL), load(petalURL)
				} else {
					pw, bw = load(petalURL), load(bareURL)
				}
				petalWall += pw
				bareWall += bw
				ratios = append(ratios, bw.Seconds()/pw.Seconds())
			}
			slices.Sort(ratios)
			n := float64(len(ratios) * round)
			b.ReportMetric(ratios[len(ratios)/2], "petal/bare-wall")
			b.ReportMetric(n/petalWall.Seconds(), "petal-req/s")
			b.ReportMetric(n/bareWall.Seconds(), "bare-req/s")
		})
	}
}
