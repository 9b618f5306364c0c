package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/domain/specs"
	"github.com/petal-near/petal/ports"
)

// The map's benchmarks, on generated data (never shipped): a map of 2,000
// maps with 10,000 published flowers over 5,000 snapshots, through the whole
// wired stack on a loopback listener, each beside its floor (a bare net/http
// handler answering the same bytes from memory):
//
//	go test ./cmd/petal -run '^$' -bench BenchmarkMapLists -benchtime 1x
//	go test ./cmd/petal -run '^$' -bench BenchmarkMapSync -benchtime 1x
//
// Sizes scale down with PETAL_BENCH_MAP_SCALE (a divisor) on a slow machine.

const (
	benchMaps      = 2000
	benchSnapshots = 5000
	benchFlowers   = 10000
	benchAccounts  = 30 // per generated snapshot
)

func benchScale() int {
	var n int
	if _, err := fmt.Sscan(os.Getenv("PETAL_BENCH_MAP_SCALE"), &n); err != nil || n < 1 {
		return 1
	}
	return n
}

// benchReading is the i-th generated reading: a DAO's members, the DAO one
// of benchMaps, its block time moving with i.
func benchReading(i, maps int) snapshots.Snapshot {
	dao := fmt.Sprintf("dao%05d.sputnik-dao.near", i%maps)
	roles := []snapshots.DAORole{{Name: "council"}, {Name: "community"}, {Name: "builders"}}
	for a := range benchAccounts {
		acct := fmt.Sprintf("m%03d-%d.near", a, i%7)
		roles[a%3].Members = append(roles[a%3].Members, acct)
	}
	t := snapshots.TallyMembers(snapshots.Mainnet, roles)
	return snapshots.Snapshot{Schema: snapshots.Schema, Network: "near-dao-members", Params: json.RawMessage(`{"chain":"near:mainnet","dao":"` + dao + `"}`),
		Chain: snapshots.Mainnet, Block: snapshots.Block{Height: uint64(100 + i), Hash: fmt.Sprintf("h%d", i), Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Hour).Format(time.RFC3339)},
		Title: "Members of " + dao, About: "generated for a benchmark", Groups: t.Groups, Accounts: t.Accounts, Source: snapshots.Source{Calls: []snapshots.Call{}}}
}

// benchRecord is flower n of a reading, its spec's title its number.
func benchRecord(b *testing.B, snap *snapshots.Snapshot, sha string, n int, maker string) (record []byte, id string) {
	spec, err := specs.Propose(snap, sha, "")
	if err != nil {
		b.Fatal(err)
	}
	spec.Title = fmt.Sprintf("Flower %d", n)
	f := published.Flower{Schema: published.Schema, Spec: spec, Snapshot: sha, About: "DAO members on NEAR", Map: published.MapOf(snap.Chain, snap.Params),
		MadeBy: maker, MadeAt: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute).Format(time.RFC3339)}
	if n%3 == 0 {
		f.Name = fmt.Sprintf("Named %d", n)
	}
	id, record, err = f.Canonical()
	if err != nil {
		b.Fatal(err)
	}
	return record, id
}

// processCPU is this process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func timedGet(b *testing.B, client *http.Client, url string) (time.Duration, []byte) {
	start := time.Now()
	res, err := client.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	took := time.Since(start)
	if res.StatusCode != http.StatusOK {
		b.Fatalf("GET %s: %d %s", url, res.StatusCode, body)
	}
	return took, body
}

