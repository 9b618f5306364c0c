package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// Load measurements of runs over SSE, on loopback only and bounded:
//
//	go test ./cmd/petal -run '^$' -bench 'SSEFanout|Replay' -benchtime 1x
//
// BenchmarkSSEFanout: 1,000 viewers follow one live run served by a real
// `petal serve` process; events are appended from here one by one. It reports
// events delivered per second (all viewers together), the slowest viewer's
// lag (append committed → event read), the spread (for each event, the
// slowest viewer's read behind the fastest's: the worst event and the
// median), and the server's resident memory.
// BenchmarkReplay10k: one viewer asks for a 10,000-event run from seq 0; the
// time until its live marker.

// benchViewersEnv lets the benchmarks' viewers, all on one address, past the
// per-address cap on open streams (PETAL_SSE_PER_ADDRESS, 20 by default).
var benchViewersEnv = map[string]string{"PETAL_SSE_PER_ADDRESS": "5000"}

const (
	fanoutViewers = 1000
	fanoutEvents  = 200
)

// viewer reads one SSE stream and notes when each seq arrived.
type viewer struct {
	got  map[int64]time.Time
	live chan struct{}
	done chan struct{}
}

func follow(ctx context.Context, client *http.Client, url string) (*viewer, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return nil, fmt.Errorf("status %d", res.StatusCode)
	}
	v := &viewer{got: map[int64]time.Time{}, live: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(v.done)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		var id string
		var name string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				id = line[4:]
			case strings.HasPrefix(line, "event: "):
				name = line[7:]
			case line == "":
				if name == "live" {
					close(v.live)
				} else if id != "" {
					seq, _ := strconv.ParseInt(id, 10, 64)
					v.got[seq] = time.Now()
				}
				id, name = "", ""
			}
		}
	}()
	return v, nil
}

// benchLease keeps a lease beating for proc_bench, the process the
// benchmarks' runs say they are held by, so the served process's sweep
// leaves them running.
func benchLease(b *testing.B, db *pgtest.DB) {
	b.Helper()
	leases := postgres.NewLeases(db.DB)
	p := ports.Process{ID: "proc_bench", Hostname: "bench", PID: os.Getpid(), BuildID: "bench"}
	if err := leases.Register(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(app.LeaseEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = leases.Heartbeat(ctx, p.ID)
			}
		}
	}()
	b.Cleanup(func() { cancel(); <-done })
}

func rssKiB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			n, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return n
		}
	}
	return -1
}

func BenchmarkSSEFanout(b *testing.B) {
	// burst: appends as fast as one writer can; paced: 20 events a second,
	// as a chat's progress comes, to show the lag when the fan-out keeps up.
	for _, pace := range []time.Duration{0, 50 * time.Millisecond} {
		name := "burst"
		if pace > 0 {
			name = "paced-20-per-s"
		}
		b.Run(name, func(b *testing.B) { benchFanout(b, pace) })
	}
}

func benchFanout(b *testing.B, pace time.Duration) {
	for range b.N {
		db := pgtest.New(b)
		p := startProcess(b, db, benchViewersEnv)
		pid := p.cmd.Process.Pid
		store := postgres.NewRunStore(db.DB)
		ctx := context.Background()
		benchLease(b, db)
		id := "run_fanout"
		if _, err := store.Create(ctx, runs.Run{ID: id, Model: "recorded", ProcessID: "proc_bench"},
			runs.Make(runs.KindRun, runs.RunData{RunID: id, ResumeURL: runs.ResumeURL(id)})); err != nil {
			b.Fatal(err)
		}
		idle := rssKiB(pid)
		client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: fanoutViewers, DisableCompression: true}}
		vctx, cancel := context.WithCancel(ctx)
		viewers := make([]*viewer, fanoutViewers)
		var wg sync.WaitGroup
		errc := make(chan error, fanoutViewers)
		for i := range viewers {
			wg.Go(func() {
				v, err := follow(vctx, client, p.URL+"/api/v1/agent/runs/"+id)
				if err != nil {
					errc <- err
					return
				}
				viewers[i] = v
				<-v.live
			})
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			cancel()
			b.Fatal(err)
		}
		connected := rssKiB(pid)

		appended := make([]time.Time, fanoutEvents+2)
		start := time.Now()
		events := fanoutEvents
		if pace > 0 {
			events = 60
		}
		for i := 1; i <= events; i++ {
			if pace > 0 {
				time.Sleep(pace)
			}
			seq, err := store.Append(ctx, id, runs.Make(runs.KindProgress, runs.ProgressData{Stage: runs.StageFetching, Message: fmt.Sprintf("page %d", i)}))
			if err != nil {
				b.Fatal(err)
			}
			appended[seq] = time.Now()
		}
		last, err := store.End(ctx, id, runs.Done, runs.Make(runs.KindDone, runs.DoneData{Model: "recorded"}))
		if err != nil {
			b.Fatal(err)
		}
		appended[last] = time.Now()
		peak := rssKiB(pid)
		for _, v := range viewers {
			<-v.done
		}
		cancel()
		var delivered int
		var lastRead time.Time
		var lags []time.Duration
		for _, v := range viewers {
			var worst time.Duration
			for seq := int64(1); seq <= last; seq++ {
				at, ok := v.got[seq]
				if !ok {
					b.Fatalf("a viewer missed seq %d", seq)
				}
				delivered++
				worst = max(worst, at.Sub(appended[seq]))
				if at.After(lastRead) {
					lastRead = at
				}
			}
			lags = append(lags, worst)
		}
		slices.Sort(lags)
		// The issue's own measure: for each event, how far the slowest
		// viewer read it behind the fastest; the worst event and the median.
		var spreads []time.Duration
		for seq := int64(1); seq <= last; seq++ {
			first, latest := viewers[0].got[seq], viewers[0].got[seq]
			for _, v := range viewers[1:] {
				at := v.got[seq]
				if at.Before(first) {
					first = at
				}
				if at.After(latest) {
					latest = at
				}
			}
			spreads = append(spreads, latest.Sub(first))
		}
		slices.Sort(spreads)
		b.ReportMetric(float64(spreads[len(spreads)-1].Microseconds())/1000, "worst-spread-ms")
		b.ReportMetric(float64(spreads[len(spreads)/2].Microseconds())/1000, "median-spread-ms")
		elapsed := lastRead.Sub(start)
		b.ReportMetric(float64(delivered)/elapsed.Seconds(), "delivered/s")
		b.ReportMetric(float64(last)/appended[last].Sub(start).Seconds(), "appended/s")
		b.ReportMetric(float64(lags[len(lags)-1].Milliseconds()), "slowest-lag-ms")
		b.ReportMetric(float64(lags[len(lags)/2].Milliseconds()), "median-viewer-lag-ms")
		b.ReportMetric(float64(idle)/1024, "rss-idle-MiB")
		b.ReportMetric(float64(connected)/1024, "rss-1000-viewers-MiB")
		b.ReportMetric(float64(peak)/1024, "rss-peak-MiB")
	}
}

