package main

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/app/snapshotsapp"
)

// attackGzip is the attack: a posted reading whose one account has
// an attrs of 16 million zeros, 32 MB of JSON and about 31 KB gzipped.
func attackGzip(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	write := func(s string) {
		_, err := zw.Write([]byte(s))
		require.NoError(t, err)
	}
	write(`{"about":"","accounts":[{"attrs":{"zeros":[0`)
	chunk := strings.Repeat(",0", 1<<16)
	for range 16_000_000 / (1 << 16) {
		write(chunk)
	}
	write(`]},"groups":[],"id":"near:mainnet:a.near","label":"a","weight":"1"}],"block":{"hash":"h","height":1,"time":"2026-11-01T00:00:00Z"},` +
		`"chain":"near:mainnet","groups":[],"network":"near-dao-members","params":{},"schema":"snapshot/v1","source":{"calls":[]},"title":"t"}`)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// The attack, alone and four at once, is refused with 400 naming the limit it
// passes, and stores nothing.
func TestPostedReadingAttackIsRefusedWhileStreaming(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	owner := p.browser(t)
	id := owner.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"an attack"}`)["id"].(string)
	attack := attackGzip(t)
	require.Less(t, len(attack), 64<<10, "small on the wire: %d bytes", len(attack))
	at := "/api/v1/explorations/" + id + "/snapshots/" + strings.Repeat("ab", 32)

	res, body := owner.put(t, at, attack, "Content-Encoding", "gzip")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Equal(t, "bad_input", errorCode(jsonOf(t, body)))
	assert.Contains(t, errorMessage(jsonOf(t, body)), "/accounts/0/attrs/zeros: an array of more than 20000 elements")

	var wg sync.WaitGroup
	statuses := make([]int, 4)
	for i := range statuses {
		wg.Go(func() {
			res, _ := owner.put(t, at, attack, "Content-Encoding", "gzip")
			statuses[i] = res.StatusCode
		})
	}
	wg.Wait()
	assert.Equal(t, []int{400, 400, 400, 400}, statuses)

	var posted, readings int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM snapshots WHERE origin = 'their_machine'`).Scan(&posted))
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM exploration_readings`).Scan(&readings))
	assert.Zero(t, posted, "a refusal stores nothing")
	assert.Zero(t, readings)
}

// The daily cap and the per-address limit answer before the body is read: a
// body that is not even JSON gets the 429, not a 400 about its bytes.
func TestPostedReadingCapsComeBeforeTheBody(t *testing.T) {
	t.Parallel()
	t.Run("the daily cap", func(t *testing.T) {
		// The site's 2 taken by two addresses (one may take 1), then a third.
		p := startPetal(t, map[string]string{"PETAL_POSTED_SNAPSHOTS_PER_DAY": "2", "PETAL_POSTED_SNAPSHOTS_PER_ADDRESS": "1",
			"PETAL_TRUSTED_PROXIES": "127.0.0.1"})
		for i, ip := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"} {
			owner := p.browser(t)
			id := owner.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"capped"}`, "Cf-Connecting-Ip", ip)["id"].(string)
			if i < 2 {
				sha, a := reading(t, uint64(i+1))
				res, body := owner.put(t, "/api/v1/explorations/"+id+"/snapshots/"+sha, a, "Cf-Connecting-Ip", ip)
				require.Equal(t, http.StatusOK, res.StatusCode, body)
				continue
			}
			sha, _ := reading(t, 3)
			res, body := owner.put(t, "/api/v1/explorations/"+id+"/snapshots/"+sha, []byte("not json at all"), "Cf-Connecting-Ip", ip)
			assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
			assert.Equal(t, "rate_limited", errorCode(jsonOf(t, body)))
			assert.Contains(t, body, "this site took all")
		}
	})
	t.Run("the per-address limit", func(t *testing.T) {
		p := startPetal(t, map[string]string{"PETAL_TOOL_CALLS_PER_MIN": "3"})
		owner := p.browser(t)
		id := owner.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"limited"}`)["id"].(string)
		sha, _ := reading(t, 1)
		var codes []string
		for range 4 {
			_, body := owner.put(t, "/api/v1/explorations/"+id+"/snapshots/"+sha, []byte("not json at all"))
			codes = append(codes, errorCode(jsonOf(t, body)))
		}
		assert.Contains(t, codes, "bad_input", "read while the address has calls left")
		assert.Equal(t, "rate_limited", codes[len(codes)-1], "and not read once it has none: %v", codes)
	})
}

// A reading the site holds, posted again as its canonical bytes, is answered
// from its hash; the same reading pretty-printed is parsed and answered the
// same; a different body under a held name is refused.
func TestPostedReadingAlreadyHeldIsAnsweredByItsHash(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	owner := p.browser(t)
	id := owner.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"twice"}`)["id"].(string)
	sha, pretty := reading(t, 7)
	at := "/api/v1/explorations/" + id + "/snapshots/" + sha
	assert.Equal(t, true, owner.ok(t, http.MethodPut, at, string(pretty))["stored"])
	res, raw := p.do(t, http.MethodGet, "/api/v1/snapshots/"+sha, "", "Accept-Encoding", "identity")
	require.Equal(t, http.StatusOK, res.StatusCode)
	again := owner.ok(t, http.MethodPut, at, raw, "Content-Encoding", "identity")
	assert.Equal(t, map[string]any{"tools_version": "1.0.0", "exploration": id, "sha256": sha, "stored": false, "origin": "their_machine"}, again)
	assert.Equal(t, false, owner.ok(t, http.MethodPut, at, string(gzipped(t, pretty)), "Content-Encoding", "gzip")["stored"])
	_, other := reading(t, 8)
	res, body := owner.put(t, at, other)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, "not the "+sha)
}

