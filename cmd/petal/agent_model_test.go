package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
)

// modelEnv serves petal on a fake NEAR AI.
func modelEnv(fake *nearaitest.Server) map[string]string {
	return map[string]string{
		"NEAR_AI_API_KEY":    "sk-test",
		"NEAR_AI_BASE_URL":   fake.BaseURL(),
		"PETAL_AGENT_ACCESS": "open",
		"PETAL_WALLET_KEY":   strings.Repeat("ab", 32),
	}
}

func sessionCookie(t testing.TB, res *http.Response) string {
	t.Helper()
	for _, c := range res.Cookies() {
		if strings.HasSuffix(c.Name, "petal_session") {
			return c.Name + "=" + c.Value
		}
	}
	t.Fatal("no session cookie was set")
	return ""
}

func TestChatOnARealModelIsOwnedSignedAndAttested(t *testing.T) {
	t.Parallel()
	fake := nearaitest.New(t,
		nearaitest.Completion("a1", "deepseek-ai/DeepSeek-V3.1", "Let me look.", nearaitest.Call{Name: "no_such_tool", Args: `{}`}),
		nearaitest.Completion("a2", "deepseek-ai/DeepSeek-V3.1", "I could not find that tool; ask me something else."),
	)
	p := startPetal(t, modelEnv(fake))

	// From another site, a browser's chat is refused.
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Origin", "https://evil.example", "Accept", "application/json")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	assert.Empty(t, fake.Completions())

	res, body = p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	cookie := sessionCookie(t, res)
	var started map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	id := started["run_id"]

	var evs []sseEvent
	var kinds []string
	for _, e := range p.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+id, "", "Cookie", cookie).rest(t) {
		if e.Name != "live" {
			evs = append(evs, e)
			kinds = append(kinds, e.Name)
		}
	}
	assert.Equal(t, []string{"run", "stage", "message", "tool_call", "tool_result", "stage", "message", "done"}, kinds)
	assert.Equal(t, false, evs[4].json(t)["ok"])
	done := evs[7].json(t)
	assert.Equal(t, "deepseek-ai/DeepSeek-V3.1", done["model"])
	assert.EqualValues(t, 2, done["turns"])
	assert.Equal(t, map[string]any{"in": 2000.0, "out": 200.0, "cached": 400.0}, done["tokens"])
	assert.NotZero(t, done["cost_usd"])
	sig := done["signature"].(map[string]any)
	assert.Equal(t, "chatcmpl-a2", sig["chat_id"])
	reportSHA := sig["report_sha256"].(string)

	// The attestation report the signature points to, byte for byte.
	res, report := p.do(t, http.MethodGet, "/api/v1/attestations/"+reportSHA, "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, string(nearaitest.File("attestation_report.json")), report)
	sum := sha256.Sum256([]byte(report))
	assert.Equal(t, reportSHA, hex.EncodeToString(sum[:]))

	// The run is its owner's alone.
	res, _ = p.do(t, http.MethodGet, "/api/v1/agent/runs/"+id, "", "Cookie", cookie)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	want := `{"tools_version":"1.0.0","error":{"code":"not_found","message":"no run ` + id + `","hint":""}}`
	res, body = p.do(t, http.MethodGet, "/api/v1/agent/runs/"+id, "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.JSONEq(t, want, body)
	res, body = p.do(t, http.MethodPost, "/api/v1/agent/runs/"+id+"/stop", "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.JSONEq(t, want, body)

	// The owner's stop from another site is refused.
	res, _ = p.do(t, http.MethodPost, "/api/v1/agent/runs/"+id+"/stop", "", "Cookie", cookie, "Origin", "https://evil.example")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
}

func TestStopCancelsTheModelCallInFlight(t *testing.T) {
	t.Parallel()
	fake := nearaitest.New(t)
	fake.Hold = make(chan struct{}) // the model never answers on its own
	fake.Holding = make(chan struct{}, 1)
	p := startPetal(t, modelEnv(fake))
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	cookie := sessionCookie(t, res)
	var started map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	id := started["run_id"]
	view := p.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+id, "", "Cookie", cookie)
	for {
		ev, ok := view.next(t)
		require.True(t, ok)
		if ev.Name == "stage" {
			break // the model call is next
		}
	}
	// Stop only once the call has reached the model: a stop before it would
	// pass without testing what this test is for.
	select {
	case <-fake.Holding:
	case <-time.After(60 * time.Second):
		t.Fatal("the model call never arrived")
	}
	res, body = p.do(t, http.MethodPost, "/api/v1/agent/runs/"+id+"/stop", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","run_id":"`+id+`","status":"stopped","stopped":true,"already_finished":false}`, body)
	// The live marker ends the viewer's replay, which a slow machine may still
	// be reading when the stop lands: then it comes after done. Where it falls
	// says nothing about the stop, so it is left out.
	var rest []sseEvent
	for _, e := range view.rest(t) {
		if e.Name != "live" {
			rest = append(rest, e)
		}
	}
	require.GreaterOrEqual(t, len(rest), 2)
	assert.Equal(t, "error", rest[len(rest)-2].Name)
	assert.Equal(t, "stopped", rest[len(rest)-2].json(t)["code"])
	assert.Equal(t, "done", rest[len(rest)-1].Name)
	assert.EqualValues(t, 0, rest[len(rest)-1].json(t)["turns"], "nothing answered")
	assert.Zero(t, heldOnLedger(t, p), "the aborted call's hold went back")
}

func heldOnLedger(t testing.TB, p *testPetal) int64 {
	t.Helper()
	var held int64
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), heldEverywhere).Scan(&held))
	return held
}

