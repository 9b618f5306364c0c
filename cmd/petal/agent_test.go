package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/domain/runs"
)

const drawIt = `{"messages":[{"role":"user","content":"draw the marketing DAO"}]}`

func names(evs []sseEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Name)
	}
	return out
}

// assertRecordedOrder checks the contract's order for a recorded run:
// run → stage → tool_call → tool_result … → flower → signature → done.
func assertRecordedOrder(t *testing.T, evs []sseEvent) {
	t.Helper()
	require.GreaterOrEqual(t, len(evs), 5, names(evs))
	assert.Equal(t, "run", evs[0].Name)
	assert.Equal(t, "stage", evs[1].Name)
	assert.Equal(t, "recorded", evs[1].json(t)["stage"])
	assert.Equal(t, "tool_call", evs[2].Name)
	assert.Equal(t, "tool_result", evs[3].Name)
	n := len(evs)
	last := evs[n-1]
	assert.Equal(t, "done", last.Name)
	assert.Equal(t, "recorded", last.json(t)["model"])
	// A real flower, drawn by the tools on the snapshot that ships inside petal.
	require.Equal(t, "flower", evs[n-3].Name, names(evs))
	flower := evs[n-3].json(t)
	assert.Regexp(t, `^[0-9a-f]{64}$`, flower["spec_sha256"])
	assert.Regexp(t, `^[0-9a-f]{64}$`, flower["render_sha256"])
	assert.Equal(t, "/d/"+flower["spec_sha256"].(string), flower["view_url"])
	assert.NotEmpty(t, flower["legend"])
	assert.NotEmpty(t, flower["interpretation"])
	assert.Equal(t, true, flower["validation"].(map[string]any)["valid"])
	assert.Equal(t, "signature", evs[n-2].Name)
	for _, e := range evs {
		if e.Name == "tool_result" {
			assert.Equal(t, true, e.json(t)["ok"], e.Data)
			assert.NotContains(t, e.Data, "alice.near", "a summary, never a raw snapshot body")
		}
	}
	// tool_calls and their results pair up, in order.
	var open []string
	for _, e := range evs {
		switch e.Name {
		case "tool_call":
			open = append(open, e.json(t)["id"].(string))
		case "tool_result":
			require.NotEmpty(t, open, "a result without a call")
			assert.Equal(t, open[0], e.json(t)["id"])
			open = open[1:]
		}
	}
	assert.Empty(t, open)
	for i, e := range evs {
		assert.Equal(t, strconv.Itoa(i), e.ID, "an event's id is its seq")
	}
}