// A posted reading is never a target's stored reading for anyone: whatever
// its block, get_snapshot and get_network answer this site's own reading.
// It is served by its name, saying where it came from.
func TestPostedReadingsNeverBecomeATargetsStoredReading(t *testing.T) {
	t.Parallel()
	p, _ := chainPetal(t, nil)
	owner := p.browser(t)
	id := owner.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"poison"}`)["id"].(string)
	posted, body := reading(t, 999_999_999) // far above any real block
	owner.ok(t, http.MethodPut, "/api/v1/explorations/"+id+"/snapshots/"+posted, string(body))

	status, got := p.getSnapshot(t, `{"network":"near-dao-members","params":{"dao":"marketing"}}`)
	require.Equal(t, http.StatusOK, status, got)
	assert.NotEqual(t, posted, got["sha256"])
	assert.Equal(t, false, got["stored_only"], "nothing of this site's was stored: it reads")
	assert.Equal(t, "this_site", got["origin"])
	status, again := p.getSnapshot(t, `{"network":"near-dao-members","params":{"dao":"marketing"}}`)
	require.Equal(t, http.StatusOK, status, again)
	assert.Equal(t, got["sha256"], again["sha256"], "the stored reading is this site's own")
	assert.Equal(t, true, again["stored_only"])

	res, out := p.do(t, http.MethodGet, "/api/v1/networks/near-dao-members?dao=marketing", "")
	require.Equal(t, http.StatusOK, res.StatusCode, out)
	latest := jsonOf(t, out)["target"].(map[string]any)["latest"].(map[string]any)
	assert.Equal(t, got["sha256"], latest["sha256"])
	assert.Equal(t, "this_site", latest["origin"])

	// By its name it is served, and says it was posted.
	status, at := p.getSnapshot(t, `{"network":"near-dao-members","params":{"dao":"marketing"},"at":"`+posted+`"}`)
	require.Equal(t, http.StatusOK, status, at)
	assert.Equal(t, posted, at["sha256"])
	assert.Equal(t, "their_machine", at["origin"])
	assert.NotContains(t, at, "demo")
	res, out = p.do(t, http.MethodGet, "/api/v1/snapshots/"+posted+"/describe", "")
	require.Equal(t, http.StatusOK, res.StatusCode, out)
	assert.Equal(t, "their_machine", jsonOf(t, out)["origin"])
	res, _ = p.do(t, http.MethodGet, "/api/v1/snapshots/"+posted, "")
	assert.Equal(t, "their_machine", res.Header.Get("Petal-Origin"))
}

// The demo reading that ships inside petal names a real DAO with invented
// members: it is never that DAO's stored reading, and says demo: true
// wherever it appears, the recorded run included.
func TestTheDemoReadingSaysSoEverywhere(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	demo := snapshotsapp.ShippedSnapshots()[0].SHA256
	var origin string
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT origin FROM snapshots WHERE sha256 = $1`, demo).Scan(&origin))
	assert.Equal(t, "demo", origin)

	res, out := p.do(t, http.MethodGet, "/api/v1/networks/near-dao-members?dao=marketing", "")
	require.Equal(t, http.StatusOK, res.StatusCode, out)
	assert.Nil(t, jsonOf(t, out)["target"].(map[string]any)["latest"], "the demo is not the DAO's stored reading")

	status, got := p.getSnapshot(t, `{"network":"near-dao-members","params":{"dao":"marketing"},"at":"`+demo+`"}`)
	require.Equal(t, http.StatusOK, status, got)
	assert.Equal(t, true, got["demo"])
	assert.Equal(t, "demo", got["origin"])
	res, out = p.do(t, http.MethodGet, "/api/v1/snapshots/"+demo+"/describe", "")
	require.Equal(t, http.StatusOK, res.StatusCode, out)
	assert.Equal(t, true, jsonOf(t, out)["demo"])
	res, _ = p.do(t, http.MethodGet, "/api/v1/snapshots/"+demo, "")
	assert.Equal(t, "demo", res.Header.Get("Petal-Origin"))
	assert.Equal(t, "true", res.Header.Get("Petal-Demo"))
	res, out = p.do(t, http.MethodPost, "/api/v1/figures", `{"sha256":"`+demo+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, out)
	assert.Equal(t, true, jsonOf(t, out)["demo"])
	res, out = p.do(t, http.MethodPost, "/api/v1/specs/propose", `{"sha256":"`+demo+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, out)
	proposal := jsonOf(t, out)
	assert.Equal(t, true, proposal["demo"])
	spec := reversedJSON(proposal["spec"])
	res, out = p.do(t, http.MethodPost, "/api/v1/specs/validate", `{"spec":`+spec+`}`)
	require.Equal(t, http.StatusOK, res.StatusCode, out)
	assert.Equal(t, true, jsonOf(t, out)["demo"])
	res, out = p.do(t, http.MethodPost, "/api/v1/render", `{"spec":`+spec+`}`)
	require.Equal(t, http.StatusOK, res.StatusCode, out)
	assert.Equal(t, true, jsonOf(t, out)["demo"])

	// The recorded run draws the demo, and says so in its results and its flower.
	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt).rest(t)
	assertRecordedOrder(t, evs)
	var snapshotResult, flower map[string]any
	for _, e := range evs {
		switch e.Name {
		case "tool_result":
			if r := e.json(t); r["name"] == "get_snapshot" && snapshotResult == nil {
				snapshotResult = r
			}
		case "flower":
			flower = e.json(t)
		}
	}
	require.NotNil(t, snapshotResult, "a get_snapshot result")
	assert.Contains(t, snapshotResult["summary"], "demo: true", "%v", snapshotResult)
	assert.Equal(t, true, flower["demo"])
	assert.Equal(t, true, flower["validation"].(map[string]any)["demo"])
}
