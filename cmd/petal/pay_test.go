package main

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/nearai"
	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/oneclick"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
)

// Transaction hashes of the recordings in adapters/nearrpc/nearrpctest/testdata.
const (
	txTransfer     = "DDgQS9a6irPgbjEdCTieYMqFDxFxZhQXJiFTSxXbkzPe" // 2 NEAR to petals.testnet, with its gas refund
	txFunctionCall = "E9wkGASnAztFKCBuEgCGh31s8u85EwJXKRBKsmPGPF6"  // a call to petals.testnet: only a gas refund comes back
	txFailed       = "EZMbUfKHsYWvS8pJW78pZJTnx4qaWQ7fe6d9RCnPZsnQ"
	txOther        = "6uvjFmZMukc4WWAq7XcbY32m6jaNFqvaWt3yf3e2YsVk" // to someone.testnet
	txBatch        = "CfHQSGJWwvVhU3xeYRn6fhHafjjQbDro4AsvfZ5DaqpR" // CreateAccount, then 0.5 NEAR
	txUnknown      = "CsPxP6wysLdGmh4UEy4nvmQnVbjagbJSpiqiaf9GSREy"
)

// signInAlice signs alice.testnet in with the independent vector and returns
// her session cookie header and person id.
func signInAlice(t *testing.T, p *testPetal) (string, string) {
	t.Helper()
	v := loadVectors(t)[0]
	issue(t, p, v.NonceBase64, v.Recipient, 5*time.Minute)
	res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", vectorProof(v, v.SignatureBase64)), "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var out struct {
		PersonID string `json:"person_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	return "__Host-petal_session=" + cookieOf(res, "__Host-petal_session").Value, out.PersonID
}

func payBody(network, account, hash string) string {
	b, _ := json.Marshal(map[string]string{"network": network, "account_id": account, "tx_hash": hash})
	return string(b)
}

// fixedPrice is the price a top-up says it was counted at with PETAL_NEAR_USD:
// the fixed price, at the recorded block's time (2026-11-01T12:00:00Z).
const fixedPrice = `"price":{"at":"2026-11-01T12:00:00Z","source":"PETAL_NEAR_USD","block_at":"2026-11-01T12:00:00Z"}`

func TestPayingInNEAR(t *testing.T) {
	t.Parallel()
	p, rpc := signInPetal(t, map[string]string{"PETAL_NEAR_USD": "3.25"})
	cookie, person := signInAlice(t, p)

	res, body := p.do(t, http.MethodGet, "/api/v1/pay", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","network":"mainnet","receiver":"petals.near","near_usd":3.25}`, body, "anyone else: mainnet")
	res, body = p.do(t, http.MethodGet, "/api/v1/pay", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","network":"testnet","receiver":"petals.testnet","near_usd":3.25}`, body, "the network she signed in on")

	pay := func(hash string, headers ...string) (*http.Response, string) {
		return p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", hash), append([]string{"Cookie", cookie, "Origin", siteOrigin}, headers...)...)
	}
	res, body = pay(txTransfer)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","added_usd":6.5,"added_near":2,"near_usd":3.25,`+fixedPrice+`,
		"credit":{"funded_usd":6.5,"spent_usd":0,"left_usd":6.5,"usd_per_chat":0.5}}`, body, "2 NEAR at $3.25; the gas refund in its receipts is not counted")

	res, body = pay(txTransfer)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","added_usd":0,"added_near":0,"near_usd":3.25,`+fixedPrice+`,
		"credit":{"funded_usd":6.5,"spent_usd":0,"left_usd":6.5,"usd_per_chat":0.5}}`, body, "a transfer sent twice counts once")

	res, body = pay(txBatch)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"added_usd":1.625`, "only the batch's Transfer counts")

	res, body = p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `"credit":{"funded_usd":8.125,"spent_usd":0,"left_usd":8.125,"usd_per_chat":0.5}`)

	refusals := []struct {
		name   string
		body   string
		hdr    []string
		status int
		code   string
	}{
		{"a call whose only NEAR back is a gas refund", payBody("testnet", "alice.testnet", txFunctionCall), nil, 400, "bad_input"},
		{"a failed transfer", payBody("testnet", "alice.testnet", txFailed), nil, 400, "bad_input"},
		{"a transfer to someone else", payBody("testnet", "alice.testnet", txOther), nil, 400, "bad_input"},
		{"no such transaction", payBody("testnet", "alice.testnet", txUnknown), nil, 404, "not_found"},
		{"not her wallet", payBody("testnet", "bob.testnet", txTransfer), nil, 401, "unauthorised"},
		{"her account on a network she has no wallet on", payBody("mainnet", "alice.testnet", txTransfer), nil, 401, "unauthorised"},
		{"a network that isn't one", payBody("betanet", "alice.testnet", txTransfer), nil, 400, "bad_input"},
		{"a hash that isn't one", payBody("testnet", "alice.testnet", "0xabc"), nil, 400, "bad_input"},
		{"an unknown field", `{"network":"testnet","account_id":"alice.testnet","tx_hash":"` + txTransfer + `","usd":100}`, nil, 400, "bad_input"},
		{"from another site", payBody("testnet", "alice.testnet", txBatch), []string{"Origin", "https://evil.example"}, 401, "unauthorised"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			headers := []string{"Cookie", cookie, "Origin", siteOrigin}
			headers = append(headers, tc.hdr...)
			res, body := p.do(t, http.MethodPost, "/api/v1/pay", tc.body, headers...)
			assert.Equal(t, tc.status, res.StatusCode, body)
			assert.Contains(t, body, `"code":"`+tc.code+`"`)
		})
	}
	res, body = p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer))
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "not signed in: %s", body)

	// NEAR down: source_failed, and nothing changes.
	var before int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM credit_topups`).Scan(&before))
	rpc.Inject(nearrpctest.Fault{Method: "tx", Status: http.StatusServiceUnavailable, Times: 3})
	res, body = p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", "8Ha8HvfzMNTKKZ7bvN3DRJcXjWNmCTUWahmFpGBLq3Fe"), "Cookie", cookie)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
	assert.Contains(t, body, `"code":"source_failed"`)
	var after int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM credit_topups`).Scan(&after))
	assert.Equal(t, before, after)

	var entries, topups int64
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM credit_topups WHERE person_id = $1), (SELECT limit_micros FROM credit_accounts WHERE id = $2)`,
		person, credit.PersonAccount(person)).Scan(&topups, &entries))
	assert.EqualValues(t, 2, topups)
	assert.EqualValues(t, 8_125_000, entries)
}

