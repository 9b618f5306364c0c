package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/domain/credit"
)

// TestAPersonPaysForAChatWithTheirOwnCredit: signed in with a wallet, funded
// with a NEAR transfer, a person's chat on a real model is paid from their
// credit (not the daily cap), each call kept as a usage/v1 record; when what
// is left pays for an answer only the chat ends with it, and once the credit
// can't pay a first call the next chat is 402, never past the credit.
func TestAPersonPaysForAChatWithTheirOwnCredit(t *testing.T) {
	t.Parallel()
	call := nearaitest.Call{Name: "no_such_tool", Args: `{}`}
	var script []nearaitest.Answer
	for i := range 30 {
		script = append(script, nearaitest.Completion(fmt.Sprintf("p%d", i), "deepseek-ai/DeepSeek-V3.1", "", call))
	}
	fake := nearaitest.New(t, script...)
	env := modelEnv(fake)
	env["NEAR_AI_BASE_URL"] = withBilling(t, fake.BaseURL(), 1_000_000) // NEAR AI bills each call $0.001
	env["PETAL_AGENT_ACCESS"] = "gated"
	env["PETAL_PAY_TESTNET"] = "1" // a real model, paid with testnet NEAR, as the operator allows
	// A call goes ahead when its worst case fits in what is left: 2 NEAR buy
	// twice the least first call's worst case and a little: a tool round and
	// an answer.
	credit2 := 2*firstCallWorstCase(t, env) + 1_100
	env["PETAL_NEAR_USD"] = (credit2 / 2).String()
	credit2 = credit2 / 2 * 2
	p, _ := signInPetal(t, env)
	cookie, person := signInAlice(t, p)

	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Cookie", cookie, "Origin", siteOrigin, "Accept", "application/json")
	assert.Equal(t, http.StatusPaymentRequired, res.StatusCode, "signed in with no credit and no invite: %s", body)
	assert.Empty(t, fake.Completions())

	res, body = p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	added, _ := credit2.USD().MarshalJSON()
	assert.Contains(t, body, `"added_usd":`+string(added))

	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Cookie", cookie, "Origin", siteOrigin).rest(t)
	n := len(evs)
	require.GreaterOrEqual(t, n, 2)
	assert.NotContains(t, names(evs), "error", "it ends with words")
	assert.Equal(t, "done", evs[n-1].Name)
	calls := len(fake.Completions())
	assert.GreaterOrEqual(t, calls, 2, "the credit paid for a tool round and an answer")
	assert.Nil(t, fake.Completions()[calls-1].Body["tools"], "the last offered no tools")
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
			Reconciled int     `json:"reconciled"`
			BilledUSD  float64 `json:"billed_usd"`
		} `json:"totals"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &usage))
	require.Len(t, usage.Usage, calls)
	assert.InDelta(t, 0.001*float64(calls), usage.Totals.ChargedUSD, 1e-9, "listed at $0.0011 a call, then charged NEAR AI's bill of $0.001")
	assert.Equal(t, calls, usage.Totals.Reconciled)
	assert.InDelta(t, 0.001*float64(calls), usage.Totals.BilledUSD, 1e-9)
	assert.NotEmpty(t, usage.Usage[0].InferenceID, "NEAR AI's inference id")
	assert.Equal(t, "deepseek-ai/DeepSeek-V3.1", usage.Usage[0].Model)

	var dailySpent int64
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT (SELECT coalesce(sum(spent_micros), 0) FROM credit_accounts WHERE kind = 'daily') +
    (SELECT coalesce(sum(spent_micros), 0) FROM credit_daily_slices)`).Scan(&dailySpent))
	assert.Zero(t, dailySpent, "the daily cap doesn't count a person's own credit")
	var spent int64
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT spent_micros FROM credit_accounts WHERE id = $1`, credit.PersonAccount(person)).Scan(&spent))
	assert.EqualValues(t, 1_000*calls, spent, "the person is charged the bill")

	// More chats, until the credit can't pay a first call: 402, never past it.
	refused := false
	for range 10 {
		res, body = p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Cookie", cookie, "Origin", siteOrigin, "Accept", "application/json")
		if res.StatusCode == http.StatusPaymentRequired {
			refused = true
			break
		}
		require.Equal(t, http.StatusAccepted, res.StatusCode, body)
		var started map[string]string
		require.NoError(t, json.Unmarshal([]byte(body), &started))
		_ = p.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+started["run_id"], "", "Cookie", cookie).rest(t)
	}
	assert.True(t, refused, "a 402 once the credit can't pay a first call")
	var left int64
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT spent_micros, limit_micros - spent_micros - held_micros FROM credit_accounts WHERE id = $1`, credit.PersonAccount(person)).Scan(&spent, &left))
	assert.LessOrEqual(t, spent, int64(credit2), "never past the credit")
	assert.GreaterOrEqual(t, left, int64(0))
	assert.Zero(t, heldOnLedger(t, p))
}

