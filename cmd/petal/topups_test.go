package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/oneclick/oneclicktest"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/domain/credit"
)

const followJob = "follow_top_ups"

// topUpPetal is a signed-in petal over a fake 1Click, whose follow job runs
// only when the test says (runFollowJob).
func topUpPetal(t *testing.T, env map[string]string) (*testPetal, *oneclicktest.Fake) {
	t.Helper()
	fake := oneclicktest.New(t)
	db := pgtest.New(t)
	_, err := db.Pool.Exec(t.Context(), `INSERT INTO scheduled_jobs (name, next_at) VALUES ($1, now() + interval '1 hour')`, followJob)
	require.NoError(t, err)
	rpc := nearrpctest.New(t)
	e := map[string]string{"PETAL_API": "https://petal.example", "PETAL_NEAR_RPC_MAINNET": rpc.URL, "PETAL_NEAR_RPC_TESTNET": rpc.URL,
		"PETAL_ONECLICK_URL": fake.URL, "PETAL_NEAR_USD": "3"}
	for k, v := range env {
		e[k] = v
	}
	return startPetalOn(t, e, db, db.DB), fake
}

// runFollowJob runs the follow job once now, then puts it off again.
func runFollowJob(t *testing.T, p *testPetal) {
	t.Helper()
	_, err := p.DB.Pool.Exec(t.Context(), `UPDATE scheduled_jobs SET next_at = now() WHERE name = $1`, followJob)
	require.NoError(t, err)
	ran, err := p.Svc.Jobs.RunDue(t.Context(), followJob)
	require.NoError(t, err)
	require.True(t, ran)
	_, err = p.DB.Pool.Exec(t.Context(), `UPDATE scheduled_jobs SET next_at = now() + interval '1 hour' WHERE name = $1`, followJob)
	require.NoError(t, err)
}

type topUpAnswer struct {
	TopUp struct {
		DepositAddress string  `json:"deposit_address"`
		Status         string  `json:"status"`
		CreditedUSD    float64 `json:"credited_usd"`
		OriginTx       *string `json:"origin_tx"`
		DestinationTx  *string `json:"destination_tx"`
	} `json:"top_up"`
	Credit *struct {
		FundedUSD float64 `json:"funded_usd"`
		SpentUSD  float64 `json:"spent_usd"`
	} `json:"credit"`
}

