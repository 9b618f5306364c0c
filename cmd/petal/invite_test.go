package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

// petalCLI runs the petal command against the test's database.
func petalCLI(t testing.TB, p *testPetal, args ...string) (string, string, int) {
	t.Helper()
	t.Setenv("DATABASE_URL", p.DB.URL)
	t.Setenv("PETAL_LOG_FORMAT", "text")
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

type minted struct {
	ID        string  `json:"id"`
	Token     string  `json:"token"`
	BudgetUSD float64 `json:"budget_usd"`
	ExpiresAt string  `json:"expires_at"`
}

func mintInvite(t testing.TB, p *testPetal, args ...string) minted {
	t.Helper()
	out, errOut, code := petalCLI(t, p, append([]string{"invite", "mint"}, append(args, "--json")...)...)
	require.Equal(t, 0, code, errOut)
	var m minted
	require.NoError(t, json.Unmarshal([]byte(out), &m), out)
	return m
}

func cookieOf(res *http.Response, name string) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func TestInvitesThroughTheCLIAndTheSession(t *testing.T) {
	p := startPetal(t, nil)
	m := mintInvite(t, p, "0.05", "--days", "3")
	assert.Regexp(t, `^inv_[0-9a-f]{32}$`, m.ID)
	assert.True(t, strings.HasPrefix(m.Token, "petal_invite_"))
	assert.Equal(t, 0.05, m.BudgetUSD)

	var stored string
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT token_hash FROM invites WHERE id = $1`, m.ID).Scan(&stored))
	assert.NotContains(t, stored, m.Token, "only the token's hash is stored")

	// Text output prints the token once too.
	out, _, code := petalCLI(t, p, "invite", "mint", "2")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "petal_invite_")

	// No session yet: GET answers null and opens nothing.
	res, body := p.do(t, http.MethodGet, "/api/v1/auth/invite", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","invite":null}`, body)
	assert.Nil(t, cookieOf(res, "petal_session"))

	// Redeeming opens an anonymous session and holds the invite in it.
	res, body = p.do(t, http.MethodPost, "/api/v1/auth/invite", `{"token":"`+m.Token+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"status":"active"`)
	assert.Contains(t, body, `"budget_usd":0.05`)
	assert.Contains(t, body, `"left_usd":0.05`)
	ck := cookieOf(res, "petal_session")
	require.NotNil(t, ck, "an anonymous session was opened")
	assert.True(t, ck.HttpOnly)
	assert.Equal(t, http.SameSiteLaxMode, ck.SameSite)
	assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))

	res, body = p.do(t, http.MethodGet, "/api/v1/auth/invite", "", "Cookie", "petal_session="+ck.Value)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"status":"active"`)

	// A second browser redeems the same token: one budget, two sessions.
	res, body = p.do(t, http.MethodPost, "/api/v1/auth/invite", `{"token":"`+m.Token+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var sessions int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM sessions WHERE invite_id = $1`, m.ID).Scan(&sessions))
	assert.Equal(t, 2, sessions)

	// Redeeming with a session keeps it (no new cookie).
	res, body = p.do(t, http.MethodPost, "/api/v1/auth/invite", `{"token":"`+m.Token+`"}`, "Cookie", "petal_session="+ck.Value)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Nil(t, cookieOf(res, "petal_session"))

	// The list shows it.
	out, _, code = petalCLI(t, p, "invite", "list")
	require.Equal(t, 0, code)
	assert.Contains(t, out, m.ID)
	assert.Contains(t, out, "active")

	// Revoked: the held invite shows revoked, and redeeming is unauthorised.
	out, errOut, code := petalCLI(t, p, "invite", "revoke", m.ID)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "revoked")
	res, body = p.do(t, http.MethodGet, "/api/v1/auth/invite", "", "Cookie", "petal_session="+ck.Value)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `"status":"revoked"`)
	res, body = p.do(t, http.MethodPost, "/api/v1/auth/invite", `{"token":"`+m.Token+`"}`)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	assert.Nil(t, cookieOf(res, "petal_session"), "a refused token opens no session")
	out, _, _ = petalCLI(t, p, "invite", "list")
	assert.Contains(t, out, "revoked")
}

func TestInviteRefusals(t *testing.T) {
	p := startPetal(t, map[string]string{"PETAL_API": "https://petal.example"})
	m := mintInvite(t, p, "1")
	cases := []struct {
		name, body string
		headers    []string
		status     int
		code       string
	}{
		{"unknown token", `{"token":"petal_invite_nope"}`, nil, 401, "unauthorised"},
		{"empty token", `{"token":""}`, nil, 400, "bad_input"},
		{"unknown field", `{"token":"` + m.Token + `","x":1}`, nil, 400, "bad_input"},
		{"not JSON", `token`, nil, 400, "bad_input"},
		{"from another site", `{"token":"` + m.Token + `"}`, []string{"Origin", "https://evil.example"}, 401, "unauthorised"},
		{"cross-site without Origin", `{"token":"` + m.Token + `"}`, []string{"Sec-Fetch-Site", "cross-site"}, 401, "unauthorised"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, body := p.do(t, http.MethodPost, "/api/v1/auth/invite", tc.body, tc.headers...)
			assert.Equal(t, tc.status, res.StatusCode, body)
			assert.Contains(t, body, `"code":"`+tc.code+`"`)
		})
	}
	var n int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM sessions`).Scan(&n))
	assert.Zero(t, n, "refusals open no session")

	// Expired and spent, set straight in the ledger.
	expired := mintInvite(t, p, "1", "--days", "1")
	_, err := p.DB.Pool.Exec(t.Context(), `UPDATE credit_accounts SET expires_at = now() - interval '1 second' WHERE id = 'invite:' || $1`, expired.ID)
	require.NoError(t, err)
	res, body := p.do(t, http.MethodPost, "/api/v1/auth/invite", `{"token":"`+expired.Token+`"}`)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)

	spent := mintInvite(t, p, "0.05")
	_, err = p.DB.Pool.Exec(t.Context(), `UPDATE credit_accounts SET spent_micros = 50000 WHERE id = 'invite:' || $1`, spent.ID)
	require.NoError(t, err)
	res, body = p.do(t, http.MethodPost, "/api/v1/auth/invite", `{"token":"`+spent.Token+`"}`)
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Contains(t, body, `"code":"budget_exhausted"`)

	// The secure site's cookie.
	res, body = p.do(t, http.MethodPost, "/api/v1/auth/invite", `{"token":"`+m.Token+`"}`, "Origin", "https://petal.example")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	ck := cookieOf(res, "__Host-petal_session")
	require.NotNil(t, ck)
	assert.True(t, ck.Secure)
	assert.Equal(t, "/", ck.Path)
}

