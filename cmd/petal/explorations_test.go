package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// browser is one person's client: it keeps its session cookie.
type browser struct {
	p      *testPetal
	client *http.Client
}

func (p *testPetal) browser(t *testing.T) *browser {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &browser{p: p, client: &http.Client{Jar: jar}}
}

func (b *browser) do(t *testing.T, method, path, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, b.p.URL+path, r)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := b.client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(out)
}

// ok sends a request that must answer 200 and decodes its JSON.
func (b *browser) ok(t *testing.T, method, path, body string, headers ...string) map[string]any {
	t.Helper()
	res, out := b.do(t, method, path, body, headers...)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s %s: %s", method, path, out)
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	return v
}

func tokenOf(t *testing.T, url string) string {
	t.Helper()
	i := strings.LastIndex(url, "/s/")
	require.GreaterOrEqual(t, i, 0, url)
	return url[i+3:]
}

func TestExplorationAccessPerScope(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	owner, stranger := p.browser(t), p.browser(t)

	res, body := owner.do(t, http.MethodPost, "/api/v1/explorations", `{"question":"Who votes in this DAO?","title":"DAO votes"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Empty(t, res.Header.Get("Access-Control-Allow-Origin"), "exploration routes send no CORS headers")
	assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))
	assert.NotEmpty(t, res.Cookies(), "the first write opens an anonymous session")
	var e map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &e))
	id := e["id"].(string)
	assert.Equal(t, "owner", e["access"])

	spec, specName, _ := proposedSpec(t, p, 1)
	step := owner.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/steps", `{"spec":`+mustJSON(t, spec)+`,"note":"first try"}`)
	assert.EqualValues(t, 1, step["seq"])
	assert.Equal(t, specName, step["spec_sha256"], "a step's spec is named as the flowers name it")
	res, body = owner.do(t, http.MethodPost, "/api/v1/explorations/"+id+"/steps", `{"spec":{"schema":"flower-spec/v1"}}`)
	assert.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, body)
	assert.Contains(t, body, `"invalid_spec"`, "an inline spec is checked against its snapshot")
	owner.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/notes", `{"text":"the council decides"}`)
	read := owner.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/links", `{"scope":"read"}`)
	cont := owner.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/links", `{"scope":"continue"}`)
	readTok, contTok := tokenOf(t, read["url"].(string)), tokenOf(t, cont["url"].(string))
	assert.Len(t, readTok, 43, "32 random bytes in base64url")

	list := owner.ok(t, http.MethodGet, "/api/v1/explorations/"+id+"/links", "")
	assert.Len(t, list["links"], 2)
	assert.NotContains(t, mustJSON(t, list), readTok, "links are listed without their tokens")
	assert.Len(t, owner.ok(t, http.MethodGet, "/api/v1/explorations", "")["explorations"], 1)
	assert.Empty(t, stranger.ok(t, http.MethodGet, "/api/v1/explorations", "")["explorations"])

	// One not-found body, whatever the reason.
	_, notFound := stranger.do(t, http.MethodGet, "/api/v1/explorations/exp_00000000000000000000000000000000", "")
	refused := func(b *browser, method, path, body string) {
		t.Helper()
		res, out := b.do(t, method, path, body)
		assert.Equal(t, http.StatusNotFound, res.StatusCode, "%s %s", method, path)
		assert.Equal(t, notFound, out, "%s %s answers as nothing at all", method, path)
	}
	refused(stranger, http.MethodGet, "/api/v1/explorations/"+id, "")
	refused(stranger, http.MethodPost, "/api/v1/explorations/"+id+"/notes", `{"text":"mine now"}`)
	refused(stranger, http.MethodGet, "/api/v1/explorations/"+id+"/links", "")
	refused(stranger, http.MethodPost, "/api/v1/explorations/"+id+"/links", `{"scope":"continue"}`)
	refused(stranger, http.MethodPost, "/api/v1/explorations/"+readTok+"/steps", `{"spec_sha256":"`+strings.Repeat("a", 64)+`"}`)
	refused(stranger, http.MethodGet, "/api/v1/explorations/"+contTok+"/links", "")
	refused(owner, http.MethodGet, "/api/v1/explorations/"+contTok+"/links", "")
	refused(stranger, http.MethodGet, "/api/v1/explorations/not-a-ref", "")

	// A read link reads; a continue link reads and writes.
	got := stranger.ok(t, http.MethodGet, "/api/v1/explorations/"+readTok, "")
	assert.Equal(t, "read", got["access"])
	assert.Len(t, got["steps"], 1)
	assert.Len(t, got["notes"], 1)
	note := stranger.ok(t, http.MethodPost, "/api/v1/explorations/"+contTok+"/notes", `{"text":"from an agent"}`)
	assert.Equal(t, id, note["exploration"])
	assert.Equal(t, "continue", stranger.ok(t, http.MethodGet, "/api/v1/explorations/"+contTok, "")["access"])

	// The resume packet.
	res, md := stranger.do(t, http.MethodGet, "/s/"+readTok, "")
	require.Equal(t, http.StatusOK, res.StatusCode, md)
	assert.Equal(t, "text/plain; charset=UTF-8", res.Header.Get("Content-Type"))
	assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))
	assert.Contains(t, md, "# DAO votes")
	assert.Contains(t, md, "Who votes in this DAO?")
	assert.Contains(t, md, "from an agent")
	assert.NotContains(t, md, "/notes", "a read link's packet offers no writes")
	res, md = stranger.do(t, http.MethodGet, "/s/"+contTok, "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, md, "/api/v1/explorations/"+contTok+"/notes")

	// A revoked link stops at once.
	revoked := owner.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/links/"+cont["id"].(string)+"/revoke", "")
	assert.NotNil(t, revoked["revoked_at"])
	refused(stranger, http.MethodPost, "/api/v1/explorations/"+contTok+"/notes", `{"text":"too late"}`)
	refused(stranger, http.MethodGet, "/api/v1/explorations/"+contTok, "")
	res, md = stranger.do(t, http.MethodGet, "/s/"+contTok, "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Equal(t, "text/plain; charset=UTF-8", res.Header.Get("Content-Type"))
	assert.Equal(t, "not found\n", md)
	res, _ = stranger.do(t, http.MethodGet, "/s/whatever", "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)

	// A POST from another site is unauthorised.
	res, body = owner.do(t, http.MethodPost, "/api/v1/explorations/"+id+"/notes", `{"text":"x"}`, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	assert.Contains(t, body, `"unauthorised"`)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestIdempotentCreates(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	a, b := p.browser(t), p.browser(t)
	key := "Idempotency-Key"

	first := a.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"q1","title":"t1"}`, key, "k-1")
	again := a.ok(t, http.MethodPost, "/api/v1/explorations", `{ "title": "t1", "question": "q1" }`, key, "k-1")
	assert.Equal(t, first, again, "the same caller, key and body (in any field order) answer the original object")
	res, body := a.do(t, http.MethodPost, "/api/v1/explorations", `{"question":"q2"}`, key, "k-1")
	assert.Equal(t, http.StatusConflict, res.StatusCode, body)
	assert.Contains(t, body, "already used for a different request")
	// Another caller, with a session of its own (without one, a caller is
	// its address, which b shares with a).
	b.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"b's own"}`)
	other := b.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"q1","title":"t1"}`, key, "k-1")
	assert.NotEqual(t, first["id"], other["id"], "another caller's key is theirs")
	assert.Len(t, a.ok(t, http.MethodGet, "/api/v1/explorations", "")["explorations"], 1)

	id := first["id"].(string)
	spec, _, snapshot := proposedSpec(t, p, 2)
	s1 := a.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/steps", `{"spec":`+mustJSON(t, spec)+`,"note":"n"}`, key, "s-1")
	s2 := a.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/steps", reversedJSON(map[string]any{"spec": spec, "note": "n"}), key, "s-1")
	assert.Equal(t, s1, s2)
	res, _ = a.do(t, http.MethodPost, "/api/v1/explorations/"+id+"/steps", `{"spec_sha256":"`+snapshot+`"}`, key, "s-1")
	assert.Equal(t, http.StatusConflict, res.StatusCode)
	n1 := a.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/notes", `{"text":"hello"}`, key, "n-1")
	n2 := a.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/notes", `{"text":"hello"}`, key, "n-1")
	assert.Equal(t, n1, n2)
	whole := a.ok(t, http.MethodGet, "/api/v1/explorations/"+id, "")
	assert.Len(t, whole["steps"], 1, "a repeated step is saved once")
	assert.Len(t, whole["notes"], 1, "a repeated note is kept once")

	res, body = a.do(t, http.MethodPost, "/api/v1/explorations", `{"question":"q"}`, key, strings.Repeat("k", 201))
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	// A failed create frees its key.
	res, _ = a.do(t, http.MethodPost, "/api/v1/explorations", `{"question":""}`, key, "k-2")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	a.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"now right"}`, key, "k-2")
}

func TestClaimAnUnownedExploration(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: p.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "start_exploration", Arguments: map[string]any{"question": "made by an agent"}})
	require.NoError(t, err)
	require.False(t, r.IsError)
	var made map[string]any
	require.NoError(t, json.Unmarshal([]byte(mustJSON(t, r.StructuredContent)), &made))
	id := made["id"].(string)
	assert.Equal(t, "continue", made["access"], "made without a session, its id opens it")

	person, stranger := p.browser(t), p.browser(t)
	stranger.ok(t, http.MethodGet, "/api/v1/explorations/"+id, "")
	res, body := person.do(t, http.MethodPost, "/api/v1/explorations/"+id+"/claim", `{"owner":"me"}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, "claim takes no body: %s", body)
	claimed := person.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/claim", "{}")
	assert.Equal(t, map[string]any{"tools_version": "1.0.0", "exploration": id, "claimed": true}, claimed)
	assert.Equal(t, "owner", person.ok(t, http.MethodGet, "/api/v1/explorations/"+id, "")["access"])
	res, _ = stranger.do(t, http.MethodGet, "/api/v1/explorations/"+id, "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "once owned, the id opens it to its owner alone")
	res, _ = stranger.do(t, http.MethodPost, "/api/v1/explorations/"+id+"/claim", "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
}

// The owner's lists page with a cursor, and an exploration holds at most
// MaxLiveLinks links that work: the one past it is refused and stores nothing.
func TestExplorationListsPageAndLinksAreCapped(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	owner := p.browser(t)
	var ids []string
	for range 3 {
		ids = append(ids, owner.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"Who holds this token?"}`)["id"].(string))
	}
	first := owner.ok(t, http.MethodGet, "/api/v1/explorations?limit=2", "")
	require.Len(t, first["explorations"], 2)
	require.NotNil(t, first["next_cursor"])
	rest := owner.ok(t, http.MethodGet, "/api/v1/explorations?limit=2&cursor="+first["next_cursor"].(string), "")
	require.Len(t, rest["explorations"], 1)
	assert.Nil(t, rest["next_cursor"], "the last page says so")
	seen := map[string]bool{}
	for _, page := range []map[string]any{first, rest} {
		for _, e := range page["explorations"].([]any) {
			seen[e.(map[string]any)["id"].(string)] = true
		}
	}
	assert.Len(t, seen, 3, "the pages hold each exploration once")
	res, body := owner.do(t, http.MethodGet, "/api/v1/explorations?cursor=nonsense", "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, "cursor")

	id := ids[0]
	for range 100 {
		owner.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/links", `{"scope":"read"}`)
	}
	res, body = owner.do(t, http.MethodPost, "/api/v1/explorations/"+id+"/links", `{"scope":"read"}`)
	assert.Equal(t, http.StatusConflict, res.StatusCode, body)
	assert.Contains(t, body, `"conflict"`)
	assert.Contains(t, body, `"hint"`)

	links := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 3)
		page := owner.ok(t, http.MethodGet, "/api/v1/explorations/"+id+"/links?limit=60&cursor="+cursor, "")
		for _, l := range page["links"].([]any) {
			links[l.(map[string]any)["id"].(string)] = true
		}
		if page["next_cursor"] == nil {
			break
		}
		cursor = page["next_cursor"].(string)
	}
	assert.Len(t, links, 100, "the refused link was not stored")
	for _, bad := range []string{"limit=0", "limit=201", "limit=x", "cursor=nonsense"} {
		res, body := owner.do(t, http.MethodGet, "/api/v1/explorations/"+id+"/links?"+bad, "")
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s", bad, body)
	}

	var some string
	for l := range links {
		some = l
		break
	}
	owner.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/links/"+some+"/revoke", "")
	owner.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/links", `{"scope":"read"}`)
}

// A client that keeps no cookies sending one Idempotency-Key and body twice
// makes one exploration: without a session the key is the address's, looked
// up before an anonymous session is opened (issue 33, item 11).
func TestAnIdempotencyKeyWithoutACookieMakesOneExploration(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	send := func(body string) (*http.Response, map[string]any) {
		res, raw := p.do(t, http.MethodPost, "/api/v1/explorations", body, "Idempotency-Key", "no-cookies-1")
		require.Equal(t, http.StatusOK, res.StatusCode, raw)
		return res, jsonOf(t, raw)
	}
	firstRes, first := send(`{"question":"who holds power here?"}`)
	againRes, again := send(`{ "question": "who holds power here?" }`)
	assert.Equal(t, first, again, "the second answers the first's exploration")
	assert.NotEmpty(t, firstRes.Header.Values("Set-Cookie"), "the first opened a session")
	assert.Empty(t, againRes.Header.Values("Set-Cookie"), "the second opened none")
	var made, sessions int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM explorations`).Scan(&made))
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM sessions`).Scan(&sessions))
	assert.Equal(t, 1, made, "one exploration for one key")
	assert.Equal(t, 1, sessions, "one anonymous session")
	res, raw := p.do(t, http.MethodPost, "/api/v1/explorations", `{"question":"another"}`, "Idempotency-Key", "no-cookies-1")
	assert.Equal(t, http.StatusConflict, res.StatusCode, raw)
}
