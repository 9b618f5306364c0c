package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
)

// cookieHeader is the browser's cookies as a Cookie header, for a stream
// opened beside it.
func (b *browser) cookieHeader(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(b.p.URL)
	require.NoError(t, err)
	var parts []string
	for _, c := range b.client.Jar.Cookies(u) {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}

// chat starts a chat in b's session and reads its events to the end.
func (b *browser) chat(t *testing.T, body string) (string, []sseEvent) {
	t.Helper()
	res, out := b.do(t, http.MethodPost, "/api/v1/agent/chat", body, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, out)
	var started map[string]string
	require.NoError(t, json.Unmarshal([]byte(out), &started))
	var evs []sseEvent
	for _, e := range b.p.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+started["run_id"], "", "Cookie", b.cookieHeader(t)).rest(t) {
		if e.Name != "live" {
			evs = append(evs, e)
		}
	}
	return started["run_id"], evs
}

type conversationList struct {
	Conversations []struct {
		ID          string            `json:"id"`
		Kind        string            `json:"kind"`
		Title       *string           `json:"title"`
		UpdatedAt   string            `json:"updated_at"`
		Status      string            `json:"status"`
		Exploration map[string]string `json:"exploration"`
	} `json:"conversations"`
	NextCursor *string `json:"next_cursor"`
}

func (b *browser) conversations(t *testing.T, query string) conversationList {
	t.Helper()
	res, out := b.do(t, http.MethodGet, "/api/v1/conversations"+query, "")
	require.Equal(t, http.StatusOK, res.StatusCode, out)
	var l conversationList
	require.NoError(t, json.Unmarshal([]byte(out), &l), out)
	return l
}

func systemMessageOf(t *testing.T, r nearaitest.Request) string {
	t.Helper()
	msgs, _ := r.Body["messages"].([]any)
	require.NotEmpty(t, msgs)
	first, _ := msgs[0].(map[string]any)
	require.Equal(t, "system", first["role"])
	return first["content"].(string)
}

// A round whose only call is name_conversation, with words beside it, ends
// the turn: the name costs no model call of its own. The title event says
// the name, the list shows it, and the next chat's system message has it.
func TestNameConversationEndsTheTurnAtNoModelCall(t *testing.T) {
	fake := nearaitest.New(t,
		nearaitest.Completion("t1", "deepseek-ai/DeepSeek-V3.1", "The marketing DAO has 12 members.",
			nearaitest.Call{Name: "name_conversation", Args: `{"title":"  The marketing\nDAO's members "}`}),
		nearaitest.Completion("t2", "deepseek-ai/DeepSeek-V3.1", "Twelve, as I said."),
	)
	p := startPetal(t, modelEnv(fake))
	b := p.browser(t)

	id, evs := b.chat(t, drawIt)
	assert.Equal(t, []string{"run", "stage", "message", "tool_call", "title", "tool_result", "done"}, names(evs))
	assert.Equal(t, "The marketing DAO's members", evs[4].json(t)["title"], "kept as plain text on one line")
	assert.Equal(t, true, evs[5].json(t)["ok"])
	assert.EqualValues(t, 1, evs[6].json(t)["turns"])
	require.Len(t, fake.Completions(), 1, "naming made no model call of its own")
	assert.Contains(t, systemMessageOf(t, fake.Completions()[0]), "no name yet")

	l := b.conversations(t, "")
	require.Len(t, l.Conversations, 1)
	c := l.Conversations[0]
	assert.Equal(t, id, c.ID)
	assert.Equal(t, "run", c.Kind)
	require.NotNil(t, c.Title)
	assert.Equal(t, "The marketing DAO's members", *c.Title)
	assert.Equal(t, "done", c.Status)
	assert.Nil(t, l.NextCursor)
	run := b.ok(t, http.MethodGet, "/api/v1/agent/runs/"+id, "")
	assert.Equal(t, "The marketing DAO's members", run["title"], "the run's JSON says its name")
	assert.NotContains(t, run, "settings", "none picked")

	// The next chat tells the model the name it has, as data.
	_, evs = b.chat(t, `{"run_id":"`+id+`","messages":[{"role":"user","content":"how many?"}]}`)
	assert.Equal(t, "done", evs[len(evs)-1].Name)
	require.Len(t, fake.Completions(), 2)
	assert.Contains(t, systemMessageOf(t, fake.Completions()[1]), `named "The marketing DAO's members"`)
}

// A name refused goes back to the model, which answers; one without words
// beside it does too.
func TestANameRefusedGoesBackToTheModel(t *testing.T) {
	fake := nearaitest.New(t,
		nearaitest.Completion("r1", "deepseek-ai/DeepSeek-V3.1", "Here it is.",
			nearaitest.Call{Name: "name_conversation", Args: `{"title":"` + strings.Repeat("x", 201) + `"}`}),
		nearaitest.Completion("r2", "deepseek-ai/DeepSeek-V3.1", "", nearaitest.Call{Name: "name_conversation", Args: `{"title":"Holders"}`}),
		nearaitest.Completion("r3", "deepseek-ai/DeepSeek-V3.1", "Named."),
	)
	p := startPetal(t, modelEnv(fake))
	_, evs := p.browser(t).chat(t, drawIt)
	assert.Equal(t, []string{"run", "stage", "message", "tool_call", "tool_result", "stage", "tool_call", "title", "tool_result", "stage", "message", "done"}, names(evs))
	assert.Equal(t, false, evs[4].json(t)["ok"])
	assert.Contains(t, evs[4].json(t)["summary"], "bad_input")
	assert.Len(t, fake.Completions(), 3)
}

