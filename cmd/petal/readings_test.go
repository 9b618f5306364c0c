package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/snapshots"
)

// reading is a valid snapshot whose name changes with height.
func reading(t *testing.T, height uint64) (sha string, body []byte) {
	t.Helper()
	s := snapshots.Snapshot{
		Schema: snapshots.Schema, Network: "near-dao-members",
		Params: json.RawMessage(`{"chain":"near:mainnet","dao":"marketing.sputnik-dao.near"}`),
		Chain:  snapshots.Mainnet,
		Block:  snapshots.Block{Height: height, Hash: "h", Time: "2026-11-01T12:00:00Z"},
		Title:  "Members of marketing.sputnik-dao.near", About: "roles",
		Groups: []snapshots.Group{{ID: "council", Label: "Council"}},
		Accounts: []snapshots.Account{
			{ID: "near:mainnet:alice.near", Label: "alice.near", Weight: "1", Groups: []string{"council"}},
		},
		Source: snapshots.Source{Calls: []snapshots.Call{{Contract: "marketing.sputnik-dao.near", Method: "get_policy"}}},
	}
	sha, _, err := snapshots.Name(s)
	require.NoError(t, err)
	body, err = json.MarshalIndent(s, "", "  ") // not canonical as sent: the name is of its canonical form
	require.NoError(t, err)
	return sha, body
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func (b *browser) put(t *testing.T, path string, body []byte, headers ...string) (*http.Response, string) {
	t.Helper()
	return b.do(t, http.MethodPut, path, string(body), headers...)
}

func TestPostedReadings(t *testing.T) {
	t.Parallel()
	// One address's share (2) is below the site's cap (3): what it leaves
	// is another address's (issue 33 #8).
	p := startPetal(t, map[string]string{"PETAL_POSTED_SNAPSHOTS_PER_DAY": "3", "PETAL_POSTED_SNAPSHOTS_PER_ADDRESS": "2",
		"PETAL_TRUSTED_PROXIES": "127.0.0.1"}) // so cf-connecting-ip names the other poster
	owner, agent, stranger := p.browser(t), p.browser(t), p.browser(t)
	id := owner.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"who is on the council?"}`)["id"].(string)
	cont := tokenOf(t, owner.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/links", `{"scope":"continue"}`)["url"].(string))
	read := tokenOf(t, owner.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/links", `{"scope":"read"}`)["url"].(string))
	at := func(ref, sha string) string { return "/api/v1/explorations/" + ref + "/snapshots/" + sha }

	shaA, a := reading(t, 1)
	got := owner.ok(t, http.MethodPut, at(id, shaA), string(a))
	assert.Equal(t, map[string]any{"tools_version": "1.0.0", "exploration": id, "sha256": shaA, "stored": true, "origin": "their_machine"}, got)
	again := agent.ok(t, http.MethodPut, at(cont, shaA), string(gzipped(t, a)), "Content-Encoding", "gzip")
	assert.Equal(t, false, again["stored"], "a reading the site holds is stored once")
	assert.Equal(t, id, again["exploration"])

	// Anyone else: the one not-found body, before the body is even read.
	_, notFound := stranger.do(t, http.MethodGet, "/api/v1/explorations/"+id, "")
	for _, ref := range []string{id, read} {
		res, body := stranger.put(t, at(ref, shaA), a)
		assert.Equal(t, http.StatusNotFound, res.StatusCode)
		assert.Equal(t, notFound, body)
		res, body = stranger.put(t, at(ref, shaA), []byte("not gzip"), "Content-Encoding", "gzip")
		assert.Equal(t, http.StatusNotFound, res.StatusCode)
		assert.Equal(t, notFound, body)
	}

	// The wrong name, or not a snapshot.
	shaB, b := reading(t, 2)
	res, body := owner.put(t, at(id, shaA), b)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, "not the "+shaA)
	res, body = owner.put(t, at(id, "abc"), b)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	res, body = owner.put(t, at(id, shaB), []byte(strings.Replace(string(b), `"snapshot/v1"`, `"snapshot/v0"`, 1)))
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, `"bad_input"`)

	// A gzip bomb is refused without inflating past the cap.
	bomb := gzipped(t, bytes.Repeat([]byte(" "), 33<<20))
	require.Less(t, len(bomb), 2<<20, "small on the wire")
	res, body = owner.put(t, at(id, shaB), bomb, "Content-Encoding", "gzip")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, "32 MiB")
	// Past 2 MiB on the wire.
	res, body = owner.put(t, at(id, shaB), bytes.Repeat([]byte(" "), 2<<20+1))
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, "2 MiB")

	// The day's caps count new readings only.
	assert.Equal(t, true, agent.ok(t, http.MethodPut, at(cont, shaB), string(b))["stored"])
	shaC, c := reading(t, 3)
	res, body = owner.put(t, at(id, shaC), c)
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Contains(t, body, `"rate_limited"`)
	assert.Contains(t, body, "this address posted the 2 new readings one address may post today")
	assert.NotEmpty(t, res.Header.Get("Retry-After"))
	assert.Equal(t, false, owner.ok(t, http.MethodPut, at(id, shaA), string(a))["stored"], "one already held still answers")

	// One address took its share, not the site's: another still posts, and
	// only then is the site's cap reached.
	other := stranger.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"mine"}`, "Cf-Connecting-Ip", "192.0.2.7")["id"].(string)
	res, body = stranger.put(t, at(other, shaC), c, "Cf-Connecting-Ip", "192.0.2.7")
	assert.Equal(t, http.StatusOK, res.StatusCode, body)
	shaD, d := reading(t, 4)
	res, body = stranger.put(t, at(other, shaD), d, "Cf-Connecting-Ip", "192.0.2.8")
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Contains(t, body, "this site took all the new readings it takes today")
}

// proposedSpec posts a reading and has propose_spec draw a spec of it: a
// spec valid against a snapshot this site holds.
func proposedSpec(t *testing.T, p *testPetal, height uint64) (spec map[string]any, name, snapshot string) {
	t.Helper()
	b := p.browser(t)
	id := b.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"a reading to draw"}`)["id"].(string)
	sha, body := reading(t, height)
	b.ok(t, http.MethodPut, "/api/v1/explorations/"+id+"/snapshots/"+sha, string(body))
	got := b.ok(t, http.MethodPost, "/api/v1/specs/propose", `{"sha256":"`+sha+`"}`)
	return got["spec"].(map[string]any), got["spec_sha256"].(string), sha
}

// reversedJSON writes v with every object's fields in reverse order, to show
// that what is compared does not depend on field order.
func reversedJSON(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			kb, _ := json.Marshal(k)
			parts = append(parts, string(kb)+":"+reversedJSON(x[k]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			parts = append(parts, reversedJSON(e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