func TestPayWithoutAPriceOrOnAPublicSite(t *testing.T) {
	t.Parallel()
	p, _ := signInPetal(t, nil)
	cookie, _ := signInAlice(t, p)
	res, body := p.do(t, http.MethodGet, "/api/v1/pay", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","network":"testnet","receiver":"petals.testnet","near_usd":null}`, body)
	res, body = p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
	assert.Contains(t, body, `"code":"source_failed"`, "no price, nothing counted")
	var n int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM credit_topups`).Scan(&n))
	assert.Zero(t, n)

	pub, _ := signInPetal(t, map[string]string{"PETAL_PUBLIC": "1", "PETAL_NEAR_USD": "3"})
	cookie, _ = signInAlice(t, pub)
	res, body = pub.do(t, http.MethodGet, "/api/v1/pay", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"network":"mainnet"`, "a public site counts mainnet only")
	res, body = pub.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
}

func TestPriceTipAndUsage(t *testing.T) {
	t.Parallel()
	p, _ := signInPetal(t, map[string]string{"PETAL_NEAR_USD": "3.25"})
	res, body := p.do(t, http.MethodGet, "/api/v1/price", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var price struct {
		Price map[string]any `json:"price"`
		Hash  string         `json:"hash"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &price))
	assert.Equal(t, "price/v2", price.Price["version"])
	assert.Regexp(t, `^[0-9a-f]{64}$`, price.Hash)
	assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"), "the price is for anyone")

	for _, path := range []string{"/api/v1/me/tip", "/api/v1/me/usage"} {
		res, _ := p.do(t, http.MethodGet, path, "")
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, path)
	}
	cookie, person := signInAlice(t, p)
	res, body = p.do(t, http.MethodGet, "/api/v1/me/tip", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","tip_percent":0,"min_percent":0,"max_percent":50,"step_percent":1}`, body)
	for _, bad := range []string{`{"tip_percent":51}`, `{"tip_percent":-1}`, `{"tip_percent":2.5}`, `{"tip_percent":"5"}`, `{"tip":5}`} {
		res, body = p.do(t, http.MethodPut, "/api/v1/me/tip", bad, "Cookie", cookie)
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s", bad, body)
	}
	res, body = p.do(t, http.MethodPut, "/api/v1/me/tip", `{"tip_percent":10}`, "Cookie", cookie, "Origin", "https://evil.example")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	res, body = p.do(t, http.MethodPut, "/api/v1/me/tip", `{"tip_percent":10}`, "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"tip_percent":10`)

	// Fund her and pay for two model calls through the real ledger.
	res, body = p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	ctx := t.Context()
	store := postgres.NewLedgerRepository(p.DB.DB)
	peopleStore := postgres.NewPeopleRepository(p.DB.DB)
	ledger := moneyapp.NewLedger(config.Config{}, store, peopleStore, memory.SystemClock{}, rand.Reader, nil)
	access := moneyapp.NewAccess(p.Cfg, postgres.NewSessionRepository(p.DB.DB), postgres.NewInviteRepository(p.DB.DB), store, memory.SystemClock{})
	var sessionID string
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT id FROM sessions WHERE subject = $1`, person).Scan(&sessionID))
	payer, err := access.Gate(ctx, toolkit.Caller{Subject: person, Session: sessionID})
	require.NoError(t, err)
	require.Equal(t, credit.PayPerson, payer.Kind, "her own credit pays first")
	for i, cost := range []credit.Micros{20_000, 30_000} {
		h, err := ledger.Reserve(ctx, payer, "run_1", "proc", 100_000)
		require.NoError(t, err)
		require.NoError(t, ledger.SettleCall(ctx, h, cost, credit.Usage{InferenceID: []string{"inf-1", "inf-2"}[i], Model: "m", TokensIn: 100, TokensCached: 20, TokensOut: 10}, credit.CallContext{}))
		if i == 0 {
			require.NoError(t, ledger.Reconcile(ctx, h, 18_000), "NEAR AI billed less: the difference goes back")
			require.NoError(t, ledger.Reconcile(ctx, h, 1), "once")
		}
	}
	res, body = p.do(t, http.MethodGet, "/api/v1/me/usage", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var usage struct {
		Usage []struct {
			Version       string   `json:"version"`
			InferenceID   string   `json:"inference_id"`
			ListUSD       float64  `json:"list_usd"`
			ChargedUSD    float64  `json:"charged_usd"`
			BilledUSD     *float64 `json:"billed_usd"`
			ReconciledUSD float64  `json:"reconciled_usd"`
			Tokens        struct{ In, Cached, Out int }
		} `json:"usage"`
		Totals struct {
			Calls      int     `json:"calls"`
			ChargedUSD float64 `json:"charged_usd"`
			Reconciled int     `json:"reconciled"`
			BilledUSD  float64 `json:"billed_usd"`
		} `json:"totals"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &usage))
	require.Len(t, usage.Usage, 2)
	assert.Equal(t, "inf-2", usage.Usage[0].InferenceID, "newest first")
	assert.Equal(t, "usage/v1", usage.Usage[0].Version)
	assert.Equal(t, 0.033, usage.Usage[0].ChargedUSD, "the bill and the 10% tip")
	assert.Nil(t, usage.Usage[0].BilledUSD)
	assert.Equal(t, 0.02, usage.Usage[1].ListUSD)
	require.NotNil(t, usage.Usage[1].BilledUSD)
	assert.Equal(t, 0.018, *usage.Usage[1].BilledUSD)
	assert.Equal(t, -0.002, usage.Usage[1].ReconciledUSD)
	assert.Equal(t, 0.02, usage.Usage[1].ChargedUSD, "0.022 charged, 0.002 given back")
	assert.Equal(t, 100, usage.Usage[1].Tokens.In)
	assert.Equal(t, 2, usage.Totals.Calls)
	assert.Equal(t, 1, usage.Totals.Reconciled)

	var kinds []string
	rows, err := p.DB.Pool.Query(ctx, `SELECT kind FROM credit_entries WHERE account_id = $1 ORDER BY id`, credit.PersonAccount(person))
	require.NoError(t, err)
	for rows.Next() {
		var k string
		require.NoError(t, rows.Scan(&k))
		kinds = append(kinds, k)
	}
	assert.Equal(t, []string{"top_up", "call", "tip", "reconcile", "call", "tip"}, kinds, "each part is its own entry")
	res, body = p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"spent_usd":0.053`)
	assert.Contains(t, body, `"left_usd":6.447`)

	res, body = p.do(t, http.MethodPut, "/api/v1/me/tip", `{"tip_percent":null}`, "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"tip_percent":0`, "null puts it back")
}

