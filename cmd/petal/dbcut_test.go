package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

// proxiedPetal serves petal over a pool that reaches its database through a
// proxy the test can cut; the test's own pool (p.DB) goes straight.
func proxiedPetal(t *testing.T, env map[string]string) (*testPetal, *tcpProxy) {
	t.Helper()
	db := pgtest.New(t)
	u, err := url.Parse(db.URL)
	require.NoError(t, err)
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.addr
	serving, err := postgres.Connect(t.Context(), u.String())
	require.NoError(t, err)
	t.Cleanup(serving.Close)
	return startPetalOn(t, env, db, serving), proxy
}

// While the database doesn't answer, a signed-in request is 503
// source_failed with a Retry-After: never 401 "sign in first", and never a
// fresh anonymous session over the person's cookie. When it answers again,
// the person is still signed in (issue 33, item 5).
func TestADatabaseThatDoesNotAnswerSignsNobodyOut(t *testing.T) {
	t.Parallel() // its own database (and proxy or processes): it waits, mostly, so others run meanwhile
	rpc := nearrpctest.New(t)
	p, proxy := proxiedPetal(t, map[string]string{
		"PETAL_API": siteOrigin, "PETAL_NEAR_RPC_MAINNET": rpc.URL, "PETAL_NEAR_RPC_TESTNET": rpc.URL,
	})
	cookie, person := signInAlice(t, p)
	me := func() (int, string) {
		res, body := p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", cookie)
		return res.StatusCode, body
	}
	status, body := me()
	require.Equal(t, http.StatusOK, status, body)

	proxy.cut()
	for _, r := range []struct{ method, path, body string }{
		{http.MethodGet, "/api/v1/me", ""},
		{http.MethodGet, "/api/v1/me/view", ""},
		{http.MethodGet, "/api/v1/me/usage", ""},
		{http.MethodGet, "/api/v1/explorations", ""},
		{http.MethodGet, "/api/v1/agents", ""},
		// A route that opens an anonymous session when there is none.
		{http.MethodPost, "/api/v1/explorations", `{"question":"who holds power here?"}`},
		{http.MethodPost, "/api/v1/auth/invite", `{"token":"nope"}`},
	} {
		res, out := p.do(t, r.method, r.path, r.body, "Cookie", cookie, "Origin", siteOrigin)
		assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, "%s %s: %s", r.method, r.path, out)
		var e struct {
			Error struct{ Code string } `json:"error"`
		}
		_ = json.Unmarshal([]byte(out), &e)
		assert.Equal(t, "source_failed", e.Error.Code, "%s %s: %s", r.method, r.path, out)
		assert.Equal(t, "5", res.Header.Get("Retry-After"), "%s %s", r.method, r.path)
		assert.Empty(t, res.Header.Values("Set-Cookie"), "%s %s: no session opened or cleared", r.method, r.path)
	}
	// What needs no session still answers.
	res, out := p.do(t, http.MethodGet, "/api/v1/info", "", "Cookie", cookie)
	assert.Equal(t, http.StatusOK, res.StatusCode, out)

	proxy.restore()
	require.Eventually(t, func() bool { s, _ := me(); return s == http.StatusOK }, 30e9, 50e6)
	_, body = me()
	assert.Contains(t, body, person, "the same person, still signed in")
	var sessions int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM sessions`).Scan(&sessions))
	assert.Equal(t, 1, sessions, "no anonymous session was opened beside the person's")
}

// A chat whose model call is in flight while the database is away for 10 s
// ends once it is back: its call's settle (NEAR AI billed it), its end and
// its hold's release are tried again until they land, so within 10 s of the
// database's return the run is done, the call charged what it cost (not
// released uncharged), and nothing is held (issue 33, item 4; issue 25).
func TestARunEndsAndReleasesItsHoldsWhenTheDatabaseReturns(t *testing.T) {
	t.Parallel() // its own database (and proxy or processes): it waits, mostly, so others run meanwhile
	fake := nearaitest.New(t)
	fake.Hold = make(chan struct{})
	fake.Holding = make(chan struct{}, 1)
	p, proxy := proxiedPetal(t, modelEnv(fake))
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	var started map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	id := started["run_id"]
	select {
	case <-fake.Holding:
	case <-time.After(60 * time.Second):
		t.Fatal("the model call never arrived")
	}
	require.Positive(t, heldOnLedger(t, p), "the call in flight is held")

	// The database goes away with the call in flight; the call answers
	// meanwhile, so every write after it meets no database.
	proxy.cut()
	close(fake.Hold)
	time.Sleep(10 * time.Second)
	status := func() string {
		var s string
		require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT status FROM runs WHERE id = $1`, id).Scan(&s))
		return s
	}
	require.Equal(t, "running", status(), "nothing could end it while the database was away")
	proxy.restore()
	back := time.Now()
	var ended time.Duration
	for {
		if s, held := status(), heldOnLedger(t, p); s != "running" && held == 0 {
			ended = time.Since(back)
			t.Logf("run %s after the database's return, nothing held, %.2f s", s, ended.Seconds())
			break
		}
		if time.Since(back) > 10*time.Second {
			t.Fatalf("10 s after the database's return the run is %s and %d µ$ are held", status(), heldOnLedger(t, p))
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.Equal(t, "done", status(), "the chat went on once the call's charge landed")
	var holdStatus string
	var charged *int64
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT status, charged_micros FROM credit_holds WHERE run_id = $1`, id).Scan(&holdStatus, &charged))
	assert.Equal(t, "settled", holdStatus, "the settle was tried again until it landed")
	require.NotNil(t, charged)
	assert.Positive(t, *charged, "the billed call is charged")
	assert.Positive(t, metricValue(t, scrapeOf(t, p), "petal_must_land_retries_total", `write="hold_settle"`), "counted as tried again")
}
