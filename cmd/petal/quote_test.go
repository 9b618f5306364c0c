package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/domain/credit"
)

type quoteAnswer struct {
	Quote struct {
		ID        string  `json:"id"`
		ExpiresAt string  `json:"expires_at"`
		Payer     *string `json:"payer"`
		MaxUSD    float64 `json:"max_usd"`
		LineItems []struct {
			What            string          `json:"what"`
			Model           string          `json:"model"`
			InputTokensMax  int64           `json:"input_tokens_max"`
			OutputTokensMax int64           `json:"output_tokens_max"`
			USDPerMTokIn    float64         `json:"usd_per_mtok_in"`
			USD             json.RawMessage `json:"usd"`
		} `json:"line_items"`
		Fees []struct {
			Switch string  `json:"switch"`
			USD    float64 `json:"usd"`
		} `json:"fees"`
		TipUSD float64 `json:"tip_usd"`
		Limits struct {
			Rounds     int      `json:"rounds"`
			Seconds    int      `json:"seconds"`
			PerChatUSD *float64 `json:"per_chat_usd"`
		} `json:"limits"`
		LeftUSD *float64 `json:"left_usd"`
	} `json:"quote"`
}

// micros reads a JSON dollar number exactly.
func micros(t *testing.T, raw json.RawMessage) credit.Micros {
	t.Helper()
	m, err := credit.ParseUSD(string(raw))
	require.NoError(t, err, string(raw))
	return m
}

func askQuote(t *testing.T, p *testPetal, body string, headers ...string) quoteAnswer {
	t.Helper()
	res, out := p.do(t, http.MethodPost, "/api/v1/agent/quote", body, headers...)
	require.Equal(t, http.StatusOK, res.StatusCode, out)
	var q quoteAnswer
	require.NoError(t, json.Unmarshal([]byte(out), &q))
	return q
}

func withQuote(body, quoteID string) string {
	return strings.TrimSuffix(body, "}") + `,"quote_id":"` + quoteID + `"}`
}

// fundedPetal is a petal on a fake NEAR AI whose signed-in person has $2 of
// credit, with the base fee's A and C and a 10% tip on.
func fundedPetal(t *testing.T, fake *nearaitest.Server, env map[string]string) (*testPetal, string, string) {
	t.Helper()
	e := modelEnv(fake)
	e["PETAL_AGENT_ACCESS"] = "gated"
	e["PETAL_PAY_TESTNET"] = "1"
	e["PETAL_NEAR_USD"] = "1"
	e["PETAL_FEE_CALL_PERCENT"] = "10"
	e["PETAL_FEE_PER_TURN_USD"] = "0.003"
	for k, v := range env {
		e[k] = v
	}
	p, _ := signInPetal(t, e)
	cookie, person := signInAlice(t, p)
	res, body := p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	res, body = p.do(t, http.MethodPut, "/api/v1/me/tip", `{"tip_percent":10}`, "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	return p, cookie, person
}

// TestAQuoteIsWhatTheLedgerHolds: a quote spends nothing and needs no
// session; each of its model calls is priced as the ledger holds it (the
// same code), so the chat's first hold is the quote's first call at its
// worst with the fee and tip, and max_usd is the sum of those holds within
// the chat's cap and what is left; a chat bound to it says quoted_usd.
func TestAQuoteIsWhatTheLedgerHolds(t *testing.T) {
	t.Parallel()
	fake := nearaitest.New(t, nearaitest.Completion("q1", "deepseek-ai/DeepSeek-V3.1", "Here it is."))
	p, cookie, person := fundedPetal(t, fake, nil)
	price := credit.Price{CallFeeBps: 1000, PerTurn: 3_000}

	res, body := p.do(t, http.MethodPost, "/api/v1/agent/quote", drawIt)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Empty(t, res.Header.Values("Set-Cookie"), "no session opened")
	var stranger quoteAnswer
	require.NoError(t, json.Unmarshal([]byte(body), &stranger))
	assert.Nil(t, stranger.Quote.Payer, "gated, no invite, not signed in: nobody would pay")
	assert.Nil(t, stranger.Quote.LeftUSD)

	q := askQuote(t, p, drawIt, "Cookie", cookie)
	require.NotNil(t, q.Quote.Payer)
	assert.Equal(t, "credit", *q.Quote.Payer)
	assert.True(t, strings.HasPrefix(q.Quote.ID, "quo_"))
	// Eight rounds with tools, then one without: listed while the chat's
	// cap can pay for them (each round's estimate grows by an answer and a
	// whole tool result).
	require.NotEmpty(t, q.Quote.LineItems)
	require.LessOrEqual(t, len(q.Quote.LineItems), 9)
	assert.Equal(t, 8, q.Quote.Limits.Rounds)
	assert.Equal(t, 300, q.Quote.Limits.Seconds)
	require.NotNil(t, q.Quote.Limits.PerChatUSD)
	assert.InDelta(t, 0.5, *q.Quote.Limits.PerChatUSD, 0)
	require.NotNil(t, q.Quote.LeftUSD)
	assert.InDelta(t, 2, *q.Quote.LeftUSD, 0)
	first := micros(t, q.Quote.LineItems[0].USD)
	assert.GreaterOrEqual(t, first, p.Svc.Agent.FirstCallWorstCase("draw the marketing DAO"),
		"at least what the gate counts: the ledger's request also notes the person's agents")
	assert.Equal(t, "deepseek-ai/DeepSeek-V3.1", q.Quote.LineItems[0].Model)
	assert.EqualValues(t, 128, q.Quote.LineItems[0].OutputTokensMax, "a round's first attempt, as the ledger holds it")
	var sum credit.Micros
	for i, li := range q.Quote.LineItems {
		sum += price.WorstCaseParts(micros(t, li.USD), 10, nil).Total()
		if i > 0 {
			assert.Greater(t, li.InputTokensMax, q.Quote.LineItems[i-1].InputTokensMax, "the thread grows")
		}
	}
	maxUSD := credit.Micros(q.Quote.MaxUSD*1e6 + 0.5)
	assert.LessOrEqual(t, sum, maxUSD, "the rounds listed fit in max_usd")
	assert.LessOrEqual(t, maxUSD, credit.Micros(500_000), "max_usd: within the chat's cap")
	for _, li := range q.Quote.LineItems {
		assert.LessOrEqual(t, micros(t, li.USD), maxUSD, "no line item costs more than max_usd")
	}
	if len(q.Quote.LineItems) < 9 {
		assert.Equal(t, credit.Micros(500_000), maxUSD, "rounds left out: the cap is the most")
	}
	assert.NotEmpty(t, q.Quote.Fees)
	assert.Positive(t, q.Quote.TipUSD)
	assert.Empty(t, fake.Completions(), "a quote calls no model")
	var spent int64
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT spent_micros + held_micros FROM credit_accounts WHERE id = $1`, credit.PersonAccount(person)).Scan(&spent))
	assert.Zero(t, spent, "and spends nothing")

	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", withQuote(drawIt, q.Quote.ID), "Cookie", cookie, "Origin", siteOrigin).rest(t)
	done := evs[len(evs)-1]
	require.Equal(t, "done", done.Name, names(evs))
	assert.Equal(t, q.Quote.MaxUSD, done.json(t)["quoted_usd"], "done says the quote beside cost_usd")
	runID := evs[0].json(t)["run_id"].(string)
	var hold int64
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT amount_micros FROM credit_holds WHERE run_id = $1`, runID).Scan(&hold))
	assert.EqualValues(t, price.WorstCase(first, 10, nil), hold, "the chat's hold is the quote's first call at its worst, fee and tip in")
}

