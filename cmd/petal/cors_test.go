package main

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/petal-near/petal/adapters/http"
)

// sessionPaths are the contract's routes that send no CORS headers at all:
// the auth routes, /api/v1/me* and /api/v1/explorations*.
var sessionPaths = regexp.MustCompile(`^/api/v1/(auth|me|explorations)(/|$)`)

// Every route of the real wiring, whichever area added it, follows the CORS
// rule: open (and never with credentials) on tool and agent routes, absent on
// the session routes. A request from another site is sent to each.
func TestEveryRouteFollowsTheCORSRule(t *testing.T) {
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
		res, _ := p.do(t, method, path, body, "Origin", "https://elsewhere.example", "Cf-Connecting-Ip", "203.0.113.77")
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
