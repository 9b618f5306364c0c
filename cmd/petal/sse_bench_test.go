package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
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
	"github.com/petal-near/petal/app/jobsapp"
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
	fanoutBurst   = 200 // events appended in a burst
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
		t := time.NewTicker(jobsapp.LeaseEvery)
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
	// floor: the paced events fanned out by a bare net/http server in this
	// process from one channel per viewer, the same viewers reading it.
	for _, pace := range []time.Duration{0, 50 * time.Millisecond} {
		name := "burst"
		if pace > 0 {
			name = "paced-20-per-s"
		}
		b.Run(name, func(b *testing.B) { benchFanout(b, pace) })
	}
	b.Run("paced-20-per-s-bare-floor", func(b *testing.B) {
		for range b.N {
			benchFanoutFloor(b, 50*time.Millisecond)
		}
	})
}

// fanout is one fan-out run to measure: where viewers connect, how an event
// is appended (its seq), and how the stream is ended (the last seq).
type fanout struct {
	url    string
	append func(i int) (int64, error)
	end    func() (int64, error)
}

// connectViewers connects fanoutViewers viewers to url at once and returns
// when every one is live; they read until ctx ends or the stream does.
func connectViewers(b *testing.B, ctx context.Context, url string) []*viewer {
	b.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: fanoutViewers, DisableCompression: true}}
	viewers := make([]*viewer, fanoutViewers)
	var wg sync.WaitGroup
	errc := make(chan error, fanoutViewers)
	for i := range viewers {
		wg.Go(func() {
			v, err := follow(ctx, client, url)
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
		b.Fatal(err)
	}
	return viewers
}

// measureFanout connects fanoutViewers viewers to f, appends events at pace
// (0: as fast as it can), ends the stream, and reports what the viewers saw;
// between is called once every viewer is live, before the first append.
func measureFanout(b *testing.B, f fanout, events int, pace time.Duration, between func()) {
	vctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	viewers := connectViewers(b, vctx, f.url)
	if between != nil {
		between()
	}
	appended := make([]time.Time, events+2)
	start := time.Now()
	for i := 1; i <= events; i++ {
		if pace > 0 {
			time.Sleep(pace)
		}
		seq, err := f.append(i)
		if err != nil {
			b.Fatal(err)
		}
		appended[seq] = time.Now()
	}
	last, err := f.end()
	if err != nil {
		b.Fatal(err)
	}
	appended[last] = time.Now()
	for _, v := range viewers {
		<-v.done
	}
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
	// The issue's own measure: for each event, how far the slowest viewer
	// read it behind the fastest; the worst event and the median.
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
}

func fanoutEvents(pace time.Duration) int {
	if pace > 0 {
		return 60
	}
	return fanoutBurst
}

func benchFanout(b *testing.B, pace time.Duration) {
	for range b.N {
		db := pgtest.New(b)
		p := startProcess(b, db, benchViewersEnv)
		pid := p.cmd.Process.Pid
		store := postgres.NewRunRepository(db.DB)
		ctx := context.Background()
		benchLease(b, db)
		id := "run_fanout"
		if _, err := store.Create(ctx, runs.Run{ID: id, Model: "recorded", ProcessID: "proc_bench"},
			runs.Make(runs.KindRun, runs.RunData{RunID: id, ResumeURL: runs.ResumeURL(id)})); err != nil {
			b.Fatal(err)
		}
		idle := rssKiB(pid)
		var connected int64
		measureFanout(b, fanout{
			url: p.URL + "/api/v1/agent/runs/" + id,
			append: func(i int) (int64, error) {
				return store.Append(ctx, id, runs.Make(runs.KindProgress, runs.ProgressData{Stage: runs.StageFetching, Message: fmt.Sprintf("page %d", i)}))
			},
			end: func() (int64, error) {
				return store.End(ctx, id, runs.Done, runs.Make(runs.KindDone, runs.DoneData{Model: "recorded"}))
			},
		}, fanoutEvents(pace), pace, func() { connected = rssKiB(pid) })
		b.ReportMetric(float64(idle)/1024, "rss-idle-MiB")
		b.ReportMetric(float64(connected)/1024, "rss-1000-viewers-MiB")
		b.ReportMetric(float64(rssKiB(pid))/1024, "rss-peak-MiB")
	}
}

// bareFanout is the floor: a bare net/http server that writes each event's
// frame, made once, to every viewer from the viewer's own goroutine.
type bareFanout struct {
	mu   sync.Mutex
	subs []chan []byte
}

func (f *bareFanout) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	ch := make(chan []byte, 256)
	f.mu.Lock()
	f.subs = append(f.subs, ch)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher := w.(http.Flusher)
	_, _ = io.WriteString(w, "event: live\ndata: {}\n\n")
	flusher.Flush()
	for frame := range ch {
		if _, err := w.Write(frame); err != nil {
			return
		}
		flusher.Flush()
	}
}

func (f *bareFanout) publish(frame []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ch := range f.subs {
		ch <- frame
	}
}

func (f *bareFanout) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ch := range f.subs {
		close(ch)
	}
	f.subs = nil
}

func benchFanoutFloor(b *testing.B, pace time.Duration) {
	f := &bareFanout{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	// A frame the size of petal's progress events.
	frame := func(seq int64, kind, data string) []byte {
		return fmt.Appendf(nil, "id: %d\nevent: %s\ndata: {\"seq\":%d,\"at\":%q,\"kind\":%q,\"data\":%s}\n\n",
			seq, kind, seq, time.Now().UTC().Format(time.RFC3339Nano), kind, data)
	}
	measureFanout(b, fanout{
		url: "http://" + ln.Addr().String() + "/",
		append: func(i int) (int64, error) {
			f.publish(frame(int64(i), "progress", fmt.Sprintf(`{"stage":"fetching","message":"page %d"}`, i)))
			return int64(i), nil
		},
		end: func() (int64, error) {
			last := int64(fanoutEvents(pace) + 1)
			f.publish(frame(last, "done", `{"model":"recorded"}`))
			f.close()
			return last, nil
		},
	}, fanoutEvents(pace), pace, nil)
}

func BenchmarkReplay10k(b *testing.B) {
	db := pgtest.New(b)
	p := startProcess(b, db, benchViewersEnv)
	store := postgres.NewRunRepository(db.DB)
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
		store := postgres.NewRunRepository(db.DB)
		ctx := context.Background()
		benchLease(b, db)
		id := "run_idle"
		if _, err := store.Create(ctx, runs.Run{ID: id, Model: "recorded", ProcessID: "proc_bench"},
			runs.Make(runs.KindRun, runs.RunData{RunID: id, ResumeURL: runs.ResumeURL(id)})); err != nil {
			b.Fatal(err)
		}
		vctx, cancel := context.WithCancel(ctx)
		viewers := connectViewers(b, vctx, p.URL+"/api/v1/agent/runs/"+id)
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