func BenchmarkReplay10k(b *testing.B) {
	db := pgtest.New(b)
	p := startProcess(b, db, benchViewersEnv)
	store := postgres.NewRunStore(db.DB)
	ctx := context.Background()
	benchLease(b, db)
	id := "run_replay"
	if _, err := store.Create(ctx, runs.Run{ID: id, Model: "recorded", ProcessID: "proc_bench"},
		runs.Make(runs.KindRun, runs.RunData{RunID: id, ResumeURL: runs.ResumeURL(id)})); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 10_000-1; i += 1000 {
		batch := make([]runs.NewEvent, 0, 1000)
		for j := i; j < min(i+1000, 10_000-1); j++ {
			batch = append(batch, runs.Make(runs.KindToolResult, runs.ToolResultData{ID: fmt.Sprintf("call_%d", j), Name: "get_snapshot", OK: true,
				Summary: "7 accounts in 2 groups (council 3, community 4), total weight 7", MS: 12}))
		}
		if _, err := store.Append(ctx, id, batch...); err != nil {
			b.Fatal(err)
		}
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	b.ResetTimer()
	var total time.Duration
	for range b.N {
		vctx, cancel := context.WithCancel(ctx)
		start := time.Now()
		v, err := follow(vctx, client, p.URL+"/api/v1/agent/runs/"+id+"?from=0")
		if err != nil {
			b.Fatal(err)
		}
		<-v.live
		total += time.Since(start)
		cancel()
		<-v.done
		if len(v.got) != 10_000 {
			b.Fatalf("replayed %d events, not 10,000", len(v.got))
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-live")
}

// BenchmarkIdleViewers: 1,000 viewers follow one run that stays quiet, on a
// real `petal serve` process; it reports the database's transactions per
// second meanwhile (pg_stat_database.xact_commit over 30 s, from 15 s after they connected), the process's
// own lease, sweep and job polls included:
//
//	go test ./cmd/petal -run '^$' -bench 'IdleViewers' -benchtime 1x
func BenchmarkIdleViewers(b *testing.B) {
	for range b.N {
		db := pgtest.New(b)
		p := startProcess(b, db, benchViewersEnv)
		store := postgres.NewRunStore(db.DB)
		ctx := context.Background()
		benchLease(b, db)
		id := "run_idle"
		if _, err := store.Create(ctx, runs.Run{ID: id, Model: "recorded", ProcessID: "proc_bench"},
			runs.Make(runs.KindRun, runs.RunData{RunID: id, ResumeURL: runs.ResumeURL(id)})); err != nil {
			b.Fatal(err)
		}
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: fanoutViewers, DisableCompression: true}}
		vctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		errc := make(chan error, fanoutViewers)
		viewers := make([]*viewer, fanoutViewers)
		for i := range viewers {
			wg.Go(func() {
				v, err := follow(vctx, client, p.URL+"/api/v1/agent/runs/"+id)
				if err != nil {
					errc <- err
					return
				}
				viewers[i] = v
				<-v.live
			})
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			cancel()
			b.Fatal(err)
		}
		commits := func() int64 {
			var n int64
			if err := db.Pool.QueryRow(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
				b.Fatal(err)
			}
			return n
		}
		time.Sleep(15 * time.Second) // past the viewers' connecting reads, whose counts reach the statistics late
		before, start := commits(), time.Now()
		time.Sleep(30 * time.Second)
		after, took := commits(), time.Since(start)
		cancel()
		for _, v := range viewers {
			<-v.done
		}
		b.ReportMetric(float64(after-before)/took.Seconds(), "xact/s")
	}
}