func TestTheNEARPriceFromNEARIntents(t *testing.T) {
	t.Parallel()
	oneClick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v0/tokens" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"assetId":"nep141:wrap.near","decimals":24,"blockchain":"near","symbol":"wNEAR","price":4.5,"priceUpdatedAt":"2026-11-30T00:58:30.221Z","contractAddress":"wrap.near"}]`))
	}))
	defer oneClick.Close()
	p, rpc := signInPetal(t, map[string]string{"PETAL_ONECLICK_URL": oneClick.URL})
	blockAt(t, rpc, time.Now().Add(-2*time.Minute)) // a transfer made just now
	cookie, _ := signInAlice(t, p)
	res, body := p.do(t, http.MethodGet, "/api/v1/pay", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"near_usd":4.5`)
	res, body = p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"added_usd":9`, "2 NEAR at $4.50")
	assert.Contains(t, body, `"source":"`+moneyapp.SourceOneClick+`"`)
}

// blockAt makes every block the fake RPC answers (the recordings' blocks
// among them) a block made at at.
func blockAt(t *testing.T, rpc *nearrpctest.Server, at time.Time) {
	t.Helper()
	ns := at.UnixNano()
	res, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "dontcare", "result": map[string]any{"header": map[string]any{
		"height": 131000000, "hash": "4kbcD3NeZ7Gf8VQ5cFmLQAk1VtUTXK6wzCZnhZqK1nUj", "timestamp": ns, "timestamp_nanosec": strconv.FormatInt(ns, 10)}}})
	require.NoError(t, err)
	rpc.Add(nearrpctest.Recording{Name: "block_at", Method: "block", Params: json.RawMessage(`{"finality":"final"}`), Response: res})
}

