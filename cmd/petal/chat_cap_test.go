package main

import (
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
	call := nearaitest.Call{Name: "no_such_tool", Args: `{}`}
	fake := nearaitest.New(t,
		nearaitest.Completion("c1", "deepseek-ai/DeepSeek-V3.1", "", call),
		nearaitest.Completion("c2", "deepseek-ai/DeepSeek-V3.1", "", call),
		nearaitest.Completion("c3", "deepseek-ai/DeepSeek-V3.1", "", call),
		nearaitest.Completion("c4", "deepseek-ai/DeepSeek-V3.1", "", call),
		nearaitest.Completion("c5", "deepseek-ai/DeepSeek-V3.1", "", call),
	)
	env := modelEnv(fake)
	env["PETAL_PAY_TESTNET"] = "1" // a real model paid with testnet NEAR, as the operator allows
	env["PETAL_AGENT_ACCESS"] = "gated"
	env["PETAL_NEAR_USD"] = "1" // 2 NEAR is $2 of credit: the credit never binds here
	// A call goes ahead when its worst case fits in what is left of the
	// chat's cap: a cap of the first call's worst case, one call at $0.0011
	// and a little (the thread grows each round, and a follow-up starts on
	// the longer thread) pays for two calls a chat, not three.
	env["PETAL_PERSON_USD_PER_CHAT"] = (firstCallWorstCase(t, env) + 1_100 + 2_000).String()
	p, _ := signInPetal(t, env)
	cookie, _ := signInAlice(t, p)
	res, body := p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)

	capped := func(evs []sseEvent) {
		t.Helper()
		n := len(evs)
		require.GreaterOrEqual(t, n, 2)
		assert.Equal(t, "error", evs[n-2].Name)
		assert.Equal(t, "budget_exhausted", evs[n-2].json(t)["code"])
		assert.Contains(t, evs[n-2].json(t)["message"], "one chat may spend")
		assert.Equal(t, "done", evs[n-1].Name)
		assert.EqualValues(t, 2, evs[n-1].json(t)["turns"], "two calls, then the chat's cap")
	}
	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Cookie", cookie, "Origin", siteOrigin).rest(t)
	capped(evs)
	runID := evs[0].json(t)["run_id"].(string)
	assert.Equal(t, 2, len(fake.Completions()))

	more := `{"run_id":"` + runID + `","messages":[{"role":"user","content":"and the treasury?"}]}`
	evs = p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", more, "Cookie", cookie, "Origin", siteOrigin).rest(t)
	capped(evs)
	assert.Equal(t, 4, len(fake.Completions()), "the follow-up chat on the same run spent its own cap")
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