// TestAChatStopsAtItsQuote: a chat whose rounds would cost more than its
// quote (here the model's first answer writes five tool calls of 320 KB of arguments each, far
// past the quote's estimate of a round) stops with budget_exhausted naming
// the quote before the call that could pass it; what it held never passed
// max_usd.
func TestAChatStopsAtItsQuote(t *testing.T) {
	t.Parallel()
	huge := nearaitest.Call{Name: "no_such_tool", Args: `{"x":"` + strings.Repeat("y", 320<<10) + `"}`}
	fake := nearaitest.New(t, nearaitest.Completion("s1", "deepseek-ai/DeepSeek-V3.1", "", huge, huge, huge, huge, huge),
		nearaitest.Completion("s2", "deepseek-ai/DeepSeek-V3.1", "Done."))
	p, cookie, _ := fundedPetal(t, fake, map[string]string{"PETAL_PERSON_USD_PER_CHAT": "5", "PETAL_NEAR_USD": "10"}) // $20 of credit
	q := askQuote(t, p, drawIt, "Cookie", cookie)
	quoted := credit.Micros(q.Quote.MaxUSD*1e6 + 0.5)
	require.Less(t, quoted, credit.Micros(5_000_000), "the quote, not the chat's cap nor the credit, binds: %v", q.Quote.MaxUSD)

	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", withQuote(drawIt, q.Quote.ID), "Cookie", cookie, "Origin", siteOrigin).rest(t)
	n := len(evs)
	require.GreaterOrEqual(t, n, 2, names(evs))
	assert.Equal(t, "error", evs[n-2].Name, names(evs))
	assert.Equal(t, "budget_exhausted", evs[n-2].json(t)["code"])
	assert.Contains(t, evs[n-2].json(t)["message"], "quote "+q.Quote.ID)
	assert.Equal(t, "done", evs[n-1].Name)
	assert.EqualValues(t, 1, evs[n-1].json(t)["turns"])
	assert.Len(t, fake.Completions(), 1, "the second call was never made")
	runID := evs[0].json(t)["run_id"].(string)
	var held int64
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT coalesce(sum(amount_micros), 0) FROM credit_holds WHERE run_id = $1`, runID).Scan(&held))
	assert.LessOrEqual(t, credit.Micros(held), quoted, "the holds never passed the quote")
	assert.Zero(t, heldOnLedger(t, p))
}

// TestAQuoteIsUsedOnceBeforeItExpires: a second chat on a used quote, a chat
// on an expired one or on other messages is 409 with a hint to ask again; an
// unknown one is 404; of chats racing on one quote, one starts; a refused
// chat leaves the quote unused.
func TestAQuoteIsUsedOnceBeforeItExpires(t *testing.T) {
	fake := nearaitest.New(t)
	p, cookie, _ := fundedPetal(t, fake, nil)
	chat := func(body string) (int, string) {
		res, out := p.do(t, http.MethodPost, "/api/v1/agent/chat", body, "Cookie", cookie, "Origin", siteOrigin, "Accept", "application/json")
		return res.StatusCode, out
	}

	q := askQuote(t, p, drawIt, "Cookie", cookie).Quote.ID
	status, body := chat(withQuote(`{"messages":[{"role":"user","content":"something else"}]}`, q))
	assert.Equal(t, http.StatusConflict, status, body)
	assert.Contains(t, body, "other messages")
	assert.Contains(t, body, "ask for a new quote")

	// Racing chats on one quote: one starts, the rest are 409.
	var started, conflicts atomic.Int32
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			switch status, _ := chat(withQuote(drawIt, q)); status {
			case http.StatusAccepted:
				started.Add(1)
			case http.StatusConflict:
				conflicts.Add(1)
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, started.Load())
	assert.EqualValues(t, 4, conflicts.Load())
	status, body = chat(withQuote(drawIt, q))
	assert.Equal(t, http.StatusConflict, status, body)
	assert.Contains(t, body, "already used")

	expired := askQuote(t, p, drawIt, "Cookie", cookie).Quote.ID
	_, err := p.DB.Pool.Exec(t.Context(), `UPDATE chat_quotes SET expires_at = now() - interval '1 second' WHERE id = $1`, expired)
	require.NoError(t, err)
	status, body = chat(withQuote(drawIt, expired))
	assert.Equal(t, http.StatusConflict, status, body)
	assert.Contains(t, body, "expired")
	assert.Contains(t, body, `"hint":"ask for a new quote`)

	status, body = chat(withQuote(drawIt, "quo_"+strings.Repeat("0", 32)))
	assert.Equal(t, http.StatusNotFound, status, body)

	res, body := p.do(t, http.MethodPost, "/api/v1/agent/quote", `{"messages":[]}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	res, body = p.do(t, http.MethodPost, "/api/v1/agent/quote", `{"messages":[{"role":"user","content":"hi"}],"quote_id":"x"}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, "a quote takes no quote_id: %s", body)
}

