package main

// What strangers can write (issue 10, items 8, 9 and 12): the data budget,
// the per-item caps, paging, sessions opened only after every refusal, and
// the small ones, each request through the real listener.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/runs"
)

func count(t *testing.T, p *testPetal, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), query, args...).Scan(&n))
	return n
}

func sessions(t *testing.T, p *testPetal) int { return count(t, p, `SELECT count(*) FROM sessions`) }

func errorOf(t *testing.T, body string) (code, message, hint string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message, Hint string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	return e.Error.Code, e.Error.Message, e.Error.Hint
}

// Item 9: a gated chat refused for want of an invite stores no session.
func TestAGatedChatRefusedStoresNoSession(t *testing.T) {
	t.Parallel()
	fake := nearaitest.New(t)
	env := modelEnv(fake)
	env["PETAL_AGENT_ACCESS"] = "gated"
	p := startPetal(t, env)
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusForbidden, res.StatusCode, body)
	code, _, _ := errorOf(t, body)
	assert.Equal(t, "invite_required", code)
	assert.Empty(t, res.Cookies(), "no cookie")
	assert.Zero(t, sessions(t, p), "no session stored")
	assert.Zero(t, count(t, p, `SELECT count(*) FROM runs`))
	assert.Empty(t, fake.Completions())
}

// On an open site the chat passes the gate, so it gets its session then.
func TestAnOpenChatOpensItsSessionOncePastTheGate(t *testing.T) {
	t.Parallel()
	fake := nearaitest.New(t, nearaitest.Completion("a1", "deepseek-ai/DeepSeek-V3.1", "Hello."))
	env := modelEnv(fake)
	env["PETAL_NEW_CHATS_PER_HOUR"] = "1"
	p := startPetal(t, env)
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	sessionCookie(t, res)
	assert.Equal(t, 1, sessions(t, p))
	// Over the new chats' limit: refused, and no second session.
	res, body = p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Empty(t, res.Cookies())
	assert.Equal(t, 1, sessions(t, p), "a rate-limited chat stores no session")
}

