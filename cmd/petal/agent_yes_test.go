package main

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
)

const freshMarketing = `{"network":"near-dao-members","params":{"chain":"near:mainnet","dao":"marketing.sputnik-dao.near"},"fresh":true}`

// kindsOf is the event names of a chat's stream.
func kindsOf(evs []sseEvent) []string { return names(evs) }

// TestTheYes: on a scripted model, a new map without a yes gets
// approval_required (once) and no fresh read; a model left with no words
// gets one call without tools; after "yes" the read runs; what was approved
// is read back from the thread on the next chat.
func TestTheYes(t *testing.T) {
	t.Parallel()
	const model = "deepseek-ai/DeepSeek-V3.1"
	read := nearaitest.Call{Name: "get_snapshot", Args: freshMarketing}
	fake := nearaitest.New(t,
		// Chat 1: the person didn't ask for a map.
		nearaitest.Completion("a1", model, "", read),
		nearaitest.Completion("a2", model, "", read),
		nearaitest.Completion("a3", model, "Shall I read the Marketing DAO's members fresh from the chain?"),
		// Chat 2: "yes".
		nearaitest.Completion("b1", model, "", read),
		nearaitest.Completion("b2", model, "Read: 7 members."),
		// Chat 3: already approved in this run.
		nearaitest.Completion("c1", model, "", read),
		nearaitest.Completion("c2", model, "Read again."),
	)
	rpc := nearrpctest.New(t)
	env := modelEnv(fake)
	env["PETAL_NEAR_RPC_MAINNET"] = rpc.URL
	p := startPetal(t, env)

	s := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", `{"messages":[{"role":"user","content":"what kinds of DAOs live on NEAR?"}]}`)
	first := s.rest(t)
	require.NotEmpty(t, first)
	id := first[0].json(t)["run_id"].(string)
	var approvals, refusedResults int
	for _, e := range first {
		switch e.Name {
		case "approval_required":
			approvals++
			d := e.json(t)
			assert.Equal(t, "get_snapshot", d["tool"])
			assert.Equal(t, "near-dao-members", d["network"])
			assert.Equal(t, `near-dao-members{"chain":"near:mainnet","dao":"marketing.sputnik-dao.near"}`, d["target_key"])
			assert.Equal(t, map[string]any{"chain": "near:mainnet", "dao": "marketing.sputnik-dao.near"}, d["params"])
		case "tool_result":
			refusedResults++
			assert.Equal(t, false, e.json(t)["ok"])
			assert.Contains(t, e.json(t)["summary"], "approval_required")
		}
	}
	assert.Equal(t, 1, approvals, "at most once per target per chat: %v", kindsOf(first))
	assert.Equal(t, 2, refusedResults, "asking again is not run either")
	assert.Empty(t, rpc.Calls(), "no fresh read without a yes")
	reqs := fake.Completions()
	require.Len(t, reqs, 3)
	assert.Nil(t, reqs[2].Body["tools"], "a model left with no words gets one call with no tools")
	for _, tool := range reqs[1].Body["tools"].([]any) {
		name := tool.(map[string]any)["function"].(map[string]any)["name"]
		assert.NotContains(t, []string{"propose_spec", "render_flower"}, name, "after a refusal the chat keeps the tools that only read")
	}
	assert.Equal(t, "done", first[len(first)-1].Name)

	// A chat on a real model belongs to the session it opened: carry on
	// with the cookie it set.
	cookie := sessionCookie(t, s.res)

	yes := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", `{"run_id":"`+id+`","messages":[{"role":"user","content":"yes"}]}`, "Cookie", cookie).rest(t)
	assert.NotContains(t, kindsOf(yes), "approval_required")
	var ok bool
	for _, e := range yes {
		if e.Name == "tool_result" {
			ok = e.json(t)["ok"].(bool)
		}
	}
	assert.True(t, ok, "after yes the read runs: %v", kindsOf(yes))
	assert.NotEmpty(t, rpc.Calls(), "the fresh read reached the chain")

	// A later chat of the same run: the target is approved in the thread.
	before := len(rpc.Calls())
	again := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", `{"run_id":"`+id+`","messages":[{"role":"user","content":"once more please"}]}`, "Cookie", cookie).rest(t)
	assert.NotContains(t, kindsOf(again), "approval_required")
	assert.Greater(t, len(rpc.Calls()), before)
}