func TestRecordedChatStreamsTheRunInOrder(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	s := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt)
	evs := s.rest(t)
	assertRecordedOrder(t, evs)
	runID := evs[0].json(t)["run_id"].(string)
	assert.Equal(t, "/make?run="+runID, evs[0].json(t)["resume_url"])
	done := evs[len(evs)-1].json(t)
	assert.Contains(t, done, "turns")
	assert.Contains(t, done, "tokens")
	assert.Contains(t, done, "cost_usd")
	assert.Contains(t, done, "fallback_used")

	res, body := p.do(t, http.MethodGet, "/api/v1/agent/runs/"+runID, "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var run struct {
		RunID    string         `json:"run_id"`
		Status   string         `json:"status"`
		Messages []runs.Message `json:"messages"`
		Events   []runs.Event   `json:"events"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &run))
	assert.Equal(t, "done", run.Status)
	assert.Equal(t, "user", run.Messages[0].Role)
	require.Len(t, run.Events, len(evs))
	for i, e := range run.Events {
		assert.Equal(t, int64(i), e.Seq)
		assert.Equal(t, evs[i].Name, string(e.Kind))
	}
	assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))
	assert.Empty(t, res.Header.Get("Access-Control-Allow-Credentials"))
}

func TestChatWithJSONAloneAnswers202AndTheRunGoesOn(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_RECORDED_PACE_MS": "50"})
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	var started map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	assert.Equal(t, "running", started["status"])
	runID := started["run_id"].(string)
	// Nobody watched; it still ran to its end.
	evs := p.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+runID, "").rest(t)
	var stored []sseEvent
	for _, e := range evs {
		if e.Name != "live" {
			stored = append(stored, e)
		}
	}
	assertRecordedOrder(t, stored)
}

func TestClientLeavingMidRunLaterReadsTheFinishedRun(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_RECORDED_PACE_MS": "150"})
	s := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt)
	first, ok := s.next(t)
	require.True(t, ok)
	runID := first.json(t)["run_id"].(string)
	s.close() // the client goes away mid-run

	// Follow it to its end from elsewhere, then read it.
	p.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+runID+"?from=0", "").rest(t)
	res, body := p.do(t, http.MethodGet, "/api/v1/agent/runs/"+runID, "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var run map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &run))
	assert.Equal(t, "done", run["status"])
	evs := run["events"].([]any)
	assert.Equal(t, "done", evs[len(evs)-1].(map[string]any)["event"])
	flower, ok := run["flower"].(map[string]any)
	require.True(t, ok, "the finished run carries its flower")
	assert.Regexp(t, `^/d/[0-9a-f]{64}$`, flower["view_url"])
	// Its first flower made the run an exploration, with the flower as a step.
	exploration, ok := run["exploration"].(map[string]any)
	require.True(t, ok, "the run has an exploration: %s", body)
	res, body = p.do(t, http.MethodGet, "/api/v1/explorations/"+exploration["id"].(string), "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var whole map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &whole))
	assert.Equal(t, "draw the marketing DAO", whole["question"])
	assert.Len(t, whole["steps"], 1)
}

func TestViewerReconnectingByCursorSeesEveryEventOnce(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_RECORDED_PACE_MS": "100"})
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	var started map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	path := "/api/v1/agent/runs/" + started["run_id"]

	var got []sseEvent
	lastID := ""
	for conn := 0; ; conn++ {
		var s *sseStream
		if lastID == "" {
			s = p.openSSE(t, http.MethodGet, path, "")
		} else {
			// The header wins over ?from=.
			s = p.openSSE(t, http.MethodGet, path+"?from=0", "", "Last-Event-ID", lastID)
		}
		lives, ended := 0, false
		for n := 0; n < 3; {
			ev, ok := s.next(t)
			if !ok {
				ended = true
				break
			}
			if ev.Name == "live" {
				lives++
				assert.Empty(t, ev.ID, "the live marker has no id")
				assert.Equal(t, 1, lives, "one live marker per connection")
				continue
			}
			got = append(got, ev)
			lastID = ev.ID
			n++
		}
		s.close()
		if ended {
			break
		}
		require.Less(t, conn, 100)
	}
	assertRecordedOrder(t, got)
}

func TestMalformedCursorIs400BeforeTheStream(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	s := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt)
	evs := s.rest(t)
	runID := evs[0].json(t)["run_id"].(string)
	for _, c := range []struct{ path, header string }{
		{"?from=abc", ""}, {"?from=-1", ""}, {"", "x"}, {"?from=1&from=2", ""}, {"?cursor=1", ""},
	} {
		h := []string{"Accept", "text/event-stream"}
		if c.header != "" {
			h = append(h, "Last-Event-ID", c.header)
		}
		res, body := p.do(t, http.MethodGet, "/api/v1/agent/runs/"+runID+c.path, "", h...)
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, c)
		assert.Contains(t, body, `"bad_input"`)
	}
	// From the end of a finished run: only the live marker, then the end.
	s = p.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+runID, "", "Last-Event-ID", evs[len(evs)-1].ID)
	rest := s.rest(t)
	assert.Equal(t, []string{"live"}, names(rest))
}

func TestStopEndsTheRunAsStopped(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_RECORDED_PACE_MS": "2000"})
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	var started map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	id := started["run_id"]

	res, body = p.do(t, http.MethodPost, "/api/v1/agent/runs/"+id+"/stop", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","run_id":"`+id+`","status":"stopped","stopped":true,"already_finished":false}`, body)

	evs := p.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+id, "").rest(t)
	n := len(evs)
	require.GreaterOrEqual(t, n, 3)
	assert.Equal(t, "live", evs[n-1].Name)
	assert.Equal(t, "error", evs[n-3].Name)
	assert.Equal(t, "stopped", evs[n-3].json(t)["code"])
	// The hint says how to carry on: the route and what to send.
	assert.Equal(t, "to carry on from where it stopped, POST /api/v1/agent/chat with this run_id and the next message (on the pages: write below the run on /make?run=<run_id>)",
		evs[n-3].json(t)["hint"])
	assert.Equal(t, "done", evs[n-2].Name)

	res, body = p.do(t, http.MethodPost, "/api/v1/agent/runs/"+id+"/stop", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","run_id":"`+id+`","status":"stopped","stopped":false,"already_finished":true}`, body)

	// A stopped run carries on with run_id; its numbering goes on.
	s := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", `{"run_id":"`+id+`","messages":[{"role":"user","content":"go on"}]}`)
	more := s.rest(t)
	require.NotEmpty(t, more)
	assert.Equal(t, "run", more[0].Name)
	assert.Equal(t, strconv.Itoa(n-1), more[0].ID)
	assert.Equal(t, "done", more[len(more)-1].Name)

	res, body = p.do(t, http.MethodPost, "/api/v1/agent/runs/run_nope/stop", "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.JSONEq(t, `{"tools_version":"1.0.0","error":{"code":"not_found","message":"no run run_nope","hint":""}}`, body)
}

func TestAnOwnedRunIsNotThereForAnyoneElse(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	store := postgres.NewRunRepository(p.DB.DB)
	_, err := store.Create(t.Context(), runs.Run{ID: "run_owned", Owner: "anon_someone", Model: "m"},
		runs.Make(runs.KindRun, runs.RunData{RunID: "run_owned"}))
	require.NoError(t, err)
	want := `{"tools_version":"1.0.0","error":{"code":"not_found","message":"no run run_owned","hint":""}}`
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/api/v1/agent/runs/run_owned"},
		{http.MethodPost, "/api/v1/agent/runs/run_owned/stop"},
	} {
		res, body := p.do(t, c.method, c.path, "")
		assert.Equal(t, http.StatusNotFound, res.StatusCode)
		assert.JSONEq(t, want, body)
	}
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", `{"run_id":"run_owned","messages":[{"role":"user","content":"hi"}]}`)
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.JSONEq(t, want, body)
}

