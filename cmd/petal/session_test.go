package main

import (
	"crypto/rand"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/app/peopleapp"
	"github.com/petal-near/petal/domain/people"
)

// mutableClock is a clock a test moves.
type mutableClock struct{ t time.Time }

func (c *mutableClock) Now() time.Time { return c.t }

// sessionFor stores a session for subject straight in the test's database and
// returns its cookie value.
func sessionFor(t *testing.T, p *testPetal, subject string, now time.Time) string {
	t.Helper()
	token, sess, err := people.NewSession(rand.Reader, subject, now)
	require.NoError(t, err)
	if people.IsPerson(subject) {
		_, err := p.DB.Pool.Exec(t.Context(), `INSERT INTO people (id) VALUES ($1) ON CONFLICT DO NOTHING`, subject)
		require.NoError(t, err)
	}
	require.NoError(t, postgres.NewSessionRepository(p.DB.DB).CreateSession(t.Context(), sess))
	return token
}

func TestMeNeedsAPersonSession(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	res, body := p.do(t, http.MethodGet, "/api/v1/me", "")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	assert.Contains(t, body, `"unauthorised"`)
	assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))
	assert.Empty(t, res.Header.Get("Access-Control-Allow-Origin"))

	anon, _ := people.NewAnonymousHandle(rand.Reader)
	tok := sessionFor(t, p, anon, time.Now())
	res, body = p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", "petal_session="+tok)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "an anonymous session is not a person: %s", body)

	person, _ := people.NewPersonID(rand.Reader)
	tok = sessionFor(t, p, person, time.Now())
	res, body = p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", "petal_session="+tok)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"person_id":"`+person+`"`)

	res, _ = p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", "petal_session=not-a-token")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)

	res, _ = p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", "__Host-petal_session="+tok)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "an http:// site reads only petal_session")

	expired := sessionFor(t, p, person, time.Now().Add(-people.SessionLifetime-time.Minute))
	res, _ = p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", "petal_session="+expired)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "an expired session is no session")
}

func TestLogoutEndsTheSession(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_API": "https://petal.example"})
	person, _ := people.NewPersonID(rand.Reader)
	tok := sessionFor(t, p, person, time.Now())
	cookie := "__Host-petal_session=" + tok

	res, body := p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)

	res, body = p.do(t, http.MethodPost, "/api/v1/auth/logout", "", "Cookie", cookie, "Origin", "https://evil.example")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	res, _ = p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", cookie)
	assert.Equal(t, http.StatusOK, res.StatusCode, "a refused logout changes nothing")

	res, body = p.do(t, http.MethodPost, "/api/v1/auth/logout", "", "Cookie", cookie, "Origin", "https://petal.example")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","ok":true}`, body)
	var cleared *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "__Host-petal_session" {
			cleared = c
		}
	}
	require.NotNil(t, cleared)
	assert.Equal(t, -1, cleared.MaxAge)
	assert.True(t, cleared.Secure)

	res, _ = p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", cookie)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "the session is gone from the store")
	var n int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM sessions`).Scan(&n))
	assert.Zero(t, n)
}

func TestSessionServiceResolveAndReplace(t *testing.T) {
	p := startPetal(t, nil)
	now := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	clock := &mutableClock{t: now}
	svc := peopleapp.NewSessionService(postgres.NewSessionRepository(p.DB.DB), clock, rand.Reader)
	ctx := t.Context()

	token, sess, err := svc.OpenAnonymous(ctx)
	require.NoError(t, err)
	got, ok, err := svc.Resolve(ctx, token)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, sess.Subject, got.Subject)
	assert.Equal(t, people.HashToken(token), got.ID)

	var stored string
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT id FROM sessions`).Scan(&stored))
	assert.NotEqual(t, token, stored, "the token itself is never stored")

	inv := mintInvite(t, p, "1")
	_, err = p.DB.Pool.Exec(ctx, `UPDATE sessions SET invite_id = $1`, inv.ID)
	require.NoError(t, err)
	got, _, _ = svc.Resolve(ctx, token)
	person, _ := people.NewPersonID(rand.Reader)
	_, err = p.DB.Pool.Exec(ctx, `INSERT INTO people (id) VALUES ($1)`, person)
	require.NoError(t, err)
	newToken, replaced, err := svc.Replace(ctx, got, person, "")
	require.NoError(t, err)
	assert.Equal(t, inv.ID, replaced.InviteID, "the invite moves to the new session")
	_, ok, _ = svc.Resolve(ctx, token)
	assert.False(t, ok, "the old token no longer works")
	got, ok, _ = svc.Resolve(ctx, newToken)
	require.True(t, ok)
	assert.Equal(t, person, got.Subject)

	clock.t = now.Add(people.SessionLifetime)
	_, ok, err = svc.Resolve(ctx, newToken)
	require.NoError(t, err)
	assert.False(t, ok, "30 days on, the session is over")
	_, ok, _ = svc.Resolve(ctx, "")
	assert.False(t, ok)
}