func newTopUp(t *testing.T, p *testPetal, cookie, usd string) string {
	t.Helper()
	res, body := p.do(t, http.MethodPost, "/api/v1/pay/intents", `{"usd":`+usd+`,"origin_asset":"`+oneclicktest.ETH+`","refund_to":"0x2527D02599Ba641c19FEa793cD0F9a6e8457C317"}`,
		"Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var out struct {
		TopUp struct {
			DepositAddress string `json:"deposit_address"`
		} `json:"top_up"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	return out.TopUp.DepositAddress
}

func checkTopUp(t *testing.T, p *testPetal, cookie, address string) topUpAnswer {
	t.Helper()
	res, body := p.do(t, http.MethodGet, "/api/v1/pay/intents/"+address, "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var out topUpAnswer
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	return out
}

func entriesOf(t *testing.T, p *testPetal, person string) []string {
	t.Helper()
	rows, err := p.DB.Pool.Query(t.Context(), `SELECT kind || ' ' || amount_micros || ' ' || note FROM credit_entries WHERE account_id = $1 ORDER BY id`,
		credit.PersonAccount(person))
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	return out
}

// TestTopUpThroughNEARIntents walks a top-up from the token list to SUCCESS
// through the fake 1Click: quoted EXACT_OUTPUT into NEAR Intents under the
// receiver setting, followed by GET and by the job through statuses that
// flip back, credited once at SUCCESS with switch B as its own entry; then a
// refund, an incomplete deposit, 1Click down, someone else's top-up, the
// refusals, and a top-up past its deadline left alone.
func TestTopUpThroughNEARIntents(t *testing.T) {
	t.Parallel()
	p, fake := topUpPetal(t, map[string]string{"PETAL_FEE_TOPUP_PERCENT": "2", "PETAL_RECEIVER_MAINNET": "petal-treasury.near",
		"PETAL_ONECLICK_KEY": "partner-jwt"})
	cookie, person := signInAlice(t, p)

	res, body := p.do(t, http.MethodGet, "/api/v1/pay/tokens", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `{"asset":"nep141:eth.omft.near","chain":"eth","symbol":"ETH","decimals":18,"usd":2500}`)
	assert.Contains(t, body, `"usd":3.1234567`, "the price as 1Click wrote it")

	res, body = p.do(t, http.MethodGet, "/api/v1/pay", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"receiver":"petal-treasury.near"`, "the receiver is the setting, for NEAR transfers too")

	refusals := []struct {
		name, body string
		headers    []string
		status     int
		field      string
	}{
		{"over $1,000", `{"usd":1000.01,"origin_asset":"` + oneclicktest.ETH + `","refund_to":"0xabc"}`, nil, 400, "usd"},
		{"$0", `{"usd":0,"origin_asset":"` + oneclicktest.ETH + `","refund_to":"0xabc"}`, nil, 400, "usd"},
		{"under $0", `{"usd":-5,"origin_asset":"` + oneclicktest.ETH + `","refund_to":"0xabc"}`, nil, 400, "usd"},
		{"a fraction of a micro-dollar", `{"usd":1.0000001,"origin_asset":"` + oneclicktest.ETH + `","refund_to":"0xabc"}`, nil, 400, "usd"},
		{"a token 1Click doesn't list", `{"usd":5,"origin_asset":"nep141:nope.near","refund_to":"0xabc"}`, nil, 400, "origin_asset"},
		{"no refund address", `{"usd":5,"origin_asset":"` + oneclicktest.ETH + `","refund_to":""}`, nil, 400, "refund_to"},
		{"an unknown field", `{"usd":5,"origin_asset":"` + oneclicktest.ETH + `","refund_to":"0xabc","to":"me"}`, nil, 400, "to"},
		{"from another site", `{"usd":5,"origin_asset":"` + oneclicktest.ETH + `","refund_to":"0xabc"}`, []string{"Origin", "https://evil.example"}, 401, ""},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			headers := append([]string{"Cookie", cookie, "Origin", siteOrigin}, tc.headers...)
			res, body := p.do(t, http.MethodPost, "/api/v1/pay/intents", tc.body, headers...)
			assert.Equal(t, tc.status, res.StatusCode, body)
			assert.Contains(t, body, tc.field)
		})
	}
	res, body = p.do(t, http.MethodPost, "/api/v1/pay/intents", `{"usd":5,"origin_asset":"`+oneclicktest.ETH+`","refund_to":"0xabc"}`)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "not signed in: %s", body)
	assert.Empty(t, fake.Quotes(), "no refusal reached 1Click")

	res, body = p.do(t, http.MethodPost, "/api/v1/pay/intents", `{"usd":5,"origin_asset":"`+oneclicktest.ETH+`","refund_to":"0x2527D02599Ba641c19FEa793cD0F9a6e8457C317"}`,
		"Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var quoted struct {
		TopUp map[string]any `json:"top_up"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &quoted))
	address := quoted.TopUp["deposit_address"].(string)
	assert.Contains(t, body, `"amount_in":"2005000000000000","amount_in_formatted":"0.002005","amount_in_usd":5.000000,"amount_out":"5000000","amount_out_usd":5.000000`)
	assert.Contains(t, body, `"deposit_memo":null,"origin_asset":"nep141:eth.omft.near"`)
	assert.Contains(t, body, `"usd":5,"status":"PENDING_DEPOSIT"`)
	q := fake.Quotes()[0]
	assert.Equal(t, "EXACT_OUTPUT", q.SwapType)
	assert.False(t, q.Dry)
	assert.Equal(t, "5000000", q.Amount, "$5 of USDC, in micro-dollars")
	assert.Equal(t, oneclicktest.USDC, q.DestinationAsset)
	assert.Equal(t, "petal-treasury.near", q.Recipient, "delivered under the receiver setting")
	assert.Equal(t, "INTENTS", q.RecipientType)
	assert.Equal(t, []string{"Bearer partner-jwt"}, fake.Authorizations())

	fake.Script(address, oneclicktest.Step{Status: "KNOWN_DEPOSIT_TX"}, oneclicktest.Step{Status: "PROCESSING"}, oneclicktest.Step{Status: "KNOWN_DEPOSIT_TX"},
		oneclicktest.Step{Status: "SUCCESS", AmountOut: "5000000"}, oneclicktest.Step{Status: "PROCESSING"})
	got := checkTopUp(t, p, cookie, address)
	assert.Equal(t, "KNOWN_DEPOSIT_TX", got.TopUp.Status)
	assert.NotNil(t, got.TopUp.OriginTx)
	assert.Nil(t, got.Credit, "no credit yet")
	assert.Equal(t, "PROCESSING", checkTopUp(t, p, cookie, address).TopUp.Status)
	assert.Equal(t, "KNOWN_DEPOSIT_TX", checkTopUp(t, p, cookie, address).TopUp.Status, "a status that flips back is shown as it is")

	runFollowJob(t, p) // the person closed the page: the job sees SUCCESS
	got = checkTopUp(t, p, cookie, address)
	assert.Equal(t, "SUCCESS", got.TopUp.Status, "and a flip back after SUCCESS is not believed")
	assert.InDelta(t, 5, got.TopUp.CreditedUSD, 0)
	assert.NotNil(t, got.TopUp.DestinationTx)
	require.NotNil(t, got.Credit)
	assert.InDelta(t, 5, got.Credit.FundedUSD, 0)
	assert.InDelta(t, 0.1, got.Credit.SpentUSD, 1e-9, "switch B: 2%")
	calls := fake.StatusCalls(address)
	checkTopUp(t, p, cookie, address)
	runFollowJob(t, p)
	assert.Equal(t, calls, fake.StatusCalls(address), "over: nobody asks 1Click any more")
	assert.Equal(t, []string{"top_up 5000000 NEAR Intents top-up " + address, "fee 100000 Petals base fee (top-up)"}, entriesOf(t, p, person),
		"credited once, as its own entry, its fee another")

	// Refunded: nothing credited, and it ends.
	refunded := newTopUp(t, p, cookie, "7")
	fake.Script(refunded, oneclicktest.Step{Status: "REFUNDED"})
	got = checkTopUp(t, p, cookie, refunded)
	assert.Equal(t, "REFUNDED", got.TopUp.Status)
	assert.Zero(t, got.TopUp.CreditedUSD)
	assert.InDelta(t, 5, got.Credit.FundedUSD, 0)

	// Incomplete: not over, followed until the rest arrives; what arrives
	// is credited, never more than was asked.
	incomplete := newTopUp(t, p, cookie, "2.5")
	fake.Script(incomplete, oneclicktest.Step{Status: "INCOMPLETE_DEPOSIT"}, oneclicktest.Step{Status: "SUCCESS", AmountOut: "9000000"})
	assert.Equal(t, "INCOMPLETE_DEPOSIT", checkTopUp(t, p, cookie, incomplete).TopUp.Status)
	runFollowJob(t, p)
	got = checkTopUp(t, p, cookie, incomplete)
	assert.Equal(t, "SUCCESS", got.TopUp.Status)
	assert.InDelta(t, 2.5, got.TopUp.CreditedUSD, 0)
	assert.InDelta(t, 7.5, got.Credit.FundedUSD, 0)

	// 1Click down: 503, and nothing changes.
	pending := newTopUp(t, p, cookie, "1")
	var quotes int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM intent_topups`).Scan(&quotes))
	fake.Down(true)
	res, body = p.do(t, http.MethodGet, "/api/v1/pay/intents/"+pending, "", "Cookie", cookie)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
	assert.Contains(t, body, `"code":"source_failed"`)
	res, body = p.do(t, http.MethodPost, "/api/v1/pay/intents", `{"usd":5,"origin_asset":"`+oneclicktest.ETH+`","refund_to":"0xabc"}`, "Cookie", cookie, "Origin", siteOrigin)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
	var after int
	var checked *string
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*), (SELECT checked_at::text FROM intent_topups WHERE deposit_address = $1) FROM intent_topups`,
		pending).Scan(&after, &checked))
	assert.Equal(t, quotes, after, "no quote kept")
	assert.Nil(t, checked, "the top-up unchanged")
	assert.Equal(t, []string{"top_up 5000000 NEAR Intents top-up " + address, "fee 100000 Petals base fee (top-up)",
		"top_up 2500000 NEAR Intents top-up " + incomplete, "fee 50000 Petals base fee (top-up)"}, entriesOf(t, p, person))
	fake.Down(false)

	// Someone else's, or none: the same 404.
	_, err := p.DB.Pool.Exec(t.Context(), `INSERT INTO people (id) VALUES ('prs_`+strings.Repeat("e", 32)+`');