// Item 9: a rate-limited start_exploration stores no session.
func TestARateLimitedStartStoresNoSession(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_TOOL_CALLS_PER_MIN": "1"})
	first, second := p.browser(t), p.browser(t)
	res, body := first.do(t, http.MethodPost, "/api/v1/explorations", `{"question":"who?"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.Equal(t, 1, sessions(t, p))
	res, body = second.do(t, http.MethodPost, "/api/v1/explorations", `{"question":"who?"}`)
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Empty(t, res.Cookies())
	assert.Equal(t, 1, sessions(t, p), "the refused start opened no session")
	assert.Equal(t, 1, count(t, p, `SELECT count(*) FROM explorations`))
}

// Item 9: a claim of a garbage ref stores no session; a bad body neither.
func TestAClaimOfAGarbageRefStoresNoSession(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	for _, ref := range []string{"garbage", "exp_00000000000000000000000000000000", strings.Repeat("A", 43)} {
		res, body := p.do(t, http.MethodPost, "/api/v1/explorations/"+ref+"/claim", "")
		assert.Equal(t, http.StatusNotFound, res.StatusCode, body)
		assert.Empty(t, res.Cookies(), ref)
	}
	res, _ := p.do(t, http.MethodPost, "/api/v1/explorations/garbage/claim", `{"x":1}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	// A refused write of any kind opens nothing either.
	res, _ = p.do(t, http.MethodPost, "/api/v1/explorations", `{"question":""}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	res, _ = p.do(t, http.MethodPost, "/api/v1/explorations/garbage/notes", `{"text":"x"}`)
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Zero(t, sessions(t, p))
}

// Item 8: past the data budget, what a stranger writes is 429
// budget_exhausted and stores nothing; a signed-in person goes on.
func TestTheDataBudget(t *testing.T) {
	t.Parallel()
	// 0.001 MiB is 1,048 bytes: a start (128 + its text) and one note of 300
	// characters (128 + 300) fit, a second note does not.
	p := startPetal(t, map[string]string{"PETAL_DATA_BUDGET_MB": "0.001"})
	stranger := p.browser(t)
	id := stranger.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"`+strings.Repeat("q", 100)+`"}`)["id"].(string)
	note := `{"text":"` + strings.Repeat("n", 300) + `"}`
	stranger.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/notes", note)
	res, body := stranger.do(t, http.MethodPost, "/api/v1/explorations/"+id+"/notes", note)
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	code, _, hint := errorOf(t, body)
	assert.Equal(t, "budget_exhausted", code)
	assert.Contains(t, hint, "sign in")
	assert.NotEmpty(t, res.Header.Get("Retry-After"), "until midnight UTC")
	assert.Equal(t, 1, count(t, p, `SELECT count(*) FROM exploration_notes`), "the refused note stored nothing")
	spent := count(t, p, `SELECT bytes FROM data_budget_days`)
	assert.Equal(t, 128+100+128+300, spent, "counted in bytes, in PostgreSQL")

	// Another stranger's start that won't fit what is left: refused before
	// a session is opened for it.
	before := sessions(t, p)
	res, body = p.do(t, http.MethodPost, "/api/v1/explorations", `{"question":"`+strings.Repeat("m", 300)+`"}`)
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Empty(t, res.Cookies())
	assert.Equal(t, before, sessions(t, p))
	// A posted reading too, before its body is read.
	sha, reading := reading(t, 1)
	res, body = stranger.put(t, "/api/v1/explorations/"+id+"/snapshots/"+sha, reading)
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Contains(t, body, `"budget_exhausted"`)
	assert.Zero(t, count(t, p, `SELECT count(*) FROM snapshots WHERE sha256 = $1`, sha))
	assert.Zero(t, count(t, p, `SELECT count(*) FROM exploration_readings`))
	// And a recorded chat, whose thread is what a stranger stores.
	res, body = p.do(t, http.MethodPost, "/api/v1/agent/chat", `{"messages":[{"role":"user","content":"draw `+strings.Repeat("x", 400)+`"}]}`,
		"Accept", "application/json")
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Contains(t, body, `"budget_exhausted"`)
	assert.Zero(t, count(t, p, `SELECT count(*) FROM runs`))
	assert.Equal(t, spent, count(t, p, `SELECT bytes FROM data_budget_days`), "refusals spend nothing")

	// Its metrics: what was spent, the refusals, today's count and the limit.
	families, err := p.Svc.Metrics.Gatherer().Gather()
	require.NoError(t, err)
	values := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			key := f.GetName()
			for _, l := range m.GetLabel() {
				key += "/" + l.GetValue()
			}
			values[key] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	assert.EqualValues(t, spent, values["petal_data_budget_spent_bytes_total/spent"])
	assert.EqualValues(t, 4, values["petal_data_budget_refusals_total"], "a note, a start, a reading and a chat")
	assert.EqualValues(t, spent, values["petal_data_budget_today_bytes/used"])
	assert.EqualValues(t, 1048, values["petal_data_budget_today_bytes/limit"])

	// A signed-in person's writes aren't counted.
	cookie := p.Cfg.SessionCookieName() + "=" + sessionFor(t, p, "prs_"+strings.Repeat("ab", 16), time.Now())
	res, body = p.do(t, http.MethodPost, "/api/v1/explorations", `{"question":"a person's"}`, "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
}

// Item 8: notes and steps per exploration stop at 1,000: the next is 400
// with a hint to start a new exploration, and nothing is stored.
func TestAnExplorationHoldsAThousandNotesAndSteps(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	b := p.browser(t)
	id := b.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"many"}`)["id"].(string)
	_, err := p.DB.Pool.Exec(t.Context(), `INSERT INTO exploration_notes (id, exploration, text, created_at)
SELECT 'not_' || lpad(to_hex(i), 32, '0'), $1, 'n', now() FROM generate_series(1, $2) AS i`, id, explorations.MaxNotes-1)
	require.NoError(t, err)
	b.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/notes", `{"text":"the last one"}`)
	res, body := b.do(t, http.MethodPost, "/api/v1/explorations/"+id+"/notes", `{"text":"one too many"}`)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	_, message, hint := errorOf(t, body)
	assert.Contains(t, message, "1000 notes")
	assert.Contains(t, hint, "start a new exploration")
	assert.Equal(t, explorations.MaxNotes, count(t, p, `SELECT count(*) FROM exploration_notes WHERE exploration = $1`, id))

	_, err = p.DB.Pool.Exec(t.Context(), `INSERT INTO exploration_steps (id, exploration, seq, spec_sha256, created_at)
SELECT 'stp_' || i, $1, i, repeat('a', 64), now() FROM generate_series(1, $2) AS i`, id, explorations.MaxSteps)
	require.NoError(t, err)
	res, body = b.do(t, http.MethodPost, "/api/v1/explorations/"+id+"/steps", `{"spec_sha256":"`+strings.Repeat("b", 64)+`"}`)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, "1000 steps")
	assert.Equal(t, explorations.MaxSteps, count(t, p, `SELECT count(*) FROM exploration_steps WHERE exploration = $1`, id))
}

// Item 8: get_exploration and /s/:token page their steps and notes with a
// cursor; every note is seen once.
func TestExplorationsAndPacketsArePaged(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	b := p.browser(t)
	id := b.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"paged"}`)["id"].(string)
	const notes = explorations.DefaultPageItems + 7
	_, err := p.DB.Pool.Exec(t.Context(), `INSERT INTO exploration_notes (id, exploration, text, created_at)
SELECT 'not_' || lpad(to_hex(i), 32, '0'), $1, 'note ' || i, now() + (i / 3) * interval '1 second' FROM generate_series(1, $2) AS i`, id, notes)
	require.NoError(t, err)

	seen := map[string]bool{}
	cursor, pages := "", 0
	for {
		path := "/api/v1/explorations/" + id + "?limit=20"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		page := b.ok(t, http.MethodGet, path, "")
		pages++
		for _, n := range page["notes"].([]any) {
			nid := n.(map[string]any)["id"].(string)
			assert.False(t, seen[nid], "note %s twice", nid)
			seen[nid] = true
		}
		next, ok := page["next_cursor"].(string)
		if !ok {
			assert.Nil(t, page["next_cursor"])
			break
		}
		cursor = next
		require.Less(t, pages, 10)
	}
	assert.Len(t, seen, notes)
	assert.Equal(t, 3, pages, "57 notes, 20 a page")
	res, body := b.do(t, http.MethodGet, "/api/v1/explorations/"+id+"?cursor=not-one", "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	res, body = b.do(t, http.MethodGet, "/api/v1/explorations/"+id+"?limit=201", "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)

	// The packet: a first page, and a line to the next.
	tok := tokenOf(t, b.ok(t, http.MethodPost, "/api/v1/explorations/"+id+"/links", `{"scope":"read"}`)["url"].(string))
	res, md := b.do(t, http.MethodGet, "/s/"+tok, "")
	require.Equal(t, http.StatusOK, res.StatusCode, md)
	assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
	assert.Contains(t, md, "- note 1 (")
	assert.NotContains(t, md, "- note 57 (")
	i := strings.Index(md, "?cursor=")
	require.Positive(t, i, md)
	next := md[i+len("?cursor=") : i+strings.IndexAny(md[i:], "`")]
	res, md = b.do(t, http.MethodGet, "/s/"+tok+"?cursor="+next, "")
	require.Equal(t, http.StatusOK, res.StatusCode, md)
	assert.Contains(t, md, "- note 57 (")
	assert.NotContains(t, md, "- note 1 (")
	assert.NotContains(t, md, "More steps and notes", "the last page")
	res, md = b.do(t, http.MethodGet, "/s/"+tok+"?cursor=nope", "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, md)
	assert.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain"))
}

// Item 8: a run's events as JSON are paged with ?from= and ?limit=; the SSE
// replay is unchanged.
func TestARunsEventsArePagedAsJSON(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	var started map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	id := started["run_id"]
	p.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+id, "").rest(t) // to its end

	type page struct {
		Events   []runs.Event `json:"events"`
		NextFrom *int64       `json:"next_from"`
	}
	var all page
	res, body = p.do(t, http.MethodGet, "/api/v1/agent/runs/"+id, "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.NoError(t, json.Unmarshal([]byte(body), &all))
	assert.Nil(t, all.NextFrom, "one page holds a short run")
	require.Greater(t, len(all.Events), 5)

	var got []runs.Event
	from := int64(0)
	for range 50 {
		res, body = p.do(t, http.MethodGet, fmt.Sprintf("/api/v1/agent/runs/%s?from=%d&limit=4", id, from), "")
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		var pg page
		require.NoError(t, json.Unmarshal([]byte(body), &pg))
		assert.LessOrEqual(t, len(pg.Events), 4)
		got = append(got, pg.Events...)
		if pg.NextFrom == nil {
			break
		}
		from = *pg.NextFrom
	}
	require.Len(t, got, len(all.Events))
	for i, e := range got {
		assert.Equal(t, int64(i), e.Seq)
	}
	for _, q := range []string{"?limit=0", "?limit=1001", "?from=-1", "?colour=red", "?limit=2&limit=3"} {
		res, body = p.do(t, http.MethodGet, "/api/v1/agent/runs/"+id+q, "")
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s", q, body)
	}
}

// Item 8: a follow-up that would take a run's thread past 2 MiB is 400 with a
// hint to start a new chat, and the run is left as it was.
func TestAFollowUpPastTheThreadCapIs400(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	var started map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	id := started["run_id"]
	p.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+id, "").rest(t)
	// A thread grown to just under the cap (as many chats would grow it).
	big, err := json.Marshal([]runs.Message{{Role: "user", Content: strings.Repeat("x", runs.MaxThread-100_000)}})
	require.NoError(t, err)
	_, err = p.DB.Pool.Exec(t.Context(), `UPDATE runs SET thread = $2 WHERE id = $1`, id, string(big))
	require.NoError(t, err)
	events := count(t, p, `SELECT count(*) FROM run_events WHERE run_id = $1`, id)

	follow := func(content string) (*http.Response, string) {
		b, _ := json.Marshal(map[string]any{"run_id": id, "messages": []map[string]string{{"role": "user", "content": content}}})
		return p.do(t, http.MethodPost, "/api/v1/agent/chat", string(b), "Accept", "application/json")
	}
	res, body = follow(strings.Repeat("y", 200_000))
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	_, message, hint := errorOf(t, body)
	assert.Contains(t, message, "thread")
	assert.Contains(t, hint, "start a new chat")
	assert.Equal(t, events, count(t, p, `SELECT count(*) FROM run_events WHERE run_id = $1`, id), "nothing appended")
	assert.Equal(t, len(big), count(t, p, `SELECT length(thread::text) FROM runs WHERE id = $1`, id))
	// A small one still fits.
	res, body = follow("and now?")
	assert.Equal(t, http.StatusAccepted, res.StatusCode, body)
}

