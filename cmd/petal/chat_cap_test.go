package main

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/domain/credit"
)

// TestAFollowUpChatOnARunHasItsOwnCap: the per-chat cap counts each POST
// /api/v1/agent/chat, so a chat that continues a run (run_id) spends up to its
// own cap, not what is left of the run's first chat.
func TestAFollowUpChatOnARunHasItsOwnCap(t *testing.T) {
	t.Parallel()
	call := nearaitest.Call{Name: "no_such_tool", Args: `{}`}
	var script []nearaitest.Answer
	for i := range 18 {
		script = append(script, nearaitest.Completion(fmt.Sprintf("c%d", i), "deepseek-ai/DeepSeek-V3.1", "", call))
	}
	fake := nearaitest.New(t, script...)
	fake.Tokenize = true
	env := modelEnv(fake)
	env["PETAL_PAY_TESTNET"] = "1" // a real model paid with testnet NEAR, as the operator allows
	env["PETAL_AGENT_ACCESS"] = "gated"
	env["PETAL_NEAR_USD"] = "1" // 2 NEAR is $2 of credit: the credit never binds here
	// A call goes ahead when its worst case fits in what is left of the
	// chat's cap: a cap of the least first call's worst case, one call at
	// twice and a little pays for a tool round or more and an answer a chat.
	env["PETAL_PERSON_USD_PER_CHAT"] = (2*firstCallWorstCase(t, env) + 2_000).String()
	p, _ := signInPetal(t, env)
	cookie, _ := signInAlice(t, p)
	res, body := p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)

	// Each chat makes its rounds until its cap pays for an answer only, and
	// ends with that answer (no tools offered), not budget_exhausted.
	capped := func(evs []sseEvent) {
		t.Helper()
		n := len(evs)
		require.GreaterOrEqual(t, n, 2)
		assert.NotContains(t, names(evs), "error")
		assert.Equal(t, "done", evs[n-1].Name)
		calls := fake.Completions()
		assert.Nil(t, calls[len(calls)-1].Body["tools"], "the chat's last call is offered no tools")
	}
	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Cookie", cookie, "Origin", siteOrigin).rest(t)
	capped(evs)
	runID := evs[0].json(t)["run_id"].(string)
	first := len(fake.Completions())
	assert.GreaterOrEqual(t, first, 2)

	more := `{"run_id":"` + runID + `","messages":[{"role":"user","content":"and the treasury?"}]}`
	evs = p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", more, "Cookie", cookie, "Origin", siteOrigin).rest(t)
	capped(evs)
	assert.GreaterOrEqual(t, len(fake.Completions())-first, 2, "the follow-up chat on the same run spent its own cap, not what the first left")
	assert.Zero(t, heldOnLedger(t, p), "nothing is left held")
}

// firstCallWorstCase is what a chat asking "draw the marketing DAO" holds for
// its first model call on a petal configured by env (it depends on the model
// and the tools offered): tests size budgets and caps from it.
func firstCallWorstCase(t *testing.T, env map[string]string) credit.Micros {
	t.Helper()
	probe := startPetal(t, env)
	return probe.Svc.Agent.FirstCallWorstCase("draw the marketing DAO")
}