// TestAnInviteRunningOutMidChatEndsItWithWords (issue 25): a chat whose
// invite can pay a few rounds makes them, and when what is left pays for an
// answer only, its last call is offered no tools and told to answer: the
// chat ends done, with words, not budget_exhausted, never past the invite,
// nothing left held. An invite that can't pay even the least first call is
// a 429 before any model call.
func TestAnInviteRunningOutMidChatEndsItWithWords(t *testing.T) {
	call := nearaitest.Call{Name: "no_such_tool", Args: `{}`}
	var script []nearaitest.Answer
	for i := range 8 {
		script = append(script, nearaitest.Completion(fmt.Sprintf("b%d", i), "deepseek-ai/DeepSeek-V3.1", "", call))
	}
	fake := nearaitest.New(t, script...)
	fake.Tokenize = true
	env := modelEnv(fake)
	env["PETAL_AGENT_ACCESS"] = "gated"
	p := startPetal(t, env)

	// Gated, and no invite: refused before any model call.
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	assert.Equal(t, http.StatusForbidden, res.StatusCode, body)
	assert.Contains(t, body, "invite_required")
	assert.Empty(t, fake.Completions())

	// The budget pays a few rounds' holds, not eight.
	least := p.Svc.Agent.FirstCallWorstCase("draw the marketing DAO")
	budget := 2*least + 2_000
	m := mintInvite(t, p, budget.String())
	res, body = p.do(t, http.MethodPost, "/api/v1/auth/invite", `{"token":"`+m.Token+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	cookie := sessionCookie(t, res)

	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Cookie", cookie).rest(t)
	n := len(evs)
	require.GreaterOrEqual(t, n, 2)
	assert.NotContains(t, names(evs), "error", "it ends with words, not budget_exhausted")
	assert.Equal(t, "done", evs[n-1].Name)
	calls := fake.Completions()
	require.GreaterOrEqual(t, len(calls), 2, "some tool rounds first")
	require.Less(t, len(calls), 8)
	last := calls[len(calls)-1].Body
	assert.Nil(t, last["tools"], "the last call is offered no tools")
	system := last["messages"].([]any)[0].(map[string]any)["content"].(string)
	assert.Contains(t, system, "pays for this one answer only")
	for _, c := range calls[:len(calls)-1] {
		assert.NotNil(t, c.Body["tools"])
	}
	spent, held := spentOn(t, p, "invite:"+m.ID)
	assert.LessOrEqual(t, spent, budget)
	assert.Zero(t, held)
	assert.Zero(t, heldOnLedger(t, p), "nothing is left held")

	// An invite that can't pay the least first call (as NEAR AI's counts
	// now bound it): 429 before any call.
	least = p.Svc.Agent.FirstCallWorstCase("draw the marketing DAO")
	small := mintInvite(t, p, (least - 1).String())
	res, body = p.do(t, http.MethodPost, "/api/v1/auth/invite", `{"token":"`+small.Token+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	before := len(fake.Completions())
	res, body = p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Cookie", sessionCookie(t, res), "Accept", "application/json")
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Contains(t, body, "budget_exhausted")
	assert.Len(t, fake.Completions(), before)
}

// done says what answered (model) and what the conversation asked for
// (picked): the same model, or two after a fallback.
func TestDoneSaysWhatWasPickedAndWhatAnswered(t *testing.T) {
	t.Parallel()
	fake := nearaitest.New(t,
		nearaitest.Fail(http.StatusServiceUnavailable, "error_503.json"),
		nearaitest.Completion("f1", "openai/gpt-oss-120b", "The fallback's answer."),
		nearaitest.Completion("n1", "deepseek-ai/DeepSeek-V3.1", "The first model's answer."),
	)
	p := startPetal(t, modelEnv(fake))
	done := func() map[string]any {
		t.Helper()
		evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt).rest(t)
		require.NotEmpty(t, evs)
		require.Equal(t, "done", evs[len(evs)-1].Name)
		return evs[len(evs)-1].json(t)
	}

	d := done()
	assert.Equal(t, "openai/gpt-oss-120b", d["model"], "what answered")
	assert.Equal(t, "deepseek-ai/DeepSeek-V3.1", d["picked"], "what the conversation asked for")
	assert.Equal(t, true, d["fallback_used"])

	d = done()
	assert.Equal(t, "deepseek-ai/DeepSeek-V3.1", d["model"])
	assert.Equal(t, d["model"], d["picked"], "no fallback: the same model")
	assert.Equal(t, false, d["fallback_used"])
	assert.Len(t, fake.Completions(), 3)
}
