package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/petal-near/petal/adapters/http"
	"github.com/petal-near/petal/app/toolkit"
)

// sessionPaths are the contract's routes that send no CORS headers at all:
// the auth routes, /api/v1/me* and /api/v1/explorations*.
var sessionPaths = regexp.MustCompile(`^/api/v1/(auth|me|explorations)(/|$)`)

// documents answer a document whose bytes its own format fixes (OpenAPI has no
// room for a foreign top-level field; a snapshot's bytes are its SHA-256
// name), so they carry no tools_version; their errors do.
var documents = map[string]bool{
	"/api/v1/openapi.json":      true,
	"/api/v1/snapshots/:sha256": true,
}

// Every route of the real wiring, whichever area added it, follows the CORS
// rule: open (and never with credentials) on tool and agent routes, absent on
// the session routes. A request from another site is sent to each; each
// answer also carries X-Request-Id, and a JSON answer tools_version (errors
// in the contract's shape).
func TestEveryRouteFollowsTheGeneralRules(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	routes := p.Svc.Server.Routes()
	require.NotEmpty(t, routes)
	checked := 0
	for _, r := range routes {
		session := sessionPaths.MatchString(r.Path)
		open := r.Tool != "" || strings.HasPrefix(r.Path, "/api/v1/agent/") || r.Path == "/mcp"
		if session {
			assert.Equal(t, httpapi.AccessSession, r.Access, "%s %s reads the session: no CORS", r.Method, r.Path)
		} else if open {
			assert.Equal(t, httpapi.AccessOpen, r.Access, "%s %s is a tool or agent route: open CORS", r.Method, r.Path)
		}

		method := r.Method
		if method == httpapi.MethodAll {
			method = http.MethodPost
		}
		path := regexp.MustCompile(`:[a-z_0-9]+`).ReplaceAllString(r.Path, "x")
		body := ""
		if method == http.MethodPost || method == http.MethodPut {
			body = "{}"
		}
		res, got := p.do(t, method, path, body, "Origin", "https://elsewhere.example", "Cf-Connecting-Ip", "203.0.113.77")
		assert.NotEmpty(t, res.Header.Get("X-Request-Id"), "%s %s: X-Request-Id on every answer", r.Method, r.Path)
		if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") && r.Path != "/mcp" {
			var answer struct {
				ToolsVersion string          `json:"tools_version"`
				Error        *map[string]any `json:"error"`
			}
			if assert.NoError(t, json.Unmarshal([]byte(got), &answer), "%s %s: %s", r.Method, r.Path, got) {
				if res.StatusCode >= 400 || !documents[r.Path] {
					assert.Equal(t, toolkit.ToolsVersion, answer.ToolsVersion, "%s %s: tools_version in every JSON answer", r.Method, r.Path)
				}
				if res.StatusCode >= 400 && assert.NotNil(t, answer.Error, "%s %s: %d in the error shape: %s", r.Method, r.Path, res.StatusCode, got) {
					for _, k := range []string{"code", "message", "hint"} {
						assert.Contains(t, *answer.Error, k, "%s %s", r.Method, r.Path)
					}
				}
			}
		}
		assert.Empty(t, res.Header.Values("Access-Control-Allow-Credentials"), "%s %s: never credentials across sites", r.Method, r.Path)
		switch {
		case session:
			for name := range res.Header {
				assert.False(t, strings.HasPrefix(name, "Access-Control-"), "%s %s sends %s", r.Method, r.Path, name)
			}
		case open:
			assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"), "%s %s answers %d", r.Method, r.Path, res.StatusCode)
		}
		checked++
	}
	t.Logf("%d routes checked", checked)
}

// The wired service limits tool calls per address with PETAL_TOOL_CALLS_PER_MIN,
// counts cf-connecting-ip (from a trusted proxy: here the test's client),
// ignores X-Forwarded-For, and answers 429 in the contract's shape with
// Retry-After.
func TestWiredToolCallLimit(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_TOOL_CALLS_PER_MIN": "3", "PETAL_TRUSTED_PROXIES": "127.0.0.1"})
	call := func(headers ...string) (*http.Response, string) {
		return p.do(t, http.MethodPost, "/api/v1/specs/validate", `{}`, headers...)
	}
	for i := range 3 {
		res, body := call("Cf-Connecting-Ip", "198.51.100.1", "X-Forwarded-For", "10.0.0."+string(rune('1'+i)))
		require.NotEqual(t, http.StatusTooManyRequests, res.StatusCode, "call %d: %s", i+1, body)
	}
	res, body := call("Cf-Connecting-Ip", "198.51.100.1", "X-Forwarded-For", "10.9.9.9")
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	var e struct {
		ToolsVersion string `json:"tools_version"`
		Error        struct {
			Code        string `json:"code"`
			Message     string `json:"message"`
			Hint        string `json:"hint"`
			RetryAfterS int    `json:"retry_after_s"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &e))
	assert.Equal(t, "rate_limited", e.Error.Code)
	assert.Positive(t, e.Error.RetryAfterS)
	assert.LessOrEqual(t, e.Error.RetryAfterS, 60)
	assert.Equal(t, res.Header.Get("Retry-After"), strconv.Itoa(e.Error.RetryAfterS))
	assert.NotEmpty(t, e.Error.Hint)
	assert.Equal(t, toolkit.ToolsVersion, e.ToolsVersion)

	res, body = call("Cf-Connecting-Ip", "198.51.100.2")
	assert.NotEqual(t, http.StatusTooManyRequests, res.StatusCode, "another address: %s", body)
}
