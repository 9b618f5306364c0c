package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/blobstore"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/app/snapshotsapp"
)

// chainPetal is petal reading "mainnet" from a fake NEAR RPC node that
// answers from the recordings (hand-made in the real wire shape).
func chainPetal(t *testing.T, env map[string]string) (*testPetal, *nearrpctest.Server) {
	t.Helper()
	fake := nearrpctest.New(t)
	all := map[string]string{
		"PETAL_NEAR_RPC_MAINNET":   fake.URL,
		"PETAL_TOOL_CALLS_PER_MIN": "1000",
		"PETAL_NEAR_PAGE_SIZE":     "2", // so every paged read pages past one page
	}
	for k, v := range env {
		all[k] = v
	}
	return startPetal(t, all), fake
}

func jsonOf(t *testing.T, body string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	return m
}

func (p *testPetal) getSnapshot(t *testing.T, body string) (int, map[string]any) {
	t.Helper()
	res, out := p.do(t, http.MethodPost, "/api/v1/snapshots", body, "Accept", "application/json")
	return res.StatusCode, jsonOf(t, out)
}

// getSnapshotFrom is getSnapshot from address, as a trusted proxy
// (PETAL_TRUSTED_PROXIES covering the test's client) says with cf-connecting-ip.
func (p *testPetal) getSnapshotFrom(t *testing.T, address, body string) (int, map[string]any) {
	t.Helper()
	res, out := p.do(t, http.MethodPost, "/api/v1/snapshots", body, "Accept", "application/json", "Cf-Connecting-Ip", address)
	return res.StatusCode, jsonOf(t, out)
}

// body fetches a snapshot's canonical JSON, plain.
func (p *testPetal) body(t *testing.T, sha string) map[string]any {
	t.Helper()
	res, out := p.do(t, http.MethodGet, "/api/v1/snapshots/"+sha, "", "Accept-Encoding", "identity")
	require.Equal(t, http.StatusOK, res.StatusCode, out)
	sum := sha256.Sum256([]byte(out))
	require.Equal(t, sha, hex.EncodeToString(sum[:]), "the body is named by its SHA-256")
	return jsonOf(t, out)
}

