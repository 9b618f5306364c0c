package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

// Three `petal serve` processes on one database share one allowance per
// address: 61 tool calls spread over them, the 61st is refused. Every call
// carries another cf-connecting-ip, which the processes don't believe (the
// test's client is no trusted proxy), so rotating it changes nothing.
func TestToolCallLimitHoldsAcrossThreeReplicas(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	var replicas []*petalProcess
	for range 3 {
		replicas = append(replicas, startProcess(t, db, nil)) // PETAL_LIMITS unset: postgres on DATABASE_URL
	}
	for i := range 60 {
		p := replicas[i%3]
		res, body := p.do(t, http.MethodGet, "/api/v1/networks", "", "Cf-Connecting-Ip", fmt.Sprintf("203.0.113.%d", i+1))
		require.Equal(t, http.StatusOK, res.StatusCode, "call %d on replica %d: %s", i+1, i%3, body)
	}
	res, body := replicas[60%3].do(t, http.MethodGet, "/api/v1/networks", "", "Cf-Connecting-Ip", "198.51.100.61")
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, "the 61st call: %s", body)
	e := jsonOf(t, body)
	assert.Equal(t, "rate_limited", errorCode(e))
	retry := e["error"].(map[string]any)["retry_after_s"].(float64)
	assert.True(t, retry >= 1 && retry <= 60, "retry_after_s within the minute: %v", retry)
	for i, p := range replicas {
		res, body := p.do(t, http.MethodGet, "/api/v1/networks", "")
		assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, "replica %d after the 61st: %s", i, body)
	}
}

// The fresh-read slots are the site's, not a process's: two processes, two
// slots, one per address, whichever process a request reaches.
func TestFreshReadSlotsAreSharedByReplicas(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	fake := nearrpctest.New(t)
	fake.Inject(nearrpctest.Fault{Function: "get_policy", Hang: true})
	env := map[string]string{
		"PETAL_NEAR_RPC_MAINNET":     fake.URL,
		"PETAL_TOOL_CALLS_PER_MIN":   "1000",
		"PETAL_FRESH_READS":          "2",
		"PETAL_FRESH_READ_TIMEOUT_S": "6",
		// The test's client stands for the proxy, so each request says its address.
		"PETAL_TRUSTED_PROXIES": "127.0.0.1",
	}
	a := startProcess(t, db, env)
	b := startProcess(t, db, env)
	const hangs = `{"network":"near-dao-members","params":{"dao":"marketing"},"fresh":true}`
	const answers = `{"network":"near-staking-pool","params":{"pool":"astro-stakers.poolv1.near"},"fresh":true}`
	var wg sync.WaitGroup
	held := make([]int, 2)
	wg.Go(func() { held[0], _ = a.getSnapshotFrom(t, "198.51.100.1", hangs) })
	for fake.CountCalls("get_policy") < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	status, out := b.getSnapshotFrom(t, "198.51.100.1", answers)
	assert.Equal(t, http.StatusTooManyRequests, status, "one address, another replica: %v", out)
	assert.Contains(t, errorMessage(out), "one at a time")

	wg.Go(func() { held[1], _ = b.getSnapshotFrom(t, "198.51.100.2", hangs) })
	for fake.CountCalls("get_policy") < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	status, out = a.getSnapshotFrom(t, "198.51.100.3", answers)
	assert.Equal(t, http.StatusTooManyRequests, status, "both slots held, one on each replica: %v", out)
	assert.Contains(t, errorMessage(out), "2 fresh reads are running already")
	retry := out["error"].(map[string]any)["retry_after_s"].(float64)
	assert.True(t, retry >= 1 && retry <= 10, "a short retry_after_s: %v", retry)

	wg.Wait()
	assert.Equal(t, []int{http.StatusServiceUnavailable, http.StatusServiceUnavailable}, held, "the held reads end at their deadline")
	status, out = a.getSnapshotFrom(t, "198.51.100.3", answers)
	assert.Equal(t, http.StatusOK, status, "the slots are free again: %v", out)
}

// Slow-body clients (a byte every 5 s) are cut at PETAL_BODY_TIMEOUT_S, while
// a chat's event stream, which outlasts that deadline, is not.
func TestSlowBodiesAreCutAndStreamsAreNot(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	p := startProcess(t, db, map[string]string{"PETAL_BODY_TIMEOUT_S": "2", "PETAL_RECORDED_PACE_MS": "1000"})
	// The chat's stream starts first and runs for several seconds.
	chat := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt)

	const clients = 200
	addr := strings.TrimPrefix(p.URL, "http://")
	var cut, whole atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			switch slowPost(t, addr, "/api/v1/specs/validate", 100, 5*time.Second) {
			case true:
				cut.Add(1)
			default:
				whole.Add(1)
			}
		})
	}
	// Served while the slow clients hang on.
	res, body := p.do(t, http.MethodGet, "/api/v1/health", "")
	assert.Equal(t, http.StatusOK, res.StatusCode, body)

	evs := chat.rest(t)
	require.NotEmpty(t, evs)
	assert.Equal(t, "done", evs[len(evs)-1].Name, "the stream ran to its end: %v", names(evs))
	wg.Wait()
	assert.EqualValues(t, clients, cut.Load(), "every slow body was cut before it was whole")
	assert.Zero(t, whole.Load())
}