// TestAQuotedChatSpendsWhatAnUnquotedOneDoes: the same scripted model, once
// with a quote and once without, spends the same; only the quoted one's done
// carries quoted_usd.
func TestAQuotedChatSpendsWhatAnUnquotedOneDoes(t *testing.T) {
	t.Parallel()
	call := nearaitest.Call{Name: "validate_spec", Args: `{}`}
	fake := nearaitest.New(t,
		nearaitest.Completion("u1", "deepseek-ai/DeepSeek-V3.1", "", call), nearaitest.Completion("u2", "deepseek-ai/DeepSeek-V3.1", "Checked."),
		nearaitest.Completion("v1", "deepseek-ai/DeepSeek-V3.1", "", call), nearaitest.Completion("v2", "deepseek-ai/DeepSeek-V3.1", "Checked."),
	)
	p, cookie, person := fundedPetal(t, fake, nil)
	spent := func() int64 {
		var s int64
		require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT spent_micros FROM credit_accounts WHERE id = $1`, credit.PersonAccount(person)).Scan(&s))
		return s
	}
	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Cookie", cookie, "Origin", siteOrigin).rest(t)
	unquoted := evs[len(evs)-1].json(t)
	afterFirst := spent()

	q := askQuote(t, p, drawIt, "Cookie", cookie)
	evs = p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", withQuote(drawIt, q.Quote.ID), "Cookie", cookie, "Origin", siteOrigin).rest(t)
	quoted := evs[len(evs)-1].json(t)
	require.NotContains(t, names(evs), "error")

	assert.Equal(t, unquoted["cost_usd"], quoted["cost_usd"])
	assert.Equal(t, unquoted["turns"], quoted["turns"])
	assert.Equal(t, afterFirst, spent()-afterFirst, "the same spent from the credit, fees and tip included")
	assert.NotContains(t, unquoted, "quoted_usd")
	assert.Equal(t, q.Quote.MaxUSD, quoted["quoted_usd"])
	assert.Zero(t, heldOnLedger(t, p))
}