// The list is the session's alone: its runs and explorations, newest first,
// a page at a time; a visitor has none; nobody sees another's.
func TestConversationsAreTheOwnersAlone(t *testing.T) {
	fake := nearaitest.New(t)
	p := startPetal(t, modelEnv(fake))
	alice, bob, visitor := p.browser(t), p.browser(t), p.browser(t)

	res, out := alice.do(t, http.MethodPost, "/api/v1/explorations", `{"question":"Who votes in this DAO?","title":"DAO votes"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, out)
	aliceRun, _ := alice.chat(t, drawIt)
	bobRun, _ := bob.chat(t, drawIt)
	res, out = bob.do(t, http.MethodPost, "/api/v1/explorations", `{"question":"Bob's question"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, out)

	l := alice.conversations(t, "")
	require.Len(t, l.Conversations, 2)
	assert.Equal(t, aliceRun, l.Conversations[0].ID, "the newest first")
	assert.Equal(t, "exploration", l.Conversations[1].Kind)
	assert.Equal(t, "DAO votes", *l.Conversations[1].Title)
	assert.Equal(t, "open", l.Conversations[1].Status)

	// A page at a time.
	first := alice.conversations(t, "?limit=1")
	require.Len(t, first.Conversations, 1)
	require.NotNil(t, first.NextCursor)
	second := alice.conversations(t, "?limit=1&cursor="+*first.NextCursor)
	require.Len(t, second.Conversations, 1)
	assert.Equal(t, l.Conversations[1].ID, second.Conversations[0].ID)
	assert.Nil(t, second.NextCursor)

	for _, c := range alice.conversations(t, "").Conversations {
		assert.NotEqual(t, bobRun, c.ID)
	}
	assert.Len(t, bob.conversations(t, "").Conversations, 2)
	assert.Empty(t, visitor.conversations(t, "").Conversations, "no session, no conversations")

	for _, q := range []string{"?limit=0", "?limit=101", "?cursor=nope", "?colour=red", "?limit=1&limit=2"} {
		res, out := alice.do(t, http.MethodGet, "/api/v1/conversations"+q, "")
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, q)
		assert.Contains(t, out, "bad_input", q)
	}
}

// A chat's settings are checked against the model catalogue before anything
// is stored; what was asked for is what runs, and done.picked says it.
func TestChatSettingsAreCheckedAndPicked(t *testing.T) {
	fake := nearaitest.New(t,
		nearaitest.Completion("s1", "openai/gpt-oss-120b", "Done, on the model you picked."),
		nearaitest.Completion("s2", "openai/gpt-oss-120b", "Still on it."),
	)
	p := startPetal(t, modelEnv(fake))
	b := p.browser(t)
	runsStored := func() int {
		var n int
		require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM runs`).Scan(&n))
		return n
	}

	for body, names := range map[string]string{
		`{"messages":[{"role":"user","content":"hi"}],"settings":{"model":"acme/unknown-1"}}`:                      `acme/unknown-1`,
		`{"messages":[{"role":"user","content":"hi"}],"settings":{"model":"zai-org/GLM-4.6","effort":"high"}}`:     `takes no effort`,
		`{"messages":[{"role":"user","content":"hi"}],"settings":{"model":"openai/gpt-oss-120b","effort":"huge"}}`: `huge`,
		`{"messages":[{"role":"user","content":"hi"}],"settings":{"colour":"red"}}`:                                `colour`,
	} {
		res, out := b.do(t, http.MethodPost, "/api/v1/agent/chat", body, "Accept", "application/json")
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, out)
		assert.Contains(t, out, "bad_input")
		assert.Contains(t, out, names)
		assert.Empty(t, res.Cookies(), "a refusal opens no session")
	}
	assert.Zero(t, runsStored(), "nothing stored")
	assert.Empty(t, fake.Completions())

	id, evs := b.chat(t, `{"messages":[{"role":"user","content":"hi"}],"settings":{"model":"openai/gpt-oss-120b","effort":"high"}}`)
	done := evs[len(evs)-1]
	require.Equal(t, "done", done.Name)
	assert.Equal(t, "openai/gpt-oss-120b", done.json(t)["picked"])
	assert.Equal(t, "openai/gpt-oss-120b", done.json(t)["model"])
	require.Len(t, fake.Completions(), 1)
	run := b.ok(t, http.MethodGet, "/api/v1/agent/runs/"+id, "")
	assert.Equal(t, map[string]any{"model": "openai/gpt-oss-120b", "effort": "high"}, run["settings"])
	assert.Equal(t, "openai/gpt-oss-120b", fake.Completions()[0].Body["model"])
	assert.Equal(t, "high", fake.Completions()[0].Body["reasoning_effort"])

	// A follow-up without settings keeps the conversation's; one with an
	// unknown model is refused and changes nothing.
	res, out := b.do(t, http.MethodPost, "/api/v1/agent/chat", `{"run_id":"`+id+`","messages":[{"role":"user","content":"more"}],"settings":{"model":"acme/unknown-2"}}`,
		"Accept", "application/json")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, out)
	assert.Contains(t, out, "acme/unknown-2")
	_, evs = b.chat(t, `{"run_id":"`+id+`","messages":[{"role":"user","content":"more"}]}`)
	assert.Equal(t, "openai/gpt-oss-120b", evs[len(evs)-1].json(t)["picked"])
	require.Len(t, fake.Completions(), 2)
	assert.Equal(t, "openai/gpt-oss-120b", fake.Completions()[1].Body["model"])
	assert.Equal(t, "high", fake.Completions()[1].Body["reasoning_effort"])
}