// TestATopUpIsPricedAtItsBlockTime: a transfer is priced at the NEAR price
// read nearest its block time, never a later, higher one, and the answer says
// which reading; one whose time no reading is near is refused with nothing
// counted; the price job reads 1Click into the history at start and keeps it
// PETAL_NEAR_PRICE_KEEP_DAYS.
func TestATopUpIsPricedAtItsBlockTime(t *testing.T) {
	t.Parallel()
	var nowUSD atomic.Value
	nowUSD.Store("9")
	oneClick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"assetId":"nep141:wrap.near","decimals":24,"blockchain":"near","symbol":"wNEAR","price":` + nowUSD.Load().(string) + `}]`))
	}))
	defer oneClick.Close()
	p, rpc := signInPetal(t, map[string]string{"PETAL_ONECLICK_URL": oneClick.URL, "PETAL_NEAR_PRICE_KEEP_DAYS": "30"})
	cookie, person := signInAlice(t, p)
	ctx := t.Context()
	history := postgres.NewNearPriceRepository(p.DB.DB)
	readings := func() int {
		var n int
		require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT count(*) FROM near_prices`).Scan(&n))
		return n
	}
	require.Eventually(t, func() bool { return readings() > 0 }, 60*time.Second, 50*time.Millisecond, "the job reads the price at start")
	var source string
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT source FROM near_prices`).Scan(&source))
	assert.Equal(t, moneyapp.SourceOneClick, source)

	pay := func(hash string) (*http.Response, string) {
		return p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", hash), "Cookie", cookie, "Origin", siteOrigin)
	}
	// A transfer made two days ago, when nothing was read: refused, nothing counted.
	blockAt(t, rpc, time.Now().Add(-48*time.Hour))
	res, body := pay(txTransfer)
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
	assert.Contains(t, body, "no NEAR price was recorded near this transfer's block time")
	var topups int
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT count(*) FROM credit_topups`).Scan(&topups))
	assert.Zero(t, topups)

	// Made an hour ago: read at $3 four minutes before it, at $5 two minutes
	// after; NEAR is at $9 now. Priced at $3, never the later, higher $5.
	block := time.Now().Add(-time.Hour).Truncate(time.Second)
	blockAt(t, rpc, block)
	require.NoError(t, history.RecordNearPrice(ctx, credit.NearQuote{At: block.Add(-4 * time.Minute), USD: 3_000_000, Source: moneyapp.SourceOneClick}))
	require.NoError(t, history.RecordNearPrice(ctx, credit.NearQuote{At: block.Add(2 * time.Minute), USD: 5_000_000, Source: moneyapp.SourceOneClick}))
	res, body = pay(txTransfer)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var out struct {
		AddedUSD float64 `json:"added_usd"`
		NearUSD  float64 `json:"near_usd"`
		Price    struct {
			At      time.Time `json:"at"`
			Source  string    `json:"source"`
			BlockAt time.Time `json:"block_at"`
		} `json:"price"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	assert.Equal(t, 6.0, out.AddedUSD, "2 NEAR at $3")
	assert.Equal(t, 3.0, out.NearUSD)
	assert.True(t, block.Add(-4*time.Minute).Equal(out.Price.At), "the reading it was counted at: %s", out.Price.At)
	assert.Equal(t, moneyapp.SourceOneClick, out.Price.Source)
	assert.True(t, block.Equal(out.Price.BlockAt))
	var priceAt, blockStored time.Time
	var priceSource string
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT price_at, price_source, block_at FROM credit_topups WHERE tx_hash = $1`, txTransfer).
		Scan(&priceAt, &priceSource, &blockStored))
	assert.True(t, priceAt.Equal(block.Add(-4*time.Minute)))
	assert.Equal(t, moneyapp.SourceOneClick, priceSource)
	assert.True(t, blockStored.Equal(block), "the top-up keeps which price it was counted at")

	// A reading a minute after the block at $2.50, lower and nearer: that one.
	require.NoError(t, history.RecordNearPrice(ctx, credit.NearQuote{At: block.Add(time.Minute), USD: 2_500_000, Source: moneyapp.SourceOneClick}))
	res, body = pay(txBatch)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"added_usd":1.25`, "0.5 NEAR at $2.50")
	var funded int64
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT limit_micros FROM credit_accounts WHERE id = $1`, credit.PersonAccount(person)).Scan(&funded))
	assert.EqualValues(t, 7_250_000, funded)

	// Retention: the job prunes readings older than 30 days.
	require.NoError(t, history.RecordNearPrice(ctx, credit.NearQuote{At: time.Now().Add(-31 * 24 * time.Hour), USD: 1_000_000, Source: moneyapp.SourceOneClick}))
	before := readings()
	nowUSD.Store("4.25")
	prices := moneyapp.NewNearPrices(p.Cfg, oneclick.NewPriceFeed(oneClick.URL, nil), history, memory.SystemClock{}, nil)
	n, err := prices.Record(ctx)
	require.NoError(t, err)
	assert.EqualValues(t, 2, n, "one reading written, one pruned")
	assert.Equal(t, before, readings())
	var newest int64
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT usd_micros FROM near_prices ORDER BY read_at DESC LIMIT 1`).Scan(&newest))
	assert.EqualValues(t, 4_250_000, newest)
}

// TestTestnetNEARNeverBuysRealSpend: on a site whose model is NEAR AI (a
// real, paid provider), a testnet transfer is 400 bad_input naming the
// network and counts nothing, and the site asks for mainnet; with
// PETAL_PAY_TESTNET=1 it counts, marked as testnet on the ledger; on a site
// with the recorded model it counts too.
func TestTestnetNEARNeverBuysRealSpend(t *testing.T) {
	t.Parallel()
	paid := map[string]string{"PETAL_NEAR_USD": "5", "NEAR_AI_API_KEY": "sk-test", "PETAL_WALLET_KEY": strings.Repeat("ab", 32)}
	p, _ := signInPetal(t, paid)
	cookie, person := signInAlice(t, p)
	res, body := p.do(t, http.MethodGet, "/api/v1/pay", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"network":"mainnet"`, "signed in on testnet, asked for mainnet")
	res, body = p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie, "Origin", siteOrigin)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, `"code":"bad_input"`)
	assert.Contains(t, body, "testnet")
	var topups int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM credit_topups`).Scan(&topups))
	assert.Zero(t, topups, "nothing counted")
	_, err := postgres.NewLedgerRepository(p.DB.DB).Account(t.Context(), credit.PersonAccount(person))
	assert.Error(t, err, "no credit was opened")

	paid["PETAL_PAY_TESTNET"] = "1"
	p, _ = signInPetal(t, paid)
	cookie, person = signInAlice(t, p)
	res, body = p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"added_usd":10`)
	var testnet bool
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT testnet FROM credit_entries WHERE account_id = $1 AND kind = 'top_up'`,
		credit.PersonAccount(person)).Scan(&testnet))
	assert.True(t, testnet, "the credit is marked as testnet's on the ledger")

	p, _ = signInPetal(t, map[string]string{"PETAL_NEAR_USD": "5"}) // the recorded model
	cookie, _ = signInAlice(t, p)
	res, body = p.do(t, http.MethodPost, "/api/v1/pay", payBody("testnet", "alice.testnet", txTransfer), "Cookie", cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
}

// TestThePriceSaysWhereTheModelsPricesCameFrom (issue 25): GET
// /api/v1/price lists each catalogue model's prices as NEAR AI's model list
// gives them, with the time they were read, and the shipped table's (no
// time) for a model the list doesn't price or when it can't be read; holds
// and charges use the same.
func TestThePriceSaysWhereTheModelsPricesCameFrom(t *testing.T) {
	t.Parallel()
	fake := nearaitest.New(t)
	fake.SetPrices(0, nearaitest.ModelPrice{ID: "deepseek-ai/DeepSeek-V3.1", InputAmount: 1_100, OutputAmount: 2_800, Scale: 9})
	p := startPetal(t, modelEnv(fake))
	res, body := p.do(t, http.MethodGet, "/api/v1/price", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var price struct {
		Models []struct {
			Model  string  `json:"model"`
			In     float64 `json:"usd_per_mtok_in"`
			Out    float64 `json:"usd_per_mtok_out"`
			Source string  `json:"source"`
			ReadAt *string `json:"read_at"`
		} `json:"models"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &price))
	require.Len(t, price.Models, len(nearai.Catalogue))
	for _, m := range price.Models {
		if m.Model == "deepseek-ai/DeepSeek-V3.1" {
			assert.Equal(t, 1.1, m.In)
			assert.Equal(t, 2.8, m.Out)
			assert.Equal(t, nearai.PricesListed, m.Source)
			assert.NotNil(t, m.ReadAt)
			continue
		}
		assert.Equal(t, nearai.PricesShipped, m.Source, m.Model)
		assert.Nil(t, m.ReadAt)
	}
	// The first call of a chat is held at the listed price.
	q := askQuote(t, p, drawIt)
	assert.Equal(t, 1.1, q.Quote.LineItems[0].USDPerMTokIn)
}