// TestAChatReconcilesThePersonsCallsFirst: a chat paid from a person's own
// credit first charges them NEAR AI's bill for their earlier calls (each
// difference its own reconcile entry), without anyone asking for their usage;
// a billing endpoint that fails doesn't hold the chat up; and the bills are
// asked for at most once a minute per person, however many chats they send.
func TestAChatReconcilesThePersonsCallsFirst(t *testing.T) {
	fake := nearaitest.New(t,
		nearaitest.Completion("r1", "deepseek-ai/DeepSeek-V3.1", "The first answer."),
		nearaitest.Completion("r2", "deepseek-ai/DeepSeek-V3.1", "The second answer."),
		nearaitest.Completion("r3", "deepseek-ai/DeepSeek-V3.1", "The third answer."),
		nearaitest.Completion("r4", "deepseek-ai/DeepSeek-V3.1", "The fourth answer."),
	)
	var down atomic.Bool
	var asked atomic.Int32
	down.Store(true)
	env := modelEnv(fake)
	env["PETAL_PAY_TESTNET"] = "1"                                                           // a real model paid with testnet NEAR, as the operator allows
	env["NEAR_AI_BASE_URL"] = withBillingSwitch(t, fake.BaseURL(), 1_000_000, &down, &asked) // NEAR AI bills each call $0.001
	env["PETAL_AGENT_ACCESS"] = "gated"
	env["PETAL_NEAR_USD"] = "1" // 2 NEAR is $2
	p, _ := signInPetal(t, env)
	cookie, person := signInAlice(t, p)
	res, body := p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)

	chat := func() {
		t.Helper()
		evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Cookie", cookie, "Origin", siteOrigin).rest(t)
		require.NotEmpty(t, evs)
		require.Equal(t, "done", evs[len(evs)-1].Name)
		require.NotContains(t, names(evs), "error", "the chat went through")
	}
	reconciled := func() (entries int, billed int) {
		t.Helper()
		require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM credit_entries WHERE account_id = $1 AND kind = 'reconcile'`,
			credit.PersonAccount(person)).Scan(&entries))
		require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM credit_usage WHERE account_id = $1 AND billed_micros IS NOT NULL`,
			credit.PersonAccount(person)).Scan(&billed))
		return entries, billed
	}

	chat() // nothing to reconcile yet: billing isn't asked
	assert.Zero(t, asked.Load())
	chat() // billing is down: asked, and the chat goes on
	assert.EqualValues(t, 1, asked.Load(), "the second chat asked for the first call's bill")
	entries, billed := reconciled()
	assert.Zero(t, entries, "billing didn't answer: nothing reconciled")
	assert.Zero(t, billed)

	chat() // within the minute of that ask: not asked again
	assert.EqualValues(t, 1, asked.Load(), "the bills are asked for at most once a minute per person")
	// A minute goes by (the turn is kept in PostgreSQL, on its clock).
	_, err := p.DB.Pool.Exec(t.Context(), `UPDATE billing_claims SET claimed_at = claimed_at - interval '61 seconds'`)
	require.NoError(t, err)

	down.Store(false)
	chat() // the three earlier calls are reconciled before this one's model call
	assert.EqualValues(t, 2, asked.Load())
	entries, billed = reconciled()
	assert.Equal(t, 3, entries, "one reconcile entry for each earlier call")
	assert.Equal(t, 3, billed, "the fourth call's bill is asked for next time")
	var note string
	var amount int64
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT note, amount_micros FROM credit_entries WHERE account_id = $1 AND kind = 'reconcile' ORDER BY id LIMIT 1`,
		credit.PersonAccount(person)).Scan(&note, &amount))
	assert.Equal(t, "reconciled with NEAR AI's bill", note)
	assert.Negative(t, amount, "listed above NEAR AI's bill of $0.001: the difference goes back")
	assert.Len(t, fake.Completions(), 4)
}

// withBilling puts NEAR AI's POST /v1/billing/costs, billing every call
// nanoUSD, in front of the fake model at modelBase (…/v1), which answers
// everything else.
func withBilling(t *testing.T, modelBase string, nanoUSD int64) string {
	t.Helper()
	return withBillingSwitch(t, modelBase, nanoUSD, nil, nil)
}

// withBillingSwitch is withBilling whose billing answers 503 while down is
// set; asked counts the requests billing had.
func withBillingSwitch(t *testing.T, modelBase string, nanoUSD int64, down *atomic.Bool, asked *atomic.Int32) string {
	t.Helper()
	target, err := url.Parse(strings.TrimSuffix(modelBase, "/v1"))
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/billing/costs" {
			// Full duplex: an HTTP/1 server otherwise closes a request's
			// body when the answer's headers go out, and the proxy's
			// transport, still reading that body for its end, then drops
			// the call to the fake mid-answer (golang/go#40747).
			_ = http.NewResponseController(w).EnableFullDuplex()
			proxy.ServeHTTP(w, r)
			return
		}
		if asked != nil {
			asked.Add(1)
		}
		if down != nil && down.Load() {
			http.Error(w, `{"error":"billing is resting"}`, http.StatusServiceUnavailable)
			return
		}
		var req struct {
			RequestIDs []string `json:"requestIds"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out := []map[string]any{}
		for _, id := range req.RequestIDs {
			out = append(out, map[string]any{"requestId": id, "costNanoUsd": nanoUSD})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"requests": out})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestUsageAsksForBillsOnceAMinute: a hundred GET /api/v1/me/usage at once
