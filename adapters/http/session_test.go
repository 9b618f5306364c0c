package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
)

func testConfig(t *testing.T, api string) config.Config {
	t.Helper()
	cfg, err := config.LoadConfig(func(k string) string {
		if k == "PETAL_API" {
			return api
		}
		return ""
	})
	require.NoError(t, err)
	return cfg
}

func TestCheckOrigin(t *testing.T) {
	cases := []struct {
		name      string
		api       string
		host      string
		origin    string
		fetchSite string
		ok        bool
	}{
		{"the site itself", "https://petal.example", "petal.example", "https://petal.example", "same-origin", true},
		{"the site in another case", "https://petal.example", "petal.example", "https://PETAL.example", "", true},
		{"another site", "https://petal.example", "petal.example", "https://evil.example", "cross-site", false},
		{"http instead of https", "https://petal.example", "petal.example", "http://petal.example", "", false},
		{"a subdomain", "https://petal.example", "petal.example", "https://a.petal.example", "same-site", false},
		{"null origin", "https://petal.example", "petal.example", "null", "", false},
		{"no Origin, not a browser", "https://petal.example", "petal.example", "", "", true},
		{"no Origin but cross-site", "https://petal.example", "petal.example", "", "cross-site", false},
		{"no Origin, same-origin fetch", "https://petal.example", "petal.example", "", "same-origin", true},
		{"a local page on a public site", "https://petal.example", "localhost:8787", "http://localhost:8787", "", false},
		{"local site, page on the Host asked", "", "localhost:8787", "http://localhost:8787", "same-origin", true},
		{"local site, 127.0.0.1 page on the Host asked", "", "127.0.0.1:8787", "http://127.0.0.1:8787", "", true},
		{"local site, local page on another port", "", "localhost:8787", "http://localhost:3000", "", false},
		{"local site, a foreign page", "", "localhost:8787", "https://evil.example", "cross-site", false},
		{"local site, foreign Host header", "", "evil.example", "http://evil.example", "", false},
		{"PETAL_API on localhost, its own origin", "http://localhost:8787", "localhost:8787", "http://localhost:8787", "", true},
		{"PETAL_API on localhost, a local page on the Host asked", "http://localhost:8787", "127.0.0.1:9000", "http://127.0.0.1:9000", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{deps: Deps{Config: testConfig(t, tc.api)}}
			req := httptest.NewRequest(http.MethodPost, "/api/v1/auth/logout", nil)
			req.Host = tc.host
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.fetchSite != "" {
				req.Header.Set("Sec-Fetch-Site", tc.fetchSite)
			}
			c := echo.New().NewContext(req, httptest.NewRecorder())
			err := s.checkOrigin(c)
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.True(t, errs.Is(err, errs.Unauthorised), "want unauthorised, got %v", err)
			}
		})
	}
}

func TestSessionCookie(t *testing.T) {
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	sess := people.Session{CreatedAt: now, ExpiresAt: now.Add(people.SessionLifetime)}
	for _, tc := range []struct {
		api    string
		name   string
		secure bool
	}{
		{"https://petal.example", "__Host-petal_session", true},
		{"http://petal.example", "petal_session", false},
		{"", "petal_session", false},
	} {
		s := &Server{deps: Deps{Config: testConfig(t, tc.api)}}
		rec := httptest.NewRecorder()
		c := echo.New().NewContext(httptest.NewRequest(http.MethodPost, "/", nil), rec)
		s.setSessionCookie(c, "tok", sess)
		res := rec.Result()
		require.Len(t, res.Cookies(), 1)
		ck := res.Cookies()[0]
		assert.Equal(t, tc.name, ck.Name, tc.api)
		assert.Equal(t, "tok", ck.Value)
		assert.Equal(t, "/", ck.Path)
		assert.Empty(t, ck.Domain, "a __Host- cookie has no Domain")
		assert.True(t, ck.HttpOnly)
		assert.Equal(t, tc.secure, ck.Secure)
		assert.Equal(t, http.SameSiteLaxMode, ck.SameSite)
		assert.Equal(t, int(people.SessionLifetime.Seconds()), ck.MaxAge)
	}
}
