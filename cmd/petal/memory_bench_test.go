package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/snapshots"
)

// BenchmarkServerPeakMemory measures what the requests cost a real
// `petal serve` process: the binary is built, started on a fresh database,
// and its peak resident memory (VmHWM in /proc, reset through clear_refs
// before each scenario) is reported as peak-MiB, beside base-MiB, its
// resident memory before. The goal is under 300 MiB for each.
//
//	go test ./cmd/petal -run '^$' -bench BenchmarkServerPeakMemory -benchtime 1x
//
// PETAL_BENCH_BINARY runs another build instead (an older petal, to compare);
// PETAL_BENCH_GOMEMLIMIT gives the server that GOMEMLIMIT.
func BenchmarkServerPeakMemory(b *testing.B) {
	bin := os.Getenv("PETAL_BENCH_BINARY")
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "petal")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
	}
	attack := attackGzip(b)
	b.Logf("the attack: %d bytes gzipped", len(attack))

	b.Run("attack", func(b *testing.B) {
		srv := startServerProcess(b, bin)
		srv.measure(b, func() {
			srv.expectPut(b, srv.exploration(b), strings.Repeat("ab", 32), attack, http.StatusBadRequest)
		})
	})
	b.Run("attack_x4", func(b *testing.B) {
		srv := startServerProcess(b, bin)
		id := srv.exploration(b)
		srv.measure(b, func() {
			parallel(4, func(int) { srv.expectPut(b, id, strings.Repeat("ab", 32), attack, http.StatusBadRequest) })
		})
	})
	// The attack's reading as if it had been stored before the limits (by a
	// build without them): what describe and the identity body cost.
	stored := func(b *testing.B, srv *serverProcess) string {
		s := snapshots.Snapshot{Schema: snapshots.Schema, Network: "near-dao-members", Params: json.RawMessage(`{"chain":"near:mainnet","dao":"x.sputnik-dao.near"}`),
			Chain: snapshots.Mainnet, Block: snapshots.Block{Height: 1, Hash: "h", Time: "2026-11-01T00:00:00Z"}, Title: "t", Groups: []snapshots.Group{},
			Accounts: []snapshots.Account{{ID: "near:mainnet:a.near", Label: "a", Weight: "1", Groups: []string{},
				Attrs: json.RawMessage(`{"zeros":[0` + strings.Repeat(",0", 16_000_000-1) + `]}`)}},
			Source: snapshots.Source{Calls: []snapshots.Call{}}}
		sha, _, err := snapshotsapp.StoreSnapshot(b.Context(), postgres.NewSnapshotRepository(srv.db.DB), s, snapshotsapp.OriginTheirMachine)
		if err != nil {
			b.Fatal(err)
		}
		return sha
	}
	b.Run("describe_x4", func(b *testing.B) {
		srv := startServerProcess(b, bin)
		sha := stored(b, srv)
		srv.measure(b, func() {
			parallel(4, func(int) { srv.expectGet(b, "/api/v1/snapshots/"+sha+"/describe", false, http.StatusOK) })
		})
	})
	b.Run("identity_body_x4", func(b *testing.B) {
		srv := startServerProcess(b, bin)
		sha := stored(b, srv)
		srv.measure(b, func() {
			parallel(4, func(int) { srv.expectGet(b, "/api/v1/snapshots/"+sha, true, http.StatusOK) })
		})
	})
	b.Run("legit_100k_x8", func(b *testing.B) {
		srv := startServerProcess(b, bin)
		id := srv.exploration(b)
		type posted struct {
			sha string
			gz  []byte
		}
		readings := make([]posted, 8)
		for i := range readings {
			sha, canonical, err := snapshots.Name(membersReading(100_000, uint64(i+1)))
			if err != nil {
				b.Fatal(err)
			}
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			_, _ = zw.Write(canonical)
			_ = zw.Close()
			readings[i] = posted{sha, buf.Bytes()}
			if i == 0 {
				b.Logf("a legitimate reading: 100,000 accounts, %d bytes canonical, %d gzipped", len(canonical), buf.Len())
			}
		}
		srv.measure(b, func() {
			parallel(len(readings), func(i int) { srv.expectPut(b, id, readings[i].sha, readings[i].gz, http.StatusOK) })
		})
	})
}

