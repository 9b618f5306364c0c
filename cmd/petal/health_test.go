package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

func TestHealthAndInfo(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	res, body := p.do(t, http.MethodGet, "/api/v1/health", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var h map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &h))
	assert.Equal(t, true, h["ok"])
	assert.Equal(t, "up", h["db"])
	assert.Equal(t, "recorded", h["llm"])
	assert.Equal(t, "gated", h["agent_access"])
	assert.Equal(t, false, h["public"])
	assert.Equal(t, "1.0.0", h["tools_version"])
	assert.Equal(t, "dev", h["build_id"])

	res, body = p.do(t, http.MethodGet, "/api/v1/info", "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.JSONEq(t, `{"tools_version":"1.0.0","build_id":"dev","server_implementation":"petal"}`, body)
}

// Health is 503 with ok:false while the database does not answer, the process
// keeps serving meanwhile, and health is 200 again when the database is back.
func TestHealthFollowsTheDatabase(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	u, err := url.Parse(db.URL)
	require.NoError(t, err)
	proxy := newTCPProxy(t, u.Host)
	u.Host = proxy.addr
	serving, err := postgres.Connect(t.Context(), u.String())
	require.NoError(t, err)
	t.Cleanup(serving.Close)
	p := startPetalOn(t, nil, db, serving)

	health := func() (int, map[string]any) {
		res, body := p.do(t, http.MethodGet, "/api/v1/health", "")
		var h map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &h), body)
		assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))
		return res.StatusCode, h
	}
	status, h := health()
	require.Equal(t, http.StatusOK, status, "%v", h)
	assert.Equal(t, true, h["ok"])

	proxy.cut()
	status, h = health()
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, false, h["ok"])
	assert.Equal(t, "down", h["db"])
	assert.Equal(t, "1.0.0", h["tools_version"])
	for _, key := range []string{"map", "llm", "agent_access", "public", "build_id"} {
		assert.Contains(t, h, key)
	}
	// Still serving what needs no database.
	res, body := p.do(t, http.MethodGet, "/api/v1/info", "")
	assert.Equal(t, http.StatusOK, res.StatusCode, body)
	res, _ = p.do(t, http.MethodGet, "/api/v1/nope", "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)

	proxy.restore()
	// The pool reconnects by itself on the next use.
	require.Eventually(t, func() bool {
		status, h = health()
		return status == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "health recovers when the database is back")
	assert.Equal(t, true, h["ok"])
	assert.Equal(t, "up", h["db"])
}

func TestInfoRevealsNothingElse(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_AGENT_ACCESS": "open", "NEAR_AI_API_KEY": "sk-secret"})
	res, body := p.do(t, http.MethodGet, "/api/v1/info", "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	var info map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &info))
	assert.Equal(t, map[string]any{"tools_version": "1.0.0", "build_id": "dev", "server_implementation": "petal"}, info)
	assert.NotEmpty(t, res.Header.Get("X-Request-Id"))

	res, body = p.do(t, http.MethodGet, "/api/v1/health", "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.NotContains(t, body, "sk-secret")
	assert.Contains(t, body, `"agent_access":"open"`)
	assert.Contains(t, body, `"llm":"near-ai"`)
}

// The real wiring answers unknown routes and wrong methods in the contract's
// shape, with tools_version and a request id.
func TestWiredServiceRefusesInTheContractsShape(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	res, body := p.do(t, http.MethodGet, "/api/v1/no-such-thing", "", "X-Request-Id", "wired-404")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.JSONEq(t, `{"tools_version":"1.0.0","error":{"code":"not_found","message":"no such route","hint":"see /api/v1/openapi.json for the routes"}}`, body)
	assert.Equal(t, "wired-404", res.Header.Get("X-Request-Id"))

	res, body = p.do(t, http.MethodPost, "/api/v1/health", `{}`)
	assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
	assert.Contains(t, body, `"code":"method_not_allowed"`)
	assert.Contains(t, body, `"tools_version":"1.0.0"`)
}

// petal health is what container health checks run: 0 for a healthy petal, 1
// for one whose database is down or that does not answer.
func TestHealthCommand(t *testing.T) {
	p := startPetal(t, nil)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"health", p.URL + "/api/v1/health"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), `"ok":true`)

	// By default it asks PETAL_ADDR, on loopback when that is a wildcard.
	t.Setenv("PETAL_ADDR", "0.0.0.0:"+strings.TrimPrefix(p.URL, "http://127.0.0.1:"))
	stdout.Reset()
	require.Equal(t, 0, run([]string{"health"}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), `"ok":true`)

	stderr.Reset()
	assert.Equal(t, 1, run([]string{"health", p.URL + "/api/v1/no-such"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "answered 404")
	stderr.Reset()
	assert.Equal(t, 1, run([]string{"health", "http://127.0.0.1:1/api/v1/health"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "petal health:")
}

// Health's map is what a check of NEAR's RPC found (the first call of every
// live reading), not a constant: up when it answers, down when it does not,
// held on a public site, which never reads live. ok stays the database's
// alone. Health and info are open to other sites, like every tool route.
func TestHealthMapIsChecked(t *testing.T) {
	t.Parallel()
	rpc := nearrpctest.New(t)
	up := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": rpc.URL})
	down := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": "http://127.0.0.1:1"})
	public := startPetal(t, map[string]string{"PETAL_PUBLIC": "1", "PETAL_NEAR_RPC_MAINNET": "http://127.0.0.1:1"})

	health := func(p *testPetal) map[string]any {
		res, body := p.do(t, http.MethodGet, "/api/v1/health", "", "Origin", "https://elsewhere.example")
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"), "health is open to any site")
		assert.Empty(t, res.Header.Get("Access-Control-Allow-Credentials"))
		var h map[string]any
		require.NoError(t, json.Unmarshal([]byte(body), &h), body)
		return h
	}
	h := health(up)
	assert.Equal(t, "up", h["map"])
	checked, err := time.Parse(time.RFC3339Nano, h["map_checked_at"].(string))
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), checked, time.Minute)
	calls := 0
	for _, c := range rpc.Calls() {
		if c.Method == "block" {
			calls++
		}
	}
	assert.Equal(t, 1, calls, "one check of the final block")
	health(up)
	health(up)
	n := 0
	for _, c := range rpc.Calls() {
		if c.Method == "block" {
			n++
		}
	}
	assert.Equal(t, 1, n, "a recent check is reused: probes do not reach NEAR each time")

	h = health(down)
	assert.Equal(t, "down", h["map"])
	assert.Equal(t, true, h["ok"], "the chain does not decide ok")
	assert.NotEmpty(t, h["map_checked_at"])

	h = health(public)
	assert.Equal(t, "held", h["map"])
	assert.NotContains(t, h, "map_checked_at")

	res, _ := up.do(t, http.MethodGet, "/api/v1/info", "", "Origin", "https://elsewhere.example")
	assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"), "info is open to any site")
	res, _ = up.do(t, http.MethodOptions, "/api/v1/health", "", "Origin", "https://elsewhere.example", "Access-Control-Request-Method", "GET")
	assert.Equal(t, http.StatusNoContent, res.StatusCode, "a preflight is answered")
	assert.Contains(t, res.Header.Get("Access-Control-Allow-Methods"), "GET")
}