INSERT INTO intent_topups (deposit_address, person_id, usd_micros, origin_asset, refund_to, amount_in, amount_in_formatted, amount_in_usd,
 amount_out, amount_out_usd, deadline, quote, status) VALUES ('0xtheirs', 'prs_`+strings.Repeat("e", 32)+`', 1000000, 'a', 'r', '1', '1', '1', '1000000', '1', now() + interval '1 hour', '', 'PENDING_DEPOSIT')`)
	require.NoError(t, err)
	res, theirs := p.do(t, http.MethodGet, "/api/v1/pay/intents/0xtheirs", "", "Cookie", cookie)
	assert.Equal(t, http.StatusNotFound, res.StatusCode, theirs)
	res, none := p.do(t, http.MethodGet, "/api/v1/pay/intents/0xnone", "", "Cookie", cookie)
	assert.Equal(t, http.StatusNotFound, res.StatusCode, none)
	assert.Equal(t, strings.Replace(theirs, "0xtheirs", "0xnone", 1), none)
	res, _ = p.do(t, http.MethodGet, "/api/v1/pay/intents/"+address, "")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)

	// Past its deadline by more than a day: the job lets it go.
	_, err = p.DB.Pool.Exec(t.Context(), `UPDATE intent_topups SET deadline = now() - interval '25 hours' WHERE deposit_address = $1`, pending)
	require.NoError(t, err)
	before := fake.StatusCalls(pending)
	runFollowJob(t, p)
	assert.Equal(t, before, fake.StatusCalls(pending))
}

// TestATopUpRacedByGETAndTheJobIsCreditedOnce: the person's GETs and the
// follow job see the same SUCCESS at once; the credit lands once.
func TestATopUpRacedByGETAndTheJobIsCreditedOnce(t *testing.T) {
	t.Parallel()
	p, fake := topUpPetal(t, nil)
	cookie, person := signInAlice(t, p)
	address := newTopUp(t, p, cookie, "12.5")
	fake.Script(address, oneclicktest.Step{Status: "SUCCESS", AmountOut: "12500000"})
	_, err := p.DB.Pool.Exec(t.Context(), `UPDATE scheduled_jobs SET next_at = now() WHERE name = $1`, followJob)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := p.Svc.Jobs.RunDue(t.Context(), followJob); err != nil {
			t.Error(err)
		}
	})
	for range 6 {
		wg.Go(func() {
			res, body := p.do(t, http.MethodGet, "/api/v1/pay/intents/"+address, "", "Cookie", cookie)
			if res.StatusCode != http.StatusOK || !strings.Contains(body, `"status":"SUCCESS"`) {
				t.Errorf("GET: %d %s", res.StatusCode, body)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, []string{"top_up 12500000 NEAR Intents top-up " + address}, entriesOf(t, p, person))
	var funded int64
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT limit_micros FROM credit_accounts WHERE id = $1`, credit.PersonAccount(person)).Scan(&funded))
	assert.EqualValues(t, 12_500_000, funded)
}
