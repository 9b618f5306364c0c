package main

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/domain/credit"
)

// TestAPersonPaysForAChatWithTheirOwnCredit: signed in with a wallet, funded
// with a NEAR transfer, a person's chat on a real model is paid from their
// credit (not the daily cap), each call kept as a usage/v1 record; when the
// credit runs out the chat ends with payment_required and the next one is 402.
func TestAPersonPaysForAChatWithTheirOwnCredit(t *testing.T) {
	call := nearaitest.Call{Name: "no_such_tool", Args: `{}`}
	fake := nearaitest.New(t,
		nearaitest.Completion("p1", "deepseek-ai/DeepSeek-V3.1", "", call),
		nearaitest.Completion("p2", "deepseek-ai/DeepSeek-V3.1", "", call),
		nearaitest.Completion("p3", "deepseek-ai/DeepSeek-V3.1", "", call),
	)
	env := modelEnv(fake)
	env["PETAL_AGENT_ACCESS"] = "gated"
	env["PETAL_NEAR_USD"] = "0.001" // 2 NEAR is $0.002: two calls at $0.0011
	p, _ := signInPetal(t, env)
	cookie, person := signInAlice(t, p)

	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Cookie", cookie, "Origin", siteOrigin, "Accept", "application/json")
	assert.Equal(t, http.StatusPaymentRequired, res.StatusCode, "signed in with no credit and no invite: %s", body)
	assert.Empty(t, fake.Completions())

	res, body = p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"added_usd":0.002`)

	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Cookie", cookie, "Origin", siteOrigin).rest(t)
	n := len(evs)
	require.GreaterOrEqual(t, n, 2)
	assert.Equal(t, "error", evs[n-2].Name)
	assert.Equal(t, "payment_required", evs[n-2].json(t)["code"])
	assert.Equal(t, "done", evs[n-1].Name)
	assert.Len(t, fake.Completions(), 2, "the credit paid for two calls")
	assert.Zero(t, heldOnLedger(t, p), "nothing is left held")

	res, body = p.do(t, http.MethodGet, "/api/v1/me/usage", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var usage struct {
		Usage []struct {
			InferenceID string  `json:"inference_id"`
			Model       string  `json:"model"`
			ChargedUSD  float64 `json:"charged_usd"`
		} `json:"usage"`
		Totals struct {
			Calls      int     `json:"calls"`
			ChargedUSD float64 `json:"charged_usd"`
		} `json:"totals"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &usage))
	require.Len(t, usage.Usage, 2)
	assert.Equal(t, 0.0022, usage.Totals.ChargedUSD)
	assert.NotEmpty(t, usage.Usage[0].InferenceID, "NEAR AI's inference id")
	assert.Equal(t, "deepseek-ai/DeepSeek-V3.1", usage.Usage[0].Model)

	var dailySpent int64
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT coalesce(sum(spent_micros), 0) FROM credit_accounts WHERE kind = 'daily'`).Scan(&dailySpent))
	assert.Zero(t, dailySpent, "the daily cap doesn't count a person's own credit")
	var spent int64
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT spent_micros FROM credit_accounts WHERE id = $1`, credit.PersonAccount(person)).Scan(&spent))
	assert.EqualValues(t, 2_200, spent)

	res, body = p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Cookie", cookie, "Origin", siteOrigin, "Accept", "application/json")
	assert.Equal(t, http.StatusPaymentRequired, res.StatusCode, body)
	assert.Len(t, fake.Completions(), 2)
}