func BenchmarkMapLists(b *testing.B) {
	scale := benchScale()
	nMaps, nSnaps, nFlowers := benchMaps/scale, benchSnapshots/scale, benchFlowers/scale
	db := pgtest.New(b)
	cfg, err := config.LoadConfig(func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	cfg.DatabaseURL = db.URL
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, cleanup, err := buildService(ctx, cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)), lentPool{db.DB})
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()

	started := time.Now()
	snapStore := postgres.NewSnapshotRepository(db.DB)
	readings := make([]snapshots.Snapshot, nSnaps)
	shas := make([]string, nSnaps)
	for i := range nSnaps {
		readings[i] = benchReading(i, nMaps)
		if shas[i], _, err = snapshotsapp.StoreSnapshot(ctx, snapStore, readings[i], snapshotsapp.OriginThisSite); err != nil {
			b.Fatal(err)
		}
	}
	flowers := postgres.NewPublishedFlowerRepository(db.DB)
	keep := func(n int) string {
		i := n % nSnaps
		maker := fmt.Sprintf("maker%d.near", n%997)
		record, id := benchRecord(b, &readings[i], shas[i], n, maker)
		if _, _, err := flowers.Keep(ctx, published.Kept{ID: id, Network: "near:mainnet", Maker: maker, Map: published.MapOf(readings[i].Chain, readings[i].Params),
			Snapshot: shas[i], Record: record, MadeAt: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute),
			Status: published.StatusOK, Came: published.CameSynced}); err != nil {
			b.Fatal(err)
		}
		return id
	}
	for n := range nFlowers {
		keep(n)
	}
	b.Logf("generated %d maps, %d snapshots (%d accounts each), %d flowers in %s", nMaps, nSnaps, benchAccounts, nFlowers, time.Since(started).Round(time.Millisecond))

	url := benchServe(b, svc.Server.Handler())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

	coldStart := time.Now()
	timedGet(b, client, url+"/api/v1/maps")
	b.Logf("first list (the whole store read, every snapshot's facts and every spec's keys): %s", time.Since(coldStart).Round(time.Millisecond))

	const rounds = 200
	for _, path := range []string{"/api/v1/maps", "/api/v1/map"} {
		_, body := timedGet(b, client, url+path)
		bare := benchServe(b, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		}))
		b.Run("warm"+path, func(b *testing.B) {
			var petal, floor []time.Duration
			for range rounds {
				d, _ := timedGet(b, client, url+path)
				petal = append(petal, d)
				d, _ = timedGet(b, client, bare)
				floor = append(floor, d)
			}
			p50, p99 := p50p99(petal)
			f50, f99 := p50p99(floor)
			b.ReportMetric(p50, "p50-ms")
			b.ReportMetric(p99, "p99-ms")
			b.ReportMetric(f50, "bare-p50-ms")
			b.ReportMetric(f99, "bare-p99-ms")
			b.ReportMetric(float64(len(body)), "bytes")
		})
	}
	// The same list once every map carries a mark (map_marks), beside its
	// own floor, and the first list after a mark changed (the marks read
	// again, the page encoded again).
	b.Run("marks", func(b *testing.B) { benchMarkedCards(b, svc, postgres.NewMapMarkRepository(db.DB), client, url, nMaps) })
	b.Run("after-a-new-flower", func(b *testing.B) {
		var maps, views, cpu []time.Duration
		for k := range 30 {
			id := keep(nFlowers + k)
			svc.Maps.Added(id) // as this replica's NOTIFY, or its own keep, says
			before := processCPU()
			d, _ := timedGet(b, client, url+"/api/v1/maps")
			cpu = append(cpu, processCPU()-before)
			maps = append(maps, d)
			d, _ = timedGet(b, client, url+"/api/v1/map")
			views = append(views, d)
		}
		p50, p99 := p50p99(maps)
		b.ReportMetric(p50, "maps-p50-ms")
		b.ReportMetric(p99, "maps-p99-ms")
		p50, p99 = p50p99(views)
		b.ReportMetric(p50, "map-p50-ms")
		b.ReportMetric(p99, "map-p99-ms")
		// CPU time of the whole process (rebuild, encoding, client) for the
		// first /maps after a flower: steadier than wall time on a shared machine.
		p50, p99 = p50p99(cpu)
		b.ReportMetric(p50, "maps-cpu-p50-ms")
		b.ReportMetric(p99, "maps-cpu-p99-ms")
	})
	b.Run("svg-500-tiles", func(b *testing.B) {
		var pictures []string
		for cursor := ""; len(pictures) < 500; {
			_, body := timedGet(b, client, url+"/api/v1/map/views?limit=500"+cursor)
			var page struct {
				Views []struct {
					Picture string `json:"picture"`
				} `json:"views"`
				Next *string `json:"next_cursor"`
			}
			if err := json.Unmarshal(body, &page); err != nil {
				b.Fatal(err)
			}
			for _, v := range page.Views {
				pictures = append(pictures, v.Picture)
			}
			if page.Next == nil {
				break
			}
			cursor = "&cursor=" + *page.Next
		}
		pictures = pictures[:min(500, len(pictures))]
		var cold, warm []time.Duration
		start := time.Now()
		for _, p := range pictures {
			d, _ := timedGet(b, client, url+p)
			cold = append(cold, d)
		}
		coldAll := time.Since(start)
		start = time.Now()
		for _, p := range pictures {
			d, _ := timedGet(b, client, url+p)
			warm = append(warm, d)
		}
		warmAll := time.Since(start)
		p50, p99 := p50p99(cold)
		b.ReportMetric(p50, "cold-p50-ms")
		b.ReportMetric(p99, "cold-p99-ms")
		b.ReportMetric(float64(coldAll.Milliseconds()), "cold-all-ms")
		p50, p99 = p50p99(warm)
		b.ReportMetric(p50, "warm-p50-ms")
		b.ReportMetric(p99, "warm-p99-ms")
		b.ReportMetric(float64(warmAll.Milliseconds()), "warm-all-ms")
		b.ReportMetric(float64(len(pictures)), "tiles")
	})
}