func TestInviteCLIRefusals(t *testing.T) {
	p := startPetal(t, nil)
	for _, args := range [][]string{
		{"invite"},
		{"invite", "mint"},
		{"invite", "mint", "0"},
		{"invite", "mint", "-1"},
		{"invite", "mint", "abc"},
		{"invite", "mint", "1", "--days", "0"},
		{"invite", "mint", "1", "2"},
		{"invite", "revoke"},
		{"invite", "revoke", "inv_00000000000000000000000000000000"},
		{"invite", "frobnicate"},
	} {
		_, errOut, code := petalCLI(t, p, args...)
		assert.Equal(t, 1, code, "%v: %s", args, errOut)
		assert.NotEmpty(t, errOut, "%v says why", args)
	}
	var n int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM invites`).Scan(&n))
	assert.Zero(t, n, "a refused mint makes nothing")
}

// petal invite opens the database as serve does, but never migrates it: on
// a database whose schema is behind it refuses, naming petal migrate up, and
// leaves the schema as it was.
func TestInviteNeverMigrates(t *testing.T) {
	t.Setenv("DATABASE_URL", pgtest.NewEmptyURL(t))
	t.Setenv("PETAL_LOG_FORMAT", "text")
	for _, args := range [][]string{{"invite", "list"}, {"invite", "mint", "5"}} {
		var out, errOut bytes.Buffer
		code := run(args, &out, &errOut)
		assert.Equal(t, 1, code, "%v", args)
		assert.Contains(t, errOut.String(), "petal migrate up", "%v names the way forward", args)
		assert.Empty(t, out.String(), "%v", args)
	}
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run([]string{"migrate", "version"}, &out, &errOut), errOut.String())
	assert.Equal(t, "version 0\n", out.String(), "the schema is where it was")
}