// slowPost sends a POST whose body of n bytes comes a byte every gap, and
// reports whether the server ended the request (an answer, or the connection
// closed) before the body was whole.
func slowPost(t *testing.T, addr, path string, n int, gap time.Duration) (cut bool) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return false
	}
	defer conn.Close()
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: petal\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", path, n)
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Error(err)
		return false
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
		if res, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
			res.Body.Close()
		}
	}()
	for sent := 1; sent < n; sent++ {
		select {
		case <-ended:
			return true
		case <-time.After(gap):
		}
		if _, err := conn.Write([]byte(" ")); err != nil {
			return true
		}
	}
	return false
}

// One address holds at most PETAL_SSE_PER_ADDRESS event streams open on a
// process; past it, 429 (a chat's stream refused starts no run), while other
// addresses stream on; a stream closed frees its place.
func TestOpenStreamsAreCappedPerAddress(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_SSE_PER_ADDRESS": "2", "PETAL_RECORDED_PACE_MS": "2000", "PETAL_TRUSTED_PROXIES": "127.0.0.1"})
	id := startRun(t, p)
	path := "/api/v1/agent/runs/" + id
	first := p.openSSE(t, http.MethodGet, path, "", "Cf-Connecting-Ip", "198.51.100.1")
	p.openSSE(t, http.MethodGet, path, "", "Cf-Connecting-Ip", "198.51.100.1")

	res, body := p.do(t, http.MethodGet, path, "", "Accept", "text/event-stream", "Cf-Connecting-Ip", "198.51.100.1")
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Equal(t, "rate_limited", errorCode(jsonOf(t, body)))
	assert.NotEmpty(t, res.Header.Get("Retry-After"))

	var before, after int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM runs`).Scan(&before))
	res, body = p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "text/event-stream", "Content-Type", "application/json", "Cf-Connecting-Ip", "198.51.100.1")
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM runs`).Scan(&after))
	assert.Equal(t, before, after, "a refused stream started no chat")
	// Asking for JSON needs no stream.
	res, body = p.do(t, http.MethodGet, path, "", "Cf-Connecting-Ip", "198.51.100.1")
	assert.Equal(t, http.StatusOK, res.StatusCode, body)

	p.openSSE(t, http.MethodGet, path, "", "Cf-Connecting-Ip", "198.51.100.2")

	first.close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, body = p.do(t, http.MethodGet, path, "", "Accept", "text/event-stream", "Cf-Connecting-Ip", "198.51.100.1")
		if res.StatusCode == http.StatusOK {
			break
		}
		require.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
		require.True(t, time.Now().Before(deadline), "a closed stream never freed its place")
		time.Sleep(50 * time.Millisecond)
	}
}

// A replica counts an address's calls within its share of the limit in its
// own memory, asking the database nothing per call; when it stops (SIGTERM)
// it gives up its lease, but its claim on the limit stays until the windows
// counted under it have closed, so the calls it allowed still count for the
// replicas that go on.
func TestAStoppedReplicasCallsStillCount(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	p := startProcess(t, db, map[string]string{"PETAL_TOOL_CALLS_PER_MIN": "100000"})
	count := func(query string) int {
		var n int
		require.NoError(t, db.Pool.QueryRow(t.Context(), query).Scan(&n))
		return n
	}
	for range 200 {
		res, body := p.do(t, http.MethodGet, "/api/v1/networks", "")
		require.Equal(t, http.StatusOK, res.StatusCode, body)
	}
	assert.Zero(t, count(`SELECT coalesce(sum(count), 0) FROM rate_limits WHERE key LIKE 'tools:%'`),
		"200 calls within the replica's share are counted in its memory")
	require.Equal(t, 1, count(`SELECT count(*) FROM rate_limit_replicas`), "its lease")
	require.Positive(t, count(`SELECT count(*) FROM rate_limit_claims WHERE until > now()`), "its claim on the limit")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	require.NoError(t, p.cmd.Wait())
	assert.Zero(t, count(`SELECT count(*) FROM rate_limit_replicas`), "the lease is given up at shutdown")
	assert.Positive(t, count(`SELECT count(*) FROM rate_limit_claims WHERE until > now()`),
		"its claim stays until its windows close: what it allowed still counts")
}