// from a person with a call to reconcile make at most one billing call to
// NEAR AI (one ask a minute per person, one at a time), and past 30 a minute
// the route answers 429.
func TestUsageAsksForBillsOnceAMinute(t *testing.T) {
	t.Parallel()
	fake := nearaitest.New(t, nearaitest.Completion("u1", "deepseek-ai/DeepSeek-V3.1", "The answer."))
	var asked atomic.Int32
	env := modelEnv(fake)
	env["NEAR_AI_BASE_URL"] = withBillingSwitch(t, fake.BaseURL(), 1_000_000, nil, &asked)
	env["PETAL_AGENT_ACCESS"] = "gated"
	env["PETAL_PAY_TESTNET"] = "1"
	env["PETAL_NEAR_USD"] = "1"
	p, _ := signInPetal(t, env)
	cookie, _ := signInAlice(t, p)
	res, body := p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Cookie", cookie, "Origin", siteOrigin).rest(t)
	require.Equal(t, "done", evs[len(evs)-1].Name)
	require.Zero(t, asked.Load(), "nothing was pending before the chat")

	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	reconciled := 0
	for range 100 {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, p.URL+"/api/v1/me/usage", nil)
			req.Header.Set("Cookie", cookie)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			var out struct {
				Totals struct {
					Reconciled int `json:"reconciled"`
				} `json:"totals"`
				Error struct {
					Code string `json:"code"`
				} `json:"error"`
			}
			_ = json.NewDecoder(res.Body).Decode(&out)
			mu.Lock()
			defer mu.Unlock()
			statuses[res.StatusCode]++
			reconciled = max(reconciled, out.Totals.Reconciled)
			if res.StatusCode == http.StatusTooManyRequests {
				assert.Equal(t, "rate_limited", out.Error.Code)
				assert.NotEmpty(t, res.Header.Get("Retry-After"))
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, asked.Load(), "a hundred requests, one billing call")
	assert.Equal(t, 30, statuses[http.StatusOK], "30 a minute per person")
	assert.Equal(t, 70, statuses[http.StatusTooManyRequests])
	assert.Equal(t, 1, reconciled, "the call was reconciled")
}