// membersReading is a DAO-members-like reading of n accounts that gzips
// under the 2 MiB a posted reading may take on the wire; seed makes each
// one a different reading.
func membersReading(n int, seed uint64) snapshots.Snapshot {
	s := snapshots.Snapshot{Schema: snapshots.Schema, Network: "near-dao-members",
		Params: json.RawMessage(`{"chain":"near:mainnet","dao":"big.sputnik-dao.near"}`), Chain: snapshots.Mainnet,
		Block: snapshots.Block{Height: 131000000 + seed, Hash: "4kbcD3NeZ7Gf8VQ5cFmLQAk1VtUTXK6wzCZnhZqK1nUj", Time: "2026-11-01T12:00:00Z"},
		Title: "Members of big.sputnik-dao.near", About: "benchmark reading",
		Groups: []snapshots.Group{{ID: "council", Label: "Council"}, {ID: "community", Label: "Community"}},
		Source: snapshots.Source{Calls: []snapshots.Call{{Contract: "big.sputnik-dao.near", Method: "get_policy"}}}}
	for i := range n {
		id := fmt.Sprintf("m%06d.near", i)
		groups := []string{"community"}
		if i%50 == 0 {
			groups = []string{"council", "community"}
		}
		s.Accounts = append(s.Accounts, snapshots.Account{ID: "near:mainnet:" + id, Label: id, Weight: strconv.Itoa(1 + i%3), Groups: groups})
	}
	return s
}

type serverProcess struct {
	cmd    *exec.Cmd
	url    string
	db     *pgtest.DB
	client *http.Client
}

func startServerProcess(b *testing.B, bin string) *serverProcess {
	b.Helper()
	db := pgtest.New(b)
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+db.URL, "PETAL_ADDR=127.0.0.1:0", "PETAL_LOG_FORMAT=json",
		"PETAL_TOOL_CALLS_PER_MIN=10000", "PETAL_POSTED_SNAPSHOTS_PER_DAY=10000")
	if v := os.Getenv("PETAL_BENCH_GOMEMLIMIT"); v != "" {
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+v)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "petal is serving" {
				addr <- line.Addr
			}
		}
	}()
	select {
	case a := <-addr:
		jar, _ := cookiejar.New(nil)
		return &serverProcess{cmd: cmd, url: a, db: db,
			client: &http.Client{Jar: jar, Transport: &http.Transport{DisableCompression: true}}}
	case <-time.After(2 * time.Minute):
		b.Fatal("petal serve did not start")
	}
	return nil
}

// measure runs work b.N times and reports the server's peak resident memory.
func (s *serverProcess) measure(b *testing.B, work func()) {
	b.Helper()
	pid := strconv.Itoa(s.cmd.Process.Pid)
	time.Sleep(time.Second) // let the start settle before the baseline
	base := procStatus(b, pid, "VmRSS")
	// Writing 5 resets the peak (VmHWM) to the current resident size.
	if err := os.WriteFile("/proc/"+pid+"/clear_refs", []byte("5"), 0); err != nil {
		b.Fatalf("reset the peak: %v", err)
	}
	b.ResetTimer()
	for range b.N {
		work()
	}
	b.StopTimer()
	peak := procStatus(b, pid, "VmHWM")
	b.ReportMetric(float64(base)/(1<<20), "base-MiB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
}

func procStatus(b *testing.B, pid, field string) int64 {
	b.Helper()
	raw, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/%s/status", field, pid)
	return 0
}

func (s *serverProcess) exploration(b *testing.B) string {
	b.Helper()
	res, err := s.client.Post(s.url+"/api/v1/explorations", "application/json", strings.NewReader(`{"question":"memory"}`))
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var out struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || out.ID == "" {
		b.Fatalf("start_exploration: %d %v", res.StatusCode, err)
	}
	return out.ID
}

func (s *serverProcess) expectPut(b *testing.B, id, sha string, gz []byte, want int) {
	req, _ := http.NewRequest(http.MethodPut, s.url+"/api/v1/explorations/"+id+"/snapshots/"+sha, bytes.NewReader(gz))
	req.Header.Set("Content-Encoding", "gzip")
	s.expect(b, req, want)
}

func (s *serverProcess) expectGet(b *testing.B, path string, identity bool, want int) {
	req, _ := http.NewRequest(http.MethodGet, s.url+path, nil)
	if !identity {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	s.expect(b, req, want)
}

func (s *serverProcess) expect(b *testing.B, req *http.Request, want int) {
	res, err := s.client.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<10))
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != want {
		b.Errorf("%s %s: %d, want %d: %s", req.Method, req.URL.Path, res.StatusCode, want, body)
	}
}

func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}
