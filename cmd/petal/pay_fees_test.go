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

// TestBaseFeeSwitchesOnAPersonsCredit: with every base-fee switch on, a
// top-up carries B and a chat paid from a person's own credit carries A (past
// the free allowance E), C once for the answer that ends the turn and D for
// the tool it ran, each its own entry beside the bill and the tip; the
// entries add up to what the credit spent, every hold covered what its call
// charged, and GET /api/v1/price shows the switches.
func TestBaseFeeSwitchesOnAPersonsCredit(t *testing.T) {
	t.Parallel()
	fake := nearaitest.New(t,
		nearaitest.Completion("f1", "deepseek-ai/DeepSeek-V3.1", "", nearaitest.Call{Name: "validate_spec", Args: `{}`}),
		nearaitest.Completion("f2", "deepseek-ai/DeepSeek-V3.1", "Checked."),
	)
	env := modelEnv(fake)
	env["PETAL_PAY_TESTNET"] = "1" // a real model paid with testnet NEAR, as the operator allows
	env["PETAL_AGENT_ACCESS"] = "gated"
	env["PETAL_NEAR_USD"] = "1" // 2 NEAR is $2
	env["PETAL_FEE_CALL_PERCENT"] = "10"
	env["PETAL_FEE_TOPUP_PERCENT"] = "1.5"
	env["PETAL_FEE_PER_TURN_USD"] = "0.003"
	env["PETAL_FEE_PER_TOOL"] = "validate_spec=0.002,render_flower=0.01"
	env["PETAL_FEE_FREE_ALLOWANCE_USD"] = "0.0005"
	p, _ := signInPetal(t, env)
	cookie, person := signInAlice(t, p)
	account := credit.PersonAccount(person)

	res, body := p.do(t, http.MethodGet, "/api/v1/price", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var price struct {
		Price struct {
			BaseFee map[string]struct {
				On bool `json:"on"`
			} `json:"base_fee"`
		} `json:"price"`
		Hash string `json:"hash"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &price))
	for _, sw := range []string{"A", "B", "C", "D", "E"} {
		assert.True(t, price.Price.BaseFee[sw].On, "switch %s on: %s", sw, body)
	}
	assert.Contains(t, body, `"percent":1.5`)
	assert.Contains(t, body, `"validate_spec":0.002`)
	assert.Len(t, price.Hash, 64)

	res, body = p.do(t, http.MethodPut, "/api/v1/me/tip", `{"tip_percent":10}`, "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	res, body = p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"added_usd":2`)

	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Cookie", cookie, "Origin", siteOrigin).rest(t)
	require.NotEmpty(t, evs)
	require.Equal(t, "done", evs[len(evs)-1].Name)
	require.NotContains(t, names(evs), "error", "the chat went through")
	require.Len(t, fake.Completions(), 2)
	assert.Zero(t, heldOnLedger(t, p), "nothing is left held")

	type entry struct {
		Kind, Note string
		Amount     int64
	}
	rows, err := p.DB.Pool.Query(t.Context(), `SELECT kind, note, amount_micros FROM credit_entries WHERE account_id = $1 ORDER BY id`, account)
	require.NoError(t, err)
	var entries []entry
	for rows.Next() {
		var e entry
		require.NoError(t, rows.Scan(&e.Kind, &e.Note, &e.Amount))
		entries = append(entries, e)
	}
	require.NoError(t, rows.Err())
	require.Len(t, entries, 10, "%v", entries)
	assert.Equal(t, entry{"top_up", "NEAR transfer " + txTransfer, 2_000_000}, entries[0])
	assert.Equal(t, entry{"fee", "Petals base fee (top-up)", 30_000}, entries[1], "B: 1.5% of $2")

	// The first call: its bill, A on the part past the $0.0005 allowance, the tip.
	bill1 := entries[2].Amount
	require.Equal(t, "call", entries[2].Kind)
	require.Greater(t, bill1, int64(500), "the fake's call costs more than the allowance")
	assert.Equal(t, entry{"fee", "Petals base fee (call)", (bill1 - 500) / 10}, entries[3])
	assert.Equal(t, entry{"tip", "tip", bill1 / 10}, entries[4])
	// The second: its bill, A on all of it, C for ending the turn, D for validate_spec, the tip.
	bill2 := entries[5].Amount
	require.Equal(t, "call", entries[5].Kind)
	assert.Equal(t, []entry{
		{"fee", "Petals base fee (call)", bill2 / 10},
		{"fee", "Petals base fee (turn)", 3_000},
		{"fee", "Petals base fee (tool validate_spec)", 2_000},
		{"tip", "tip", bill2 / 10},
	}, entries[6:])

	var limit, spent, held int64
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT limit_micros, spent_micros, held_micros FROM credit_accounts WHERE id = $1`, account).
		Scan(&limit, &spent, &held))
	var charged int64
	for _, e := range entries[1:] {
		charged += e.Amount
	}
	assert.EqualValues(t, 2_000_000, limit)
	assert.Equal(t, charged, spent, "the credit spent exactly its entries")
	assert.Zero(t, held)

	var uncovered int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM credit_holds WHERE account_id = $1 AND charged_micros > amount_micros`, account).Scan(&uncovered))
	assert.Zero(t, uncovered, "every hold covered what its call charged, fees and tip included")

	res, body = p.do(t, http.MethodGet, "/api/v1/me/usage", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var usage struct {
		Totals struct {
			Calls      int             `json:"calls"`
			ChargedUSD json.RawMessage `json:"charged_usd"`
		} `json:"totals"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &usage))
	assert.Equal(t, 2, usage.Totals.Calls)
	want, err := credit.Micros(charged - 30_000).USD().MarshalJSON()
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(usage.Totals.ChargedUSD), "the calls' records count every part but the top-up's fee")
}