// BenchmarkMapSync: the sync's time for 10,000 records (1,000 accounts of
// ten flowers each) in the fake SocialDB, every one new, over 100 stored
// snapshots; then a second run that finds every one known.
func BenchmarkMapSync(b *testing.B) {
	scale := benchScale()
	nRecords := benchFlowers / scale
	const nSnaps, perAccount = 100, 10
	fake := nearrpctest.New(b)
	db := pgtest.New(b)
	cfg, err := config.LoadConfig(func(k string) string {
		switch k {
		case "PETAL_NEAR_RPC_MAINNET", "PETAL_NEAR_RPC_TESTNET":
			return fake.URL
		}
		return ""
	})
	if err != nil {
		b.Fatal(err)
	}
	cfg.DatabaseURL = db.URL
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	svc, cleanup, err := buildService(ctx, cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)), lentPool{db.DB})
	if err != nil {
		b.Fatal(err)
	}
	defer cleanup()
	snapStore := postgres.NewSnapshotRepository(db.DB)
	readings := make([]snapshots.Snapshot, nSnaps)
	shas := make([]string, nSnaps)
	for i := range nSnaps {
		readings[i] = benchReading(i, nSnaps)
		if shas[i], _, err = snapshotsapp.StoreSnapshot(ctx, snapStore, readings[i], snapshotsapp.OriginThisSite); err != nil {
			b.Fatal(err)
		}
	}
	for a := 0; a*perAccount < nRecords; a++ {
		maker := fmt.Sprintf("maker%04d.near", a)
		tree := map[string]any{}
		for k := range perAccount {
			n := a*perAccount + k
			record, id := benchRecord(b, &readings[n%nSnaps], shas[n%nSnaps], n, maker)
			tree[id] = string(record)
		}
		args, _ := json.Marshal(map[string]any{"data": map[string]any{maker: map[string]any{"petal": map[string]any{"flower": tree}}}})
		if _, err := fake.SocialSet("social.near", maker, args); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("first", func(b *testing.B) {
		start := time.Now()
		kept, err := svc.MapSync.Run(ctx)
		if err != nil || kept != int64(nRecords) {
			b.Fatalf("kept %d of %d: %v", kept, nRecords, err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s")
		b.ReportMetric(float64(kept), "records")
	})
	b.Run("again", func(b *testing.B) {
		start := time.Now()
		kept, err := svc.MapSync.Run(ctx)
		if err != nil || kept != 0 {
			b.Fatalf("kept %d again: %v", kept, err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s")
	})
	// The floor: the same number of rows of the same size, each inserted in
	// its own transaction, four at once, with plain SQL.
	b.Run("floor-plain-inserts", func(b *testing.B) {
		if _, err := db.Pool.Exec(ctx, `CREATE TABLE bench_floor (id text PRIMARY KEY, record text NOT NULL)`); err != nil {
			b.Fatal(err)
		}
		record, _ := benchRecord(b, &readings[0], shas[0], 0, "maker0000.near")
		start := time.Now()
		g := make(chan int)
		done := make(chan struct{})
		for range 4 {
			go func() {
				for n := range g {
					if _, err := db.Pool.Exec(ctx, `INSERT INTO bench_floor (id, record) VALUES ($1, $2)`, fmt.Sprint(n), string(record)); err != nil {
						b.Error(err)
					}
				}
				done <- struct{}{}
			}()
		}
		for n := range nRecords {
			g <- n
		}
		close(g)
		for range 4 {
			<-done
		}
		b.ReportMetric(time.Since(start).Seconds(), "s")
	})
	b.Logf("SocialDB view calls: %d get_accounts_paged, %d keys, %d get", fake.CountCalls("get_accounts_paged"), fake.CountCalls("keys"), fake.CountCalls("get"))
}

// benchMarkedCards keeps a mark (a name and a symbol read from the chain, as
// a token's is) for each of the generated maps, then measures the warm list
// of cards carrying them beside a bare handler answering the same bytes, and
// the first list after one mark changed.
func benchMarkedCards(b *testing.B, svc *service, store *postgres.MapMarkRepository, client *http.Client, url string, nMaps int) {
	ctx := b.Context()
	markOf := func(i, version int) []byte {
		addr := fmt.Sprintf("dao%05d.sputnik-dao.near", i)
		m, _ := json.Marshal(maps.Mark{
			Name: &maps.MarkText{Value: fmt.Sprintf("Guild %d v%d", i, version), Status: maps.StatusRead, Source: maps.SourceChain,
				Ref: maps.ChainRef(addr, "get_config") + " name", At: "2026-11-30T12:00:00Z"},
			Symbol: &maps.MarkText{Value: fmt.Sprintf("G%d", i), Status: maps.StatusCurated, Source: maps.SourceCurated,
				Ref: maps.CuratedRef("near:mainnet:" + addr), VerifiedBy: "a benchmark", At: "2026-11-30T00:00:00Z"},
			ReadAt: "2026-11-30T12:00:00Z",
		})
		return m
	}
	for i := range nMaps {
		if err := store.Keep(ctx, ports.MarkWrite{MapID: fmt.Sprintf("near:mainnet:dao%05d.sputnik-dao.near", i), Mark: markOf(i, 1), Again: time.Hour}); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	svc.Maps.RefreshMarks(ctx)
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "load-all-marks-ms")
	_, body := timedGet(b, client, url+"/api/v1/maps")
	if !bytes.Contains(body, []byte(`"mark":{"name"`)) {
		b.Fatalf("the cards carry no mark: %.300s", body)
	}
	bare := benchServe(b, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	var petal, floor, changed []time.Duration
	for range 200 {
		d, _ := timedGet(b, client, url+"/api/v1/maps")
		petal = append(petal, d)
		d, _ = timedGet(b, client, bare)
		floor = append(floor, d)
	}
	for k := range 20 {
		if err := store.Keep(ctx, ports.MarkWrite{MapID: "near:mainnet:dao00000.sputnik-dao.near", Mark: markOf(0, k+2), Again: time.Hour}); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		svc.Maps.RefreshMarks(ctx)
		timedGet(b, client, url+"/api/v1/maps")
		changed = append(changed, time.Since(start))
	}
	p50, p99 := p50p99(petal)
	f50, f99 := p50p99(floor)
	c50, c99 := p50p99(changed)
	b.ReportMetric(p50, "p50-ms")
	b.ReportMetric(p99, "p99-ms")
	b.ReportMetric(f50, "bare-p50-ms")
	b.ReportMetric(f99, "bare-p99-ms")
	b.ReportMetric(float64(len(body)), "bytes")
	b.ReportMetric(c50, "after-a-mark-p50-ms")
	b.ReportMetric(c99, "after-a-mark-p99-ms")
}