func TestAttestationServedByteForByte(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	report := []byte("{\"signing_address\":\"0x1234\",  \"intel_quote\": \"ab\\u00e9\",\n\"nvidia_payload\":\"{}\"}\n")
	sha, err := postgres.NewAttestations(p.DB.DB).Put(t.Context(), report)
	require.NoError(t, err)
	res, body := p.do(t, http.MethodGet, "/api/v1/attestations/"+sha, "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, string(report), body)
	sum := sha256.Sum256([]byte(body))
	assert.Equal(t, sha, hex.EncodeToString(sum[:]))
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	assert.Equal(t, "public, max-age=31536000, immutable", res.Header.Get("Cache-Control"))

	res, _ = p.do(t, http.MethodGet, "/api/v1/attestations/"+hex.EncodeToString(make([]byte, 32)), "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	res, _ = p.do(t, http.MethodGet, "/api/v1/attestations/nothex", "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
}

func TestChatRefusesBadBodies(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	for _, body := range []string{
		`{}`, `{"messages":[]}`, `{"messages":[{"role":"system","content":"x"}]}`,
		`{"messages":[{"role":"user","content":"x"},{"role":"assistant","content":"y"}]}`,
		`{"messages":[{"role":"user","content":"x"}],"extra":1}`,
	} {
		res, got := p.do(t, http.MethodPost, "/api/v1/agent/chat", body)
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
		assert.Contains(t, got, "bad_input")
	}
	// A chat may be 512 KiB, more than other bodies' 256 KiB.
	long := `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 400<<10) + `"}]}`
	res, got := p.do(t, http.MethodPost, "/api/v1/agent/chat", long, "Accept", "application/json")
	assert.Equal(t, http.StatusAccepted, res.StatusCode, got)
	tooLong := `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 520<<10) + `"}]}`
	res, got = p.do(t, http.MethodPost, "/api/v1/agent/chat", tooLong, "Accept", "application/json")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, got, "512 KiB")
}

func TestChatLimits(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_NEW_CHATS_PER_HOUR": "2", "PETAL_FOLLOWUPS_PER_HOUR": "1", "PETAL_RUN_MAX_S": "1", "PETAL_RECORDED_PACE_MS": "700"})
	// The wall time of one chat: past it, an error then done.
	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt).rest(t)
	n := len(evs)
	require.GreaterOrEqual(t, n, 3)
	assert.Equal(t, "error", evs[n-2].Name)
	assert.Equal(t, "timeout", evs[n-2].json(t)["code"])
	assert.Equal(t, "done", evs[n-1].Name)
	id := evs[0].json(t)["run_id"].(string)
	res, body := p.do(t, http.MethodGet, "/api/v1/agent/runs/"+id, "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `"status":"failed"`)

	// 2 new chats an hour per address, 1 follow-up.
	res, body = p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	res, body = p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Contains(t, body, `"rate_limited"`)
	assert.Contains(t, body, `"retry_after_s"`)
	assert.NotEmpty(t, res.Header.Get("Retry-After"))

	follow := `{"run_id":"` + id + `","messages":[{"role":"user","content":"again"}]}`
	res, body = p.do(t, http.MethodPost, "/api/v1/agent/chat", follow, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	// While it runs, another chat on it is refused; and the follow-ups are spent anyway.
	res, body = p.do(t, http.MethodPost, "/api/v1/agent/chat", follow, "Accept", "application/json")
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
}

func TestPublicSiteRefusesTheAgent(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_PUBLIC": "1"})
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt)
	assert.Equal(t, http.StatusForbidden, res.StatusCode)
	assert.Contains(t, body, "not_on_this_site")
	assert.Contains(t, body, "/connect")
}

func TestIdleStreamsGetHeartbeatsWithoutIDs(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_RECORDED_PACE_MS": "300"})
	p.Svc.Agent.SetHeartbeat(50 * time.Millisecond)
	s := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt)
	var beats, stored int
	runID := ""
	for ev := range s.events {
		if ev.Name == "run" {
			runID = ev.json(t)["run_id"].(string)
		}
		switch ev.Name {
		case "heartbeat":
			beats++
			assert.Empty(t, ev.ID, "a heartbeat carries no id")
			assert.JSONEq(t, `{"tools_version":"1.0.0"}`, ev.Data)
		default:
			stored++
		}
	}
	assert.Positive(t, beats)
	// Heartbeats are not stored.
	res, body := p.do(t, http.MethodGet, "/api/v1/agent/runs/"+runID, "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.NotContains(t, body, "heartbeat")
	assert.Positive(t, stored)
}