// Item 8: posted readings per address and per owner a day are a share of the
// site's cap.
func TestPostedReadingsPerAddressAndPerOwner(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_POSTED_SNAPSHOTS_PER_DAY": "10", "PETAL_POSTED_SNAPSHOTS_PER_ADDRESS": "1",
		"PETAL_TRUSTED_PROXIES": "127.0.0.1"}) // so cf-connecting-ip names each poster
	alice, bob := p.browser(t), p.browser(t)
	ida := alice.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"a"}`, "Cf-Connecting-Ip", "192.0.2.1")["id"].(string)
	cont := tokenOf(t, alice.ok(t, http.MethodPost, "/api/v1/explorations/"+ida+"/links", `{"scope":"continue"}`)["url"].(string))
	idb := bob.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"b"}`)["id"].(string)
	at := func(ref, sha string) string { return "/api/v1/explorations/" + ref + "/snapshots/" + sha }

	sha1, r1 := reading(t, 11)
	sha2, r2 := reading(t, 12)
	sha3, r3 := reading(t, 13)
	res, body := alice.put(t, at(ida, sha1), r1, "Cf-Connecting-Ip", "192.0.2.1")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	// The same address again: its share is spent.
	res, body = alice.put(t, at(ida, sha2), r2, "Cf-Connecting-Ip", "192.0.2.1")
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Contains(t, body, "this address")
	// Another address, to alice's exploration: her share as an owner is spent.
	res, body = bob.put(t, at(cont, sha2), r2, "Cf-Connecting-Ip", "192.0.2.2")
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Contains(t, body, "owner")
	// That address, to another owner's: fine.
	res, body = bob.put(t, at(idb, sha3), r3, "Cf-Connecting-Ip", "192.0.2.2")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Equal(t, 2, count(t, p, `SELECT count(*) FROM exploration_readings`))
	assert.Zero(t, count(t, p, `SELECT count(*) FROM snapshots WHERE sha256 = $1`, sha2), "refused readings are not stored")
	// One already held still answers, whoever posts it.
	res, body = alice.put(t, at(ida, sha3), r3, "Cf-Connecting-Ip", "192.0.2.1")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"stored":false`)
}

// Item 12: a C0 control character in text petal would store is 400, through
// HTTP and MCP alike, and nothing is stored.
func TestControlCharactersInStoredTextAre400(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	b := p.browser(t)
	res, body := b.do(t, http.MethodPost, "/api/v1/explorations", `{"question":"who\u0000votes"}`)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	_, message, _ := errorOf(t, body)
	assert.Contains(t, message, "field question holds a control character (U+0000)")
	id := b.ok(t, http.MethodPost, "/api/v1/explorations", "{\"question\":\"tabs\\tand\\nlines are text\"}")["id"].(string)
	for _, text := range []string{`a\u0007b`, `\u001b[31mred`, `\u0000`} {
		res, body = b.do(t, http.MethodPost, "/api/v1/explorations/"+id+"/notes", `{"text":"`+text+`"}`)
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	}
	res, body = p.do(t, http.MethodPost, "/api/v1/agent/chat", `{"messages":[{"role":"user","content":"draw\u0000"}]}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	res, body = p.do(t, http.MethodGet, "/api/v1/networks?query=%00", "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	res, body = p.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"start_exploration","arguments":{"question":"a\u0000"}}}`,
		"Accept", "application/json, text/event-stream")
	// Over MCP a bad argument is a tool result, isError and bad_input (issue 33 #10).
	assert.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"isError":true`)
	assert.Contains(t, body, `bad_input`)
	assert.Contains(t, body, `field question holds a control character (U+0000)`)
	assert.Zero(t, count(t, p, `SELECT count(*) FROM exploration_notes`))
	assert.Equal(t, 1, count(t, p, `SELECT count(*) FROM explorations`))
	assert.Zero(t, count(t, p, `SELECT count(*) FROM runs`))
}

// Item 12: a name given twice in a JSON body is 400, on a tool route, a
// route of its own and a tool's input alike.
func TestDuplicateNamesInABodyAre400(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	cases := []struct{ method, path, body, name string }{
		{http.MethodPost, "/api/v1/explorations", `{"question":"a","question":"b"}`, "question"},
		{http.MethodPost, "/api/v1/specs/validate", `{"spec":{"schema":"flower-spec/v1","schema":"x"}}`, "spec.schema"},
		{http.MethodPost, "/api/v1/agent/chat", `{"messages":[{"role":"user","content":"a","content":"b"}]}`, "messages[0].content"},
		{http.MethodPost, "/api/v1/auth/invite", `{"token":"a","token":"b"}`, "token"},
	}
	for _, tc := range cases {
		res, body := p.do(t, tc.method, tc.path, tc.body)
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s", tc.path, body)
		_, message, _ := errorOf(t, body)
		assert.Equal(t, "field "+tc.name+" is given twice", message, tc.path)
	}
	assert.Zero(t, count(t, p, `SELECT count(*) FROM explorations`))
	assert.Zero(t, sessions(t, p))
}

// Item 12: a top-up too large for the ledger's integers is 400, and nothing
// is counted.
func TestATopUpTooLargeForTheLedgerIs400(t *testing.T) {
	t.Parallel()
	// At four trillion dollars a NEAR, the 2 NEAR transfer is worth $8e12:
	// 8e18 micro-dollars, inside int64, but past what one top-up adds; two
	// such would have overflowed the person's credit.
	p, _ := signInPetal(t, map[string]string{"PETAL_NEAR_USD": "4000000000000"})
	cookie, _ := signInAlice(t, p)
	res, body := p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	code, message, _ := errorOf(t, body)
	assert.Equal(t, "bad_input", code)
	assert.Contains(t, message, "too large")
	assert.Zero(t, count(t, p, `SELECT count(*) FROM credit_topups`))
	res, body = p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txBatch), "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Zero(t, count(t, p, `SELECT count(*) FROM credit_entries`))
}

// Item 12: without PETAL_API, a link and a packet never carry the Host a
// request claimed: they are relative. With it, they are built from it.
func TestLinksAndPacketsNeverUseTheRequestsHost(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	b := p.browser(t)
	id := b.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"where?"}`)["id"].(string)
	res, body := withHost(t, b.client, http.MethodPost, p.URL+"/api/v1/explorations/"+id+"/links", `{"scope":"continue"}`, "evil.example")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var link map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &link))
	url := link["url"].(string)
	assert.True(t, strings.HasPrefix(url, "/s/"), "relative: %s", url)
	res, md := withHost(t, http.DefaultClient, http.MethodGet, p.URL+url, "", "evil.example")
	require.Equal(t, http.StatusOK, res.StatusCode, md)
	assert.NotContains(t, md, "evil.example")
	assert.Contains(t, md, "`POST /api/v1/explorations/"+tokenOf(t, url)+"/notes`")

	site := startPetal(t, map[string]string{"PETAL_API": "https://petal.example"})
	owner := "anon_" + strings.Repeat("cd", 16)
	cookie := site.Cfg.SessionCookieName() + "=" + sessionFor(t, site, owner, time.Now())
	res, body = site.do(t, http.MethodPost, "/api/v1/explorations", `{"question":"where?"}`, "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var e map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &e))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, site.URL+"/api/v1/explorations/"+e["id"].(string)+"/links", strings.NewReader(`{"scope":"read"}`))
	require.NoError(t, err)
	req.Host = "evil.example"
	req.Header.Set("Cookie", cookie)
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, string(out))
	assert.Contains(t, string(out), `"url":"https://petal.example/s/`)
}

// withHost sends a request whose Host header names host, whatever the
// address it goes to.
func withHost(t *testing.T, client *http.Client, method, url, body, host string) (*http.Response, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, r)
	require.NoError(t, err)
	req.Host = host
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if client.Jar != nil {
		// The client would look its cookies up by the Host: send the site's.
		for _, c := range client.Jar.Cookies(req.URL) {
			req.AddCookie(c)
		}
		client = http.DefaultClient
	}
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, string(out)
}