func (p *testPetal) storedCount(t *testing.T, sha string) int {
	t.Helper()
	var n int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM snapshots WHERE sha256 = $1`, sha).Scan(&n))
	return n
}

func accountsByID(t *testing.T, snap map[string]any) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, a := range snap["accounts"].([]any) {
		m := a.(map[string]any)
		out[m["id"].(string)] = m
	}
	return out
}

func errorCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func errorMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	msg, _ := e["message"].(string)
	return msg
}

func TestEachReaderOnRecordedAnswers(t *testing.T) {
	t.Parallel()
	p, fake := chainPetal(t, nil)

	t.Run("near-dao-members: the same reading as the snapshot shipped inside petal, stored once", func(t *testing.T) {
		shipped := snapshotsapp.ShippedSnapshots()[0].SHA256
		require.Equal(t, 1, p.storedCount(t, shipped), "the shipped snapshot is stored at start")
		status, out := p.getSnapshot(t, `{"network":"near-dao-members","params":{"dao":"marketing"},"fresh":true}`)
		require.Equal(t, http.StatusOK, status, out)
		assert.Equal(t, shipped, out["sha256"], "same reading, same name")
		assert.Equal(t, false, out["stored_only"])
		assert.EqualValues(t, 6, out["count"])
		assert.Equal(t, "Members of marketing.sputnik-dao.near", out["title"])
		assert.Equal(t, `near-dao-members{"chain":"near:mainnet","dao":"marketing.sputnik-dao.near"}`, out["target_key"])
		assert.Equal(t, "2026-11-01T12:00:00Z", out["as_of"])
		assert.Contains(t, out["summary"], "6 accounts in 2 groups (council 3, community 4)")
		assert.NotContains(t, out, "accounts", "never the whole body")
		assert.Equal(t, 1, p.storedCount(t, shipped), "the same snapshot twice is stored once")
	})

	t.Run("near-dao-proposals: pages past one page; votes weigh", func(t *testing.T) {
		before := fake.CountCalls("get_proposals")
		status, out := p.getSnapshot(t, `{"network":"near-dao-proposals","params":{"dao":"marketing.sputnik-dao.near"},"fresh":true}`)
		require.Equal(t, http.StatusOK, status, out)
		assert.Equal(t, 3, fake.CountCalls("get_proposals")-before, "5 proposals in pages of 2")
		snap := p.body(t, out["sha256"].(string))
		accts := accountsByID(t, snap)
		require.Len(t, accts, 6)
		alice := accts["near:mainnet:alice.near"]
		assert.Equal(t, "3", alice["weight"], "alice voted on proposals 0, 1 and 3")
		assert.Equal(t, []any{"approve", "reject", "proposer"}, alice["groups"])
		assert.Equal(t, map[string]any{"0": "Approve", "1": "Approve", "3": "Reject"}, alice["attrs"].(map[string]any)["votes"])
		assert.Equal(t, "0", accts["near:mainnet:frank.near"]["weight"], "frank proposed but never voted")
		detail := snap["detail"].(map[string]any)
		assert.Len(t, detail["proposals"], 5, "each proposal is kept in detail")
		calls := snap["source"].(map[string]any)["calls"].([]any)
		assert.Equal(t, map[string]any{"contract": "marketing.sputnik-dao.near", "method": "get_proposals", "pages": float64(3)}, calls[2])
	})

	t.Run("near-staking-pool: pages, staked NEAR exact, withdrawing accounts left out", func(t *testing.T) {
		before := fake.CountCalls("get_accounts")
		status, out := p.getSnapshot(t, `{"network":"near-staking-pool","params":{"pool":"astro-stakers.poolv1.near"}}`)
		require.Equal(t, http.StatusOK, status, out)
		assert.Equal(t, 3, fake.CountCalls("get_accounts")-before)
		accts := accountsByID(t, p.body(t, out["sha256"].(string)))
		require.Len(t, accts, 4)
		assert.NotContains(t, accts, "near:mainnet:leaver.near")
		assert.Equal(t, "1200", accts["near:mainnet:whale.near"]["weight"])
		assert.Equal(t, "350.5", accts["near:mainnet:alice.near"]["weight"])
		assert.Equal(t, "1.000000000000000000000001", accts["near:mainnet:bob.near"]["weight"], "one yoctoNEAR kept exactly")
		assert.Equal(t, []any{"staking", "unstaking"}, accts["near:mainnet:alice.near"]["groups"])
	})

	t.Run("near-ft-balances over a list, in whole tokens", func(t *testing.T) {
		status, out := p.getSnapshot(t, `{"network":"near-ft-balances","params":{"token":"usdt.tether-token.near","accounts":["carol.near","alice.near","near:mainnet:bob.near","alice.near"]}}`)
		require.Equal(t, http.StatusOK, status, out)
		snap := p.body(t, out["sha256"].(string))
		assert.Equal(t, map[string]any{"accounts": []any{"alice.near", "bob.near", "carol.near"}, "chain": "near:mainnet", "token": "usdt.tether-token.near"}, snap["params"])
		accts := accountsByID(t, snap)
		assert.Equal(t, "1250", accts["near:mainnet:alice.near"]["weight"])
		assert.Equal(t, "0", accts["near:mainnet:bob.near"]["weight"])
		assert.Equal(t, []any{"none"}, accts["near:mainnet:bob.near"]["groups"])
		assert.Equal(t, "99.000001", accts["near:mainnet:carol.near"]["weight"])
		assert.Equal(t, "USDt balances", snap["title"])
	})

	t.Run("near-ft-balances over another snapshot's accounts", func(t *testing.T) {
		shipped := snapshotsapp.ShippedSnapshots()[0].SHA256
		status, out := p.getSnapshot(t, `{"network":"near-ft-balances","params":{"token":"usdt.tether-token.near","snapshot":"`+shipped+`"}}`)
		require.Equal(t, http.StatusOK, status, out)
		accts := accountsByID(t, p.body(t, out["sha256"].(string)))
		require.Len(t, accts, 6)
		assert.Equal(t, "730.25", accts["near:mainnet:frank.near"]["weight"])
		assert.Equal(t, "0.000001", accts["near:mainnet:erin.near"]["weight"])

		// The other snapshot is read through the library's cache, as every
		// stored snapshot is: a second read finds it decoded.
		hits := metricValue(t, scrapeOf(t, p), "petal_snapshot_cache_lookups_total", `cache="decoded"`, `result="hit"`)
		status, out = p.getSnapshot(t, `{"network":"near-ft-balances","params":{"token":"usdt.tether-token.near","snapshot":"`+shipped+`"},"fresh":true}`)
		require.Equal(t, http.StatusOK, status, out)
		assert.Greater(t, metricValue(t, scrapeOf(t, p), "petal_snapshot_cache_lookups_total", `cache="decoded"`, `result="hit"`), hits)
	})
}

func TestChainFailuresAnswerPlainly(t *testing.T) {
	t.Parallel()
	// The default read deadline (60 s) is only a safety net here: with a 1 s
	// one, a loaded machine could turn any of these into a timeout.
	p, fake := chainPetal(t, nil)
	cases := []struct {
		name, body string
		status     int
		code       string
	}{
		{"an unknown DAO", `{"network":"near-dao-members","params":{"dao":"nope"}}`, http.StatusNotFound, "not_found"},
		{"an account with no contract", `{"network":"near-dao-members","params":{"dao":"alice.near"}}`, http.StatusNotFound, "not_found"},
		{"a contract that fails (old quirk)", `{"network":"near-dao-members","params":{"dao":"broken"}}`, http.StatusUnprocessableEntity, "cannot_read"},
		{"a contract that fails (structured)", `{"network":"near-dao-proposals","params":{"dao":"broken"}}`, http.StatusUnprocessableEntity, "cannot_read"},
		{"a pool without the method", `{"network":"near-staking-pool","params":{"pool":"broken.poolv1.near"}}`, http.StatusUnprocessableEntity, "cannot_read"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out := p.getSnapshot(t, tc.body)
			assert.Equal(t, tc.status, status, out)
			assert.Equal(t, tc.code, errorCode(out))
			assert.NotContains(t, errorMessage(out), "wasm", "no upstream detail in the message")
		})
	}
	t.Run("a node answering 5xx past the retries", func(t *testing.T) {
		fake.Inject(nearrpctest.Fault{Method: "block", Status: http.StatusBadGateway})
		status, out := p.getSnapshot(t, `{"network":"near-staking-pool","params":{"pool":"astro-stakers.poolv1.near"},"fresh":true}`)
		assert.Equal(t, http.StatusServiceUnavailable, status, out)
		assert.Equal(t, "source_failed", errorCode(out))
	})
}

func TestAReadPastItsDeadlineIs503(t *testing.T) {
	t.Parallel()
	// The node never answers, so the 1 s deadline always passes, however slow
	// the machine.
	p, fake := chainPetal(t, map[string]string{"PETAL_FRESH_READ_TIMEOUT_S": "1"})
	fake.Inject(nearrpctest.Fault{Function: "get_policy", Hang: true})
	status, out := p.getSnapshot(t, `{"network":"near-dao-members","params":{"dao":"marketing"},"fresh":true}`)
	assert.Equal(t, http.StatusServiceUnavailable, status, out)
	assert.Equal(t, "source_failed", errorCode(out))
	assert.Contains(t, errorMessage(out), "longer than 1 s")
}

func TestStoredOnlyVersusFresh(t *testing.T) {
	t.Parallel()
	p, fake := chainPetal(t, nil)
	req := `{"network":"near-staking-pool","params":{"pool":"astro-stakers.poolv1.near"}}`

	// Nothing stored: it reads.
	status, first := p.getSnapshot(t, req)
	require.Equal(t, http.StatusOK, status, first)
	assert.Equal(t, false, first["stored_only"])
	calls := len(fake.Calls())

	// Stored: answered from storage, reaching no source.
	status, second := p.getSnapshot(t, req)
	require.Equal(t, http.StatusOK, status, second)
	assert.Equal(t, true, second["stored_only"])
	assert.Equal(t, first["sha256"], second["sha256"])
	assert.Len(t, fake.Calls(), calls, "a stored answer makes no chain call")

	// Fresh: reads again; the same reading keeps the same name, stored once.
	status, third := p.getSnapshot(t, strings.Replace(req, `}}`, `},"fresh":true}`, 1))
	require.Equal(t, http.StatusOK, status, third)
	assert.Equal(t, false, third["stored_only"])
	assert.Greater(t, len(fake.Calls()), calls)
	assert.Equal(t, first["sha256"], third["sha256"])
	assert.Equal(t, 1, p.storedCount(t, first["sha256"].(string)))

	// at names a stored snapshot of the target.
	status, at := p.getSnapshot(t, strings.Replace(req, `}}`, `},"at":"`+first["sha256"].(string)+`"}`, 1))
	require.Equal(t, http.StatusOK, status, at)
	assert.Equal(t, true, at["stored_only"])
	shipped := snapshotsapp.ShippedSnapshots()[0].SHA256
	status, other := p.getSnapshot(t, strings.Replace(req, `}}`, `},"at":"`+shipped+`"}`, 1))
	assert.Equal(t, http.StatusBadRequest, status, other)
	assert.Contains(t, errorMessage(other), "at names a snapshot of near-dao-members")
}

func TestFreshReadsAreCapped(t *testing.T) {
	t.Parallel()
	// The held reads end at the deadline; it must outlast the wait below and
	// the third request even on a loaded machine, so it is not 1 or 2 s.
	// Two addresses hold the two turns (one address holds one at most).
	p, fake := chainPetal(t, map[string]string{"PETAL_FRESH_READ_TIMEOUT_S": "6", "PETAL_FRESH_READS": "2", "PETAL_TRUSTED_PROXIES": "127.0.0.1"})
	// This site's own reading of the DAO, for the stored answer below (the
	// demo shipped inside petal is never a target's stored reading).
	status, own := p.getSnapshot(t, `{"network":"near-dao-members","params":{"dao":"marketing"},"fresh":true}`)
	require.Equal(t, http.StatusOK, status, own)
	before := fake.CountCalls("get_policy")
	fake.Inject(nearrpctest.Fault{Function: "get_policy", Hang: true})
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i := range 2 {
		wg.Go(func() {
			statuses[i], _ = p.getSnapshotFrom(t, fmt.Sprintf("198.51.100.%d", i+1), `{"network":"near-dao-members","params":{"dao":"marketing"},"fresh":true}`)
		})
	}
	// Wait (not a timing assertion) until both reads hold their turn at the chain.
	for fake.CountCalls("get_policy") < before+2 {
		time.Sleep(5 * time.Millisecond)
	}
	res, body := p.do(t, http.MethodPost, "/api/v1/snapshots", `{"network":"near-staking-pool","params":{"pool":"astro-stakers.poolv1.near"},"fresh":true}`, "Cf-Connecting-Ip", "198.51.100.3")
	out := jsonOf(t, body)
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Contains(t, errorMessage(out), "2 fresh reads are running already")
	assert.Equal(t, "rate_limited", errorCode(out))
	retry := out["error"].(map[string]any)["retry_after_s"].(float64)
	assert.True(t, retry >= 1 && retry <= 10, "a short retry_after_s: %v", retry)
	assert.Equal(t, fmt.Sprint(retry), res.Header.Get("Retry-After"))
	// A stored answer needs no turn.
	status, stored := p.getSnapshot(t, `{"network":"near-dao-members","params":{"dao":"marketing"}}`)
	assert.Equal(t, http.StatusOK, status, stored)
	wg.Wait()
	assert.Equal(t, []int{http.StatusServiceUnavailable, http.StatusServiceUnavailable}, statuses, "the held reads end at the deadline")
	// The turns are free again.
	status, out = p.getSnapshot(t, `{"network":"near-staking-pool","params":{"pool":"astro-stakers.poolv1.near"},"fresh":true}`)
	assert.Equal(t, http.StatusOK, status, out)
}

// One address holds one fresh read at a time (issue 10 item 10): a loop of
// two can't keep both turns from everyone else.
func TestOneFreshReadPerAddress(t *testing.T) {
	t.Parallel()
	p, fake := chainPetal(t, map[string]string{"PETAL_FRESH_READ_TIMEOUT_S": "6", "PETAL_FRESH_READS": "2", "PETAL_TRUSTED_PROXIES": "127.0.0.1"})
	fake.Inject(nearrpctest.Fault{Function: "get_policy", Hang: true})
	held := make(chan int, 1)
	go func() {
		status, _ := p.getSnapshotFrom(t, "198.51.100.1", `{"network":"near-dao-members","params":{"dao":"marketing"},"fresh":true}`)
		held <- status
	}()
	for fake.CountCalls("get_policy") < 1 {
		time.Sleep(5 * time.Millisecond)
	}
	res, body := p.do(t, http.MethodPost, "/api/v1/snapshots", `{"network":"near-staking-pool","params":{"pool":"astro-stakers.poolv1.near"},"fresh":true}`,
		"Accept", "application/json", "Cf-Connecting-Ip", "198.51.100.1")
	out := jsonOf(t, body)
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Equal(t, "rate_limited", errorCode(out))
	assert.Contains(t, errorMessage(out), "one at a time")
	retry := out["error"].(map[string]any)["retry_after_s"].(float64)
	assert.True(t, retry >= 1 && retry <= 10, "a short retry_after_s: %v", retry)

	// The second turn is anyone else's.
	status, other := p.getSnapshotFrom(t, "198.51.100.2", `{"network":"near-staking-pool","params":{"pool":"astro-stakers.poolv1.near"},"fresh":true}`)
	assert.Equal(t, http.StatusOK, status, other)
	assert.Equal(t, http.StatusServiceUnavailable, <-held, "the held read ends at the deadline")
	// Once its read has ended, the address reads again.
	status, out = p.getSnapshotFrom(t, "198.51.100.1", `{"network":"near-staking-pool","params":{"pool":"astro-stakers.poolv1.near"},"fresh":true}`)
	assert.Equal(t, http.StatusOK, status, out)
}

func TestGetSnapshotStreamsProgressThenOneResult(t *testing.T) {
	t.Parallel()
	p, _ := chainPetal(t, nil)
	s := p.openSSE(t, http.MethodPost, "/api/v1/snapshots", `{"network":"near-dao-proposals","params":{"dao":"marketing"},"fresh":true}`)
	evs := s.rest(t)
	require.NotEmpty(t, evs)
	var stages []string
	lastDone := -1.0
	for i, e := range evs[:len(evs)-1] {
		require.Equal(t, "progress", e.Name, "event %d", i)
		m := e.json(t)
		if len(stages) == 0 || stages[len(stages)-1] != m["stage"] {
			stages = append(stages, m["stage"].(string))
		}
		if d, ok := m["done"].(float64); ok {
			assert.GreaterOrEqual(t, d, lastDone, "done counts up")
			assert.EqualValues(t, 5, m["total"])
			lastDone = d
		}
	}
	assert.Equal(t, []string{"block", "config", "proposals", "storing"}, stages)
	assert.EqualValues(t, 5, lastDone)
	last := evs[len(evs)-1]
	assert.Equal(t, "result", last.Name)
	res := last.json(t)
	assert.Equal(t, "Votes in marketing.sputnik-dao.near", res["title"])
	assert.Len(t, res["sha256"], 64)

	// An error streams as one error event.
	s = p.openSSE(t, http.MethodPost, "/api/v1/snapshots", `{"network":"near-dao-members","params":{"dao":"nope"},"fresh":true}`)
	evs = s.rest(t)
	require.NotEmpty(t, evs)
	assert.Equal(t, "error", evs[len(evs)-1].Name)
	assert.Equal(t, "not_found", evs[len(evs)-1].json(t)["code"])
}

func TestSnapshotBodyIsServedAsStored(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	sh := snapshotsapp.ShippedSnapshots()[0]
	stored := storedBody(t, p, sh.SHA256)

	res, body := p.do(t, http.MethodGet, "/api/v1/snapshots/"+sh.SHA256, "", "Accept-Encoding", "br, gzip;q=0.8")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "gzip", res.Header.Get("Content-Encoding"))
	assert.Equal(t, stored, []byte(body), "the stored gzip, byte for byte: no recompression")
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	assert.Equal(t, "public, max-age=31536000, immutable", res.Header.Get("Cache-Control"))
	assert.Equal(t, `"`+sh.SHA256+`"`, res.Header.Get("ETag"))
	assert.Equal(t, "Accept-Encoding", res.Header.Get("Vary"))
	zr, err := gzip.NewReader(bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	inflated, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, sh.Canonical, inflated)

	res, body = p.do(t, http.MethodGet, "/api/v1/snapshots/"+sh.SHA256, "", "Accept-Encoding", "gzip;q=0, identity")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Empty(t, res.Header.Get("Content-Encoding"))
	assert.Equal(t, string(sh.Canonical), body)
	assert.Equal(t, "public, max-age=31536000, immutable", res.Header.Get("Cache-Control"))

	res, body = p.do(t, http.MethodGet, "/api/v1/snapshots/"+sh.SHA256, "", "If-None-Match", `"`+sh.SHA256+`"`)
	assert.Equal(t, http.StatusNotModified, res.StatusCode)
	assert.Empty(t, body)

	res, body = p.do(t, http.MethodGet, "/api/v1/snapshots/"+strings.Repeat("0", 64), "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Equal(t, "not_found", errorCode(jsonOf(t, body)))
	res, body = p.do(t, http.MethodGet, "/api/v1/snapshots/NOT-A-HASH", "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, errorMessage(jsonOf(t, body)), "sha256")
}

// HEAD on a snapshot's body answers what GET does, headers and all, with no
// body: gzip or not, 304 for a known ETag, 404 and 400 as GET.
func TestSnapshotBodyAnswersHEAD(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	sha := snapshotsapp.ShippedSnapshots()[0].SHA256
	path := "/api/v1/snapshots/" + sha
	same := []string{"Content-Type", "Content-Encoding", "Content-Length", "Cache-Control", "ETag", "Vary",
		"X-Content-Type-Options", "Access-Control-Allow-Origin"}
	for _, enc := range []string{"gzip", "identity"} {
		get, getBody := p.do(t, http.MethodGet, path, "", "Accept-Encoding", enc, "Origin", "https://elsewhere.example")
		require.Equal(t, http.StatusOK, get.StatusCode)
		require.NotEmpty(t, getBody)
		head, headBody := p.do(t, http.MethodHead, path, "", "Accept-Encoding", enc, "Origin", "https://elsewhere.example")
		require.Equal(t, http.StatusOK, head.StatusCode, enc)
		assert.Empty(t, headBody, "HEAD has no body")
		for _, h := range same {
			assert.Equal(t, get.Header.Values(h), head.Header.Values(h), "%s: %s as GET's", enc, h)
		}
		assert.Equal(t, strconv.Itoa(len(getBody)), head.Header.Get("Content-Length"), "%s: the length GET sends", enc)
		assert.NotEmpty(t, head.Header.Get("X-Request-Id"))
	}
	head, body := p.do(t, http.MethodHead, path, "", "If-None-Match", `"`+sha+`"`)
	assert.Equal(t, http.StatusNotModified, head.StatusCode)
	assert.Empty(t, body)
	head, body = p.do(t, http.MethodHead, "/api/v1/snapshots/"+strings.Repeat("0", 64), "")
	assert.Equal(t, http.StatusNotFound, head.StatusCode)
	assert.Empty(t, body)
	head, _ = p.do(t, http.MethodHead, "/api/v1/snapshots/NOT-A-HASH", "")
	assert.Equal(t, http.StatusBadRequest, head.StatusCode)
	head, _ = p.do(t, http.MethodHead, "/api/v1/snapshots/"+sha+"/describe", "")
	assert.Equal(t, http.StatusMethodNotAllowed, head.StatusCode, "only routes that serve a document answer HEAD")
}

func TestDescribeSnapshot(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	sha := snapshotsapp.ShippedSnapshots()[0].SHA256
	res, body := p.do(t, http.MethodGet, "/api/v1/snapshots/"+sha+"/describe?top=2", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	d := jsonOf(t, body)
	assert.Equal(t, sha, d["sha256"])
	assert.EqualValues(t, 6, d["count"])
	assert.Equal(t, "6", d["total_weight"])
	top := d["top"].([]any)
	require.Len(t, top, 2)
	assert.Equal(t, map[string]any{"id": "near:mainnet:alice.near", "label": "alice.near", "weight": "1", "share": 1.0 / 6}, top[0])
	groups := d["groups"].([]any)
	assert.Equal(t, map[string]any{"id": "council", "label": "council", "count": 3.0, "weight": "3", "share": 0.5}, groups[0])
	assert.Equal(t, map[string]any{"id": "community", "label": "community", "count": 4.0, "weight": "4", "share": 4.0 / 6}, groups[1])

	res, body = p.do(t, http.MethodGet, "/api/v1/snapshots/"+sha+"/describe?top=101", "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, errorMessage(jsonOf(t, body)), "top")
	res, body = p.do(t, http.MethodGet, "/api/v1/snapshots/"+sha+"/describe?top=many", "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, errorMessage(jsonOf(t, body)), "top")
}

func TestNetworks(t *testing.T) {
	t.Parallel()
	p, _ := chainPetal(t, nil)
	res, body := p.do(t, http.MethodGet, "/api/v1/networks", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	nets := jsonOf(t, body)["networks"].([]any)
	var ids []string
	for _, n := range nets {
		m := n.(map[string]any)
		ids = append(ids, m["id"].(string))
		assert.Equal(t, "object", m["params"].(map[string]any)["type"], "each network carries its params' JSON Schema")
		assert.NotEmpty(t, m["reads"])
	}
	assert.Equal(t, []string{"near-dao-members", "near-dao-proposals", "near-staking-pool", "near-ft-balances", "near-ft-holders", "evm-erc20-holders", "evm-erc20-delegates", "evm-baal-members", "evm-baal-proposals"}, ids)

	_, body = p.do(t, http.MethodGet, "/api/v1/networks?query=staking", "")
	assert.Len(t, jsonOf(t, body)["networks"], 1)

	// Before this site has read the DAO there is no stored reading of it (the
	// demo shipped inside petal is never one); after, its own is the latest.
	res, body = p.do(t, http.MethodGet, "/api/v1/networks/near-dao-members?dao=marketing", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Nil(t, jsonOf(t, body)["target"].(map[string]any)["latest"])
	status, read := p.getSnapshot(t, `{"network":"near-dao-members","params":{"dao":"marketing"},"fresh":true}`)
	require.Equal(t, http.StatusOK, status, read)
	res, body = p.do(t, http.MethodGet, "/api/v1/networks/near-dao-members?dao=marketing", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	target := jsonOf(t, body)["target"].(map[string]any)
	assert.Equal(t, "this_site", target["latest"].(map[string]any)["origin"])
	assert.Equal(t, `near-dao-members{"chain":"near:mainnet","dao":"marketing.sputnik-dao.near"}`, target["target_key"])
	assert.Equal(t, snapshotsapp.ShippedSnapshots()[0].SHA256, target["latest"].(map[string]any)["sha256"])

	res, _ = p.do(t, http.MethodGet, "/api/v1/networks/near-nothing", "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
}

func TestBadParamsNameTheField(t *testing.T) {
	t.Parallel()
	p, fake := chainPetal(t, nil)
	cases := []struct{ body, field string }{
		{`{"params":{"dao":"marketing"}}`, "network"},
		{`{"network":"near-nothing","params":{}}`, "network"},
		{`{"network":"near-dao-members"}`, "params"},
		{`{"network":"near-dao-members","params":{"dao":"marketing","extra":1}}`, "params.extra"},
		{`{"network":"near-dao-members","params":{}}`, "params.dao"},
		{`{"network":"near-dao-members","params":{"dao":"Not Valid!"}}`, "params.dao"},
		{`{"network":"near-dao-members","params":{"dao":"marketing","chain":"near:betanet"}}`, "params.chain"},
		{`{"network":"near-dao-members","params":{"dao":7}}`, "params.dao"},
		{`{"network":"near-staking-pool","params":{"pool":""}}`, "params.pool"},
		{`{"network":"near-ft-balances","params":{"token":"usdt.tether-token.near"}}`, "accounts"},
		{`{"network":"near-ft-balances","params":{"token":"usdt.tether-token.near","accounts":["ok.near","BAD"]}}`, "params.accounts[1]"},
		{`{"network":"near-ft-balances","params":{"token":"usdt.tether-token.near","snapshot":"abc"}}`, "params.snapshot"},
		{`{"network":"near-dao-members","params":{"dao":"marketing"},"fresh":"yes"}`, "fresh"},
		{`{"network":"near-dao-members","params":{"dao":"marketing"},"at":"xyz"}`, "at"},
		{`{"network":"near-dao-members","params":{"dao":"marketing"},"bogus":1}`, "bogus"},
	}
	many := make([]string, 1001)
	for i := range many {
		many[i] = fmt.Sprintf(`"a%d.near"`, i)
	}
	cases = append(cases, struct{ body, field string }{
		`{"network":"near-ft-balances","params":{"token":"usdt.tether-token.near","accounts":[` + strings.Join(many, ",") + `]}}`, "params.accounts"})
	for _, tc := range cases {
		status, out := p.getSnapshot(t, tc.body)
		assert.Equal(t, http.StatusBadRequest, status, "%s → %v", tc.body, out)
		assert.Equal(t, "bad_input", errorCode(out), tc.body)
		assert.Contains(t, errorMessage(out), tc.field, tc.body)
	}
	assert.Empty(t, fake.Calls(), "bad input reads nothing")
	var n int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM snapshots`).Scan(&n))
	assert.Equal(t, len(snapshotsapp.ShippedSnapshots()), n, "bad input stores nothing")

	res, body := p.do(t, http.MethodGet, "/api/v1/find", "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, errorMessage(jsonOf(t, body)), "query")
	res, body = p.do(t, http.MethodGet, "/api/v1/find?query=x&limit=99", "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, errorMessage(jsonOf(t, body)), "limit")
}

func TestFindTarget(t *testing.T) {
	t.Parallel()
	p, fake := chainPetal(t, map[string]string{"PETAL_NEAR_PAGE_SIZE": "100"})
	find := func(q string) map[string]any {
		t.Helper()
		res, body := p.do(t, http.MethodGet, "/api/v1/find?query="+url.QueryEscape(q), "")
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		return jsonOf(t, body)
	}
	first := func(m map[string]any) map[string]any {
		t.Helper()
		c := m["candidates"].([]any)
		require.NotEmpty(t, c, m)
		return c[0].(map[string]any)
	}

	out := find("the marketing DAO")
	assert.Equal(t, false, out["ambiguous"])
	c := first(out)
	assert.Equal(t, "near-dao-members", c["network"])
	assert.Equal(t, map[string]any{"chain": "near:mainnet", "dao": "marketing.sputnik-dao.near"}, c["params"])
	assert.Len(t, out["candidates"], 2, "marketing-guild fits too, less well")

	out = find("market")
	assert.Equal(t, true, out["ambiguous"], "two DAOs fit about equally")

	c = first(find("who voted in the nearweek news dao"))
	assert.Equal(t, "near-dao-proposals", c["network"])
	assert.Equal(t, "nearweek-news.sputnik-dao.near", c["params"].(map[string]any)["dao"])

	c = first(find("astro stakers pool"))
	assert.Equal(t, "near-staking-pool", c["network"])
	assert.Equal(t, "astro-stakers.poolv1.near", c["params"].(map[string]any)["pool"])

	c = first(find("creatives.sputnik-dao.near"))
	assert.EqualValues(t, 3, c["score"], "an account named outright")

	assert.Empty(t, find("zebra")["candidates"])
	assert.Equal(t, 1, fake.CountCalls("get_daos"), "the DAO list is kept in the database, read once a day")
	var kept int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM dao_directory WHERE chain = 'near:mainnet'`).Scan(&kept))
	assert.Equal(t, 6, kept)
}

func TestPublicSiteRefusesReadsButServesSnapshots(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_PUBLIC": "1"})
	res, body := p.do(t, http.MethodPost, "/api/v1/snapshots", `{"network":"near-dao-members","params":{"dao":"marketing"}}`)
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	assert.Equal(t, "not_on_this_site", errorCode(jsonOf(t, body)))
	res, _ = p.do(t, http.MethodGet, "/api/v1/find?query=marketing", "")
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	sha := snapshotsapp.ShippedSnapshots()[0].SHA256
	res, _ = p.do(t, http.MethodGet, "/api/v1/snapshots/"+sha, "")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	res, _ = p.do(t, http.MethodGet, "/api/v1/snapshots/"+sha+"/describe", "")
	assert.Equal(t, http.StatusOK, res.StatusCode)
	res, _ = p.do(t, http.MethodGet, "/api/v1/networks/near-dao-members", "")
	assert.Equal(t, http.StatusOK, res.StatusCode)
}

// PETAL_NEAR_RPC_MAINNET as a list (issue 33 #14): the first endpoint down,
// a fresh reading comes from the second.
func TestAFreshReadFailsOverToTheNextRPCEndpoint(t *testing.T) {
	t.Parallel()
	down, up := nearrpctest.New(t), nearrpctest.New(t)
	down.Inject(nearrpctest.Fault{Status: http.StatusBadGateway})
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": down.URL + "," + up.URL, "PETAL_TOOL_CALLS_PER_MIN": "1000"})
	status, out := p.getSnapshot(t, `{"network":"near-dao-members","params":{"dao":"marketing"},"fresh":true}`)
	require.Equal(t, http.StatusOK, status, out)
	assert.Equal(t, snapshotsapp.ShippedSnapshots()[0].SHA256, out["sha256"])
	assert.NotZero(t, len(down.Calls()), "the first endpoint was asked")
	assert.GreaterOrEqual(t, len(up.Calls()), len(down.Calls()), "and the second answered the rest")
}

// storedBody is a snapshot's body as kept: its row's body_gzip, or the blob
// its body_blob names in the test's blob store.
func storedBody(t *testing.T, p *testPetal, sha string) []byte {
	t.Helper()
	var inRow []byte
	var key *string
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT body_gzip, body_blob FROM snapshots WHERE sha256 = $1`, sha).Scan(&inRow, &key))
	if key == nil {
		return inRow
	}
	store, err := blobstore.Open(t.Context(), p.Cfg.BlobURL)
	require.NoError(t, err)
	defer func() { _ = store.Close() }()
	b, err := store.Get(t.Context(), *key, 64<<20)
	require.NoError(t, err)
	return b
}
