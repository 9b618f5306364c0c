package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/snapshots"
)

// The measure of the snapshot body route: requests per second of GET
// /api/v1/snapshots/:sha256 (gzip accepted) for a snapshot of about 1 MB
// gzipped, through the whole wired stack (Echo, middleware, the service,
// PostgreSQL), against a bare net/http handler answering the same bytes from
// memory, both on loopback listeners, in one run:
//
//	go test ./cmd/petal -run '^$' -bench BenchmarkSnapshotBody -benchtime 2000x
func BenchmarkSnapshotBody(b *testing.B) {
	db := pgtest.New(b)
	cfg, err := config.LoadConfig(func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	cfg.DatabaseURL = db.URL
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, cleanup, err := buildService(ctx, cfg, log, lentPool{db.DB})
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()

	snap := bigSnapshot(27_000)
	sha, _, err := snapshotsapp.StoreSnapshot(ctx, postgres.NewSnapshotRepository(db.DB), snap, snapshotsapp.OriginThisSite)
	if err != nil {
		b.Fatal(err)
	}
	stored, err := postgres.NewSnapshotRepository(db.DB).Get(ctx, sha)
	if err != nil {
		b.Fatal(err)
	}
	gz := stored.Gzipped
	b.Logf("snapshot: %d accounts, %d bytes gzipped", len(snap.Accounts), len(gz))

	petalURL := benchServe(b, svc.Server.Handler()) + "/api/v1/snapshots/" + sha
	bareURL := benchServe(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Encoding", "gzip")
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.Set("ETag", `"`+sha+`"`)
		h.Set("Vary", "Accept-Encoding")
		h.Set("Content-Length", fmt.Sprint(len(gz)))
		_, _ = w.Write(gz)
	})) + "/api/v1/snapshots/" + sha
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	fetch := func(url string) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || int(n) != len(gz) {
			b.Fatalf("GET %s: %d, %d bytes", url, res.StatusCode, n)
		}
	}
	for _, tc := range []struct{ name, url string }{{"bare", bareURL}, {"petal", petalURL}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(gz)))
			b.SetParallelism(2)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					fetch(tc.url)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
	// Paired rounds, alternating which goes first; the median ratio.
	b.Run("ratio", func(b *testing.B) {
		const round, workers = 100, 8
		var ratios []float64
		for i := range max(b.N/round, 5) {
			measure := func(url string) time.Duration {
				start := time.Now()
				jobs := make(chan struct{}, round)
				for range round {
					jobs <- struct{}{}
				}
				close(jobs)
				done := make(chan struct{})
				for range workers {
					go func() {
						for range jobs {
							fetch(url)
						}
						done <- struct{}{}
					}()
				}
				for range workers {
					<-done
				}
				return time.Since(start)
			}
			var pw, bw time.Duration
			if i%2 == 0 {
				bw, pw = measure(bareURL), measure(petalURL)
			} else {
				pw, bw = measure(petalURL), measure(bareURL)
			}
			ratios = append(ratios, bw.Seconds()/pw.Seconds())
		}
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "petal/bare")
	})
}

func benchServe(b *testing.B, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	return "http://" + ln.Addr().String()
}

// bigSnapshot is a staking-pool-like reading of n delegators with
// yoctoNEAR-exact weights, which gzips to about 1 MB at n = 27,000.
func bigSnapshot(n int) snapshots.Snapshot {
	s := snapshots.Snapshot{
		Schema: snapshots.Schema, Network: "near-staking-pool", Params: json.RawMessage(`{"chain":"near:mainnet","pool":"big.poolv1.near"}`),
		Chain: snapshots.Mainnet, Block: snapshots.Block{Height: 131000000, Hash: "4kbcD3NeZ7Gf8VQ5cFmLQAk1VtUTXK6wzCZnhZqK1nUj", Time: "2026-11-01T12:00:00Z"},
		Title: "Delegators of big.poolv1.near", About: "benchmark reading",
		Groups: []snapshots.Group{{ID: "staking", Label: "Staking"}, {ID: "unstaking", Label: "Also unstaking"}},
		Source: snapshots.Source{Calls: []snapshots.Call{{Contract: "big.poolv1.near", Method: "get_accounts", Pages: n / 100}}},
	}
	x := uint64(88172645463325252)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	for i := range n {
		id := fmt.Sprintf("d%x%d.near", next()%0xffffff, i)
		groups := []string{"staking"}
		if next()%5 == 0 {
			groups = append(groups, "unstaking")
		}
		w := fmt.Sprintf("%d.%024d", next()%100000, next()%1_000_000_000_000_000_000)
		s.Accounts = append(s.Accounts, snapshots.Account{ID: "near:mainnet:" + id, Label: id, Weight: trimZeros(w), Groups: groups,
			Attrs: snapshots.RawAttrs(map[string]string{"staked_yocto": fmt.Sprint(next())})})
	}
	return s
}

func trimZeros(w string) string {
	for w[len(w)-1] == '0' {
		w = w[:len(w)-1]
	}
	if w[len(w)-1] == '.' {
		w = w[:len(w)-1]
	}
	return w
}
