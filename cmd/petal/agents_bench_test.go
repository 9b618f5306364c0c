package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/people"
)

func benchEnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func freeAddr(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// scrape reads a few of a process's metrics (gauges, no labels).
func scrape(tb testing.TB, addr string, names ...string) map[string]float64 {
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if ok && slices.Contains(names, name) {
			out[name], _ = strconv.ParseFloat(value, 64)
		}
	}
	return out
}

// BenchmarkHandOutToWaiter: W workers of one person wait on two `petal serve`
// replicas (half on each) while J jobs open in bursts of 100 (as hand_job
// opens them: one transaction, then one signal); every job must be taken
// exactly once. It reports the p50 and p99 from a burst's commit starting to
// a waiter holding the job, and each server's goroutines and memory with
// every wait open. The floor, in the same run: a bare LISTEN connection
// hearing a NOTIFY sent after an INSERT commits (what any cross-replica
// wake-up costs at least).
//
//	AGENTS_BENCH_WAITERS=500 AGENTS_BENCH_JOBS=5000 go test ./cmd/petal -run '^$' -bench BenchmarkHandOutToWaiter -benchtime 1x
func BenchmarkHandOutToWaiter(b *testing.B) {
	waiters := benchEnvInt("AGENTS_BENCH_WAITERS", 100)
	jobs := benchEnvInt("AGENTS_BENCH_JOBS", 1000)
	burst := benchEnvInt("AGENTS_BENCH_BURST", 100)
	gap := time.Duration(benchEnvInt("AGENTS_BENCH_GAP_MS", 250)) * time.Millisecond
	db := pgtest.New(b)

	b.Run("floor-listen-notify", func(b *testing.B) {
		ctx := context.Background()
		_, err := db.Pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_floor (id bigint)`)
		if err != nil {
			b.Fatal(err)
		}
		conn, err := pgx.ConnectConfig(ctx, db.Pool.Config().ConnConfig.Copy())
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "LISTEN bench_floor"); err != nil {
			b.Fatal(err)
		}
		var lat []time.Duration
		for i := range max(b.N, 200) {
			start := time.Now()
			if err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, `INSERT INTO bench_floor VALUES ($1)`, i); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, `SELECT pg_notify('bench_floor', $1::text)`, strconv.Itoa(i))
				return err
			}); err != nil {
				b.Fatal(err)
			}
			if _, err := conn.WaitForNotification(ctx); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		p50, p99 := p50p99(lat)
		b.ReportMetric(p50, "p50-ms")
		b.ReportMetric(p99, "p99-ms")
	})

	b.Run(fmt.Sprintf("petal-%dwaiters-%djobs-bursts-of-%d-every-%s", waiters, jobs, burst, gap), func(b *testing.B) {
		maddr := []string{freeAddr(b), freeAddr(b)}
		procs := []*petalProcess{
			startProcess(b, db, map[string]string{"PETAL_METRICS_ADDR": maddr[0], "PETAL_LOG_LEVEL": "warn", "PETAL_DB_POOL_SIZE": os.Getenv("AGENTS_BENCH_POOL")}),
			startProcess(b, db, map[string]string{"PETAL_METRICS_ADDR": maddr[1], "PETAL_LOG_LEVEL": "warn", "PETAL_DB_POOL_SIZE": os.Getenv("AGENTS_BENCH_POOL")}),
		}
		gauges := []string{"go_goroutines", "process_resident_memory_bytes", "go_memstats_heap_inuse_bytes"}
		idle := []map[string]float64{scrape(b, maddr[0], gauges...), scrape(b, maddr[1], gauges...)}
		owner, cookie := personOnTB(b, procs[0].testPetal)
		token := agentLinkTB(b, procs[0].testPetal, cookie)
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: waiters * 2, MaxConnsPerHost: waiters * 2}}

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var mu sync.Mutex
		opened := map[string]time.Time{}
		got := map[string]int{}
		var lat []time.Duration
		var taken atomic.Int64
		var wg sync.WaitGroup
		kill := os.Getenv("AGENTS_BENCH_KILL") != ""
		var dupes atomic.Int64
		for i := range waiters {
			url := procs[i%2].URL + "/api/v1/agents/wait"
			body := fmt.Sprintf(`{"as":"Codex","worker":"w%d","wait_s":30}`, i%agentjobs.MaxWorkersPerAgent)
			if i >= agentjobs.MaxWorkersPerAgent {
				body = fmt.Sprintf(`{"as":"Codex %d","worker":"w%d","wait_s":30}`, i/agentjobs.MaxWorkersPerAgent, i%agentjobs.MaxWorkersPerAgent)
			}
			wg.Go(func() {
				for ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+token)
					res, err := client.Do(req)
					if err != nil {
						if kill && ctx.Err() == nil {
							// Its replica was killed: wait on the other one.
							url = procs[0].URL + "/api/v1/agents/wait"
							continue
						}
						return
					}
					var ans struct{ Job *struct{ ID string } }
					err = json.NewDecoder(res.Body).Decode(&ans)
					res.Body.Close()
					if err != nil || res.StatusCode != http.StatusOK {
						b.Errorf("wait: %d %v", res.StatusCode, err)
						return
					}
					if ans.Job != nil {
						now := time.Now()
						mu.Lock()
						got[ans.Job.ID]++
						again := got[ans.Job.ID] > 1
						lat = append(lat, now.Sub(opened[ans.Job.ID]))
						mu.Unlock()
						if again {
							dupes.Add(1)
							continue
						}
						if taken.Add(1) == int64(jobs) {
							cancel()
						}
					}
				}
			})
		}
		// Every wait open: what the servers hold for them.
		deadline := time.Now().Add(2 * time.Minute)
		for {
			var n int
			if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM agent_workers WHERE owner = $1 AND waiting_until > now()`, owner).Scan(&n); err != nil {
				b.Fatal(err)
			}
			if n == waiters {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d waits open", n, waiters)
			}
			time.Sleep(50 * time.Millisecond)
		}
		for i, addr := range maddr {
			open := scrape(b, addr, gauges...)
			b.Logf("replica %d: idle %.0f goroutines, %.1f MiB resident, %.1f MiB heap; with %d waits open %.0f goroutines, %.1f MiB resident, %.1f MiB heap",
				i, idle[i]["go_goroutines"], idle[i]["process_resident_memory_bytes"]/(1<<20), idle[i]["go_memstats_heap_inuse_bytes"]/(1<<20),
				waiters/2, open["go_goroutines"], open["process_resident_memory_bytes"]/(1<<20), open["go_memstats_heap_inuse_bytes"]/(1<<20))
			b.ReportMetric(open["go_goroutines"]-idle[i]["go_goroutines"], fmt.Sprintf("goroutines-per-%d-waits-r%d", waiters/2, i))
		}

		store := postgres.NewAgentJobRepository(db.DB)
		exps := postgres.NewExplorationRepository(db.DB)
		exp, _ := explorations.NewID(rand.Reader, explorations.IDPrefix)
		now := time.Now().UTC()
		if err := exps.CreateExploration(context.Background(), explorations.Exploration{ID: exp, Owner: owner, Question: "bench", CreatedAt: now, UpdatedAt: now}); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for sent := 0; sent < jobs; {
			batch := make([]agentjobs.Job, 0, burst)
			t0 := time.Now()
			for range min(burst, jobs-sent) {
				id, _ := explorations.NewID(rand.Reader, "job_")
				batch = append(batch, agentjobs.Job{ID: id, Owner: owner, Exploration: exp, Conversation: exp, Kind: "map", Title: "t", Brief: "b",
					Status: agentjobs.Open, CreatedAt: t0.UTC()})
			}
			mu.Lock()
			for _, j := range batch {
				opened[j.ID] = t0
			}
			mu.Unlock()
			err := store.Open(context.Background(), batch, explorations.Exploration{}, agentjobs.MaxOpenPerPerson)
			if err != nil {
				// Past the open cap: the waiters are behind; let them catch up.
				time.Sleep(20 * time.Millisecond)
				continue
			}
			if _, err := db.Pool.Exec(context.Background(), `SELECT pg_notify('petal_runs', 't jobs ' || $1)`, owner); err != nil {
				b.Fatal(err)
			}
			sent += len(batch)
			if kill && sent == jobs/2/burst*burst {
				// Mid-burst: replica 1 dies with its waits open; the jobs it
				// took and never answered go back to open once its lease
				// lapses (30 s), through replica 0's sweep.
				time.Sleep(time.Duration(benchEnvInt("AGENTS_BENCH_KILL_AFTER_MS", 15)) * time.Millisecond)
				_ = procs[1].cmd.Process.Kill()
				b.Logf("killed replica 1 after %d jobs", sent)
			}
			time.Sleep(gap)
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Minute):
			b.Fatalf("only %d of %d jobs taken", taken.Load(), jobs)
		}
		b.StopTimer()
		cancel()
		wg.Wait()
		if kill {
			b.ReportMetric(float64(dupes.Load()), "answered-twice")
			for id, n := range got {
				if n > 1 {
					got[id] = 1 // counted above: a kill between writing an answer and recording it
				}
			}
		}
		if len(got) != jobs {
			rows, _ := db.Pool.Query(context.Background(), `SELECT job, count(*), array_agg(coalesce(ended, '-') || '/' || (delivered_at IS NOT NULL)::text || '/' || process) FROM agent_job_takes GROUP BY job HAVING count(*) > 1 LIMIT 5`)
			for rows.Next() {
				var job string
				var n int
				var how []string
				_ = rows.Scan(&job, &n, &how)
				b.Logf("job %s: %d takes %v (answers %d)", job, n, how, got[job])
			}
			rows.Close()
			b.Fatalf("%d distinct jobs taken of %d", len(got), jobs)
		}
		for id, n := range got {
			if n != 1 {
				b.Fatalf("job %s taken %d times", id, n)
			}
		}
		p50, p99 := p50p99(lat)
		b.ReportMetric(p50, "p50-ms")
		b.ReportMetric(p99, "p99-ms")
		b.ReportMetric(float64(quantile(lat, 1).Microseconds())/1000, "max-ms")
		b.ReportMetric(float64(jobs)/b.Elapsed().Seconds(), "jobs/s")
	})
}

// personOnTB and agentLinkTB are personOn and agentLink for a benchmark.
func personOnTB(tb testing.TB, p *testPetal) (string, string) {
	id, err := people.NewPersonID(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	token, sess, err := people.NewSession(rand.Reader, id, time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.DB.Pool.Exec(ctx, `INSERT INTO people (id) VALUES ($1)`, id); err != nil {
		tb.Fatal(err)
	}
	if err := postgres.NewSessionRepository(p.DB.DB).CreateSession(ctx, sess); err != nil {
		tb.Fatal(err)
	}
	return id, "petal_session=" + token
}

func agentLinkTB(tb testing.TB, p *testPetal, cookie string) string {
	req, _ := http.NewRequest(http.MethodPost, p.URL+"/api/v1/agents/link", nil)
	req.Header.Set("Cookie", cookie)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	var made struct{ Token string }
	if err := json.NewDecoder(res.Body).Decode(&made); err != nil || made.Token == "" {
		tb.Fatalf("agent link: %d %v", res.StatusCode, err)
	}
	return made.Token
}
