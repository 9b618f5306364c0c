package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/domain/specs"
)

const testnetSocial = "v1.social08.testnet"

type preparedAnswer struct {
	Flower      json.RawMessage `json:"flower"`
	ID          string          `json:"id"`
	Transaction struct {
		ReceiverID string `json:"receiver_id"`
		SignerID   string `json:"signer_id"`
		Actions    []struct {
			Type       string          `json:"type"`
			MethodName string          `json:"method_name"`
			Args       json.RawMessage `json:"args"`
			Gas        string          `json:"gas"`
			Deposit    string          `json:"deposit"`
		} `json:"actions"`
	} `json:"transaction"`
	Quote struct {
		Bytes        int      `json:"bytes"`
		DepositYocto string   `json:"deposit_yocto"`
		USD          *float64 `json:"usd"`
		Receiver     string   `json:"receiver"`
		Network      string   `json:"network"`
	} `json:"quote"`
}

type publishedAnswer struct {
	Flower      json.RawMessage `json:"flower"`
	ID          string          `json:"id"`
	Network     string          `json:"network"`
	Maker       string          `json:"maker"`
	Map         string          `json:"map"`
	Name        *string         `json:"name"`
	PublishedAt string          `json:"published_at"`
	Status      string          `json:"status"`
	ViewURL     string          `json:"view_url"`
	Picture     *string         `json:"picture"`
}

// publishing is a signed-in alice.testnet, a stored snapshot and a spec of
// it, on a petal whose NEAR is the fake node.
type publishing struct {
	p      *testPetal
	rpc    *nearrpctest.Server
	cookie string
	spec   json.RawMessage
}

func newPublishing(t *testing.T) *publishing {
	t.Helper()
	p, rpc := signInPetal(t, map[string]string{"PETAL_NEAR_USD": "4"})
	sha := storeFlowerSnapshot(t, p, flowerDAOSnapshot())
	res, body := p.do(t, http.MethodPost, "/api/v1/specs/propose", `{"sha256":"`+sha+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var proposal struct {
		Spec json.RawMessage `json:"spec"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &proposal))
	cookie, _ := signInAlice(t, p)
	return &publishing{p: p, rpc: rpc, cookie: cookie, spec: proposal.Spec}
}

func (x *publishing) prepare(t *testing.T, name string) preparedAnswer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"spec": x.spec, "name": name})
	res, out := x.p.do(t, http.MethodPost, "/api/v1/publish/prepare", string(body), "Cookie", x.cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, out)
	var a preparedAnswer
	require.NoError(t, json.Unmarshal([]byte(out), &a))
	return a
}

func (x *publishing) publish(t *testing.T, account, id string) (*http.Response, string) {
	t.Helper()
	return x.p.do(t, http.MethodPost, "/api/v1/publish", `{"network":"testnet","account_id":"`+account+`","id":"`+id+`"}`,
		"Cookie", x.cookie, "Origin", siteOrigin)
}

// send is the wallet signing and sending the prepared set: the fake chain
// applies its arguments as alice's transaction would.
func (x *publishing) send(t *testing.T, a preparedAnswer) {
	t.Helper()
	require.Len(t, a.Transaction.Actions, 1)
	_, err := x.rpc.SocialSet(a.Transaction.ReceiverID, a.Transaction.SignerID, a.Transaction.Actions[0].Args)
	require.NoError(t, err)
}

func publishError(t *testing.T, body string) (code, hint string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Hint string } `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	return e.Error.Code, e.Error.Hint
}

func TestPublishingAFlowerToNEAR(t *testing.T) {
	t.Parallel()
	x := newPublishing(t)
	p := x.p

	// A quote, asked by anyone, stores nothing.
	res, body := p.do(t, http.MethodPost, "/api/v1/quote", `{"spec":`+string(x.spec)+`,"name":"Flowers DAO"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var quote struct {
		Quote struct {
			Bytes        int                            `json:"bytes"`
			DepositYocto string                         `json:"deposit_yocto"`
			USD          *float64                       `json:"usd"`
			Network      string                         `json:"network"`
			LineItems    []struct{ What, Yocto string } `json:"line_items"`
		} `json:"quote"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &quote))
	assert.Equal(t, quote.Quote.DepositYocto, strconv.Itoa(quote.Quote.Bytes)+"0000000000000000000", "10^19 yocto a byte")
	assert.Len(t, quote.Quote.LineItems, 4)
	require.NotNil(t, quote.Quote.USD, "the price is fixed at $4")
	assert.Equal(t, "near:mainnet", quote.Quote.Network, "mainnet unless a wallet says otherwise")
	// Asking stores nothing: not the record, not even a spec it never saw.
	rows := func() (n int) {
		require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM specs) + (SELECT count(*) FROM publish_prepared)`).Scan(&n))
		return n
	}
	before := rows()
	unseen := strings.Replace(string(x.spec), `"title":"`, `"title":"Never kept: `, 1)
	res, body = p.do(t, http.MethodPost, "/api/v1/quote", `{"spec":`+unseen+`}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Equal(t, before, rows(), "a quote stores nothing")

	// Preparing needs a signed-in wallet, and the site's own page.
	res, body = p.do(t, http.MethodPost, "/api/v1/publish/prepare", `{"spec":`+string(x.spec)+`}`, "Origin", siteOrigin)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	res, body = p.do(t, http.MethodPost, "/api/v1/publish/prepare", `{"spec":`+string(x.spec)+`}`, "Cookie", x.cookie, "Origin", "https://evil.example")
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, body)

	a := x.prepare(t, "Flowers DAO")
	assert.Equal(t, canon.Sum(a.Flower), a.ID, "the id is the SHA-256 of the record's canonical JSON")
	f, id, _, problems := published.Parse(a.Flower)
	require.Empty(t, problems)
	assert.Equal(t, a.ID, id)
	assert.Equal(t, "alice.testnet", f.MadeBy)
	assert.Equal(t, "near:mainnet:flowers.sputnik-dao.near", f.Map)
	assert.Equal(t, "Sputnik DAO members on NEAR", f.About)
	assert.Equal(t, testnetSocial, a.Transaction.ReceiverID)
	assert.Equal(t, "alice.testnet", a.Transaction.SignerID)
	act := a.Transaction.Actions[0]
	assert.Equal(t, "FunctionCall", act.Type)
	assert.Equal(t, "set", act.MethodName)
	assert.Equal(t, a.Quote.DepositYocto, act.Deposit)
	var args struct {
		Data map[string]struct {
			Petal struct {
				Flower map[string]string `json:"flower"`
			} `json:"petal"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(act.Args, &args))
	assert.Equal(t, string(a.Flower), args.Data["alice.testnet"].Petal.Flower[a.ID], "the set writes the record's canonical JSON as a string")

	// Before the wallet has sent it: 404, and the hint says why.
	res, body = x.publish(t, "alice.testnet", a.ID)
	require.Equal(t, http.StatusNotFound, res.StatusCode, body)
	_, hint := publishError(t, body)
	assert.Contains(t, hint, "wallet")

	x.send(t, a)
	res, body = x.publish(t, "alice.testnet", a.ID)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var pub publishedAnswer
	require.NoError(t, json.Unmarshal([]byte(body), &pub))
	assert.Equal(t, a.ID, pub.ID)
	assert.JSONEq(t, string(a.Flower), string(pub.Flower))
	assert.Equal(t, "near:testnet", pub.Network)
	assert.Equal(t, "alice.testnet", pub.Maker)
	assert.Equal(t, "ok", pub.Status)
	require.NotNil(t, pub.Name)
	assert.Equal(t, "Flowers DAO", *pub.Name)
	assert.True(t, strings.HasPrefix(pub.ViewURL, "/d/"), pub.ViewURL)
	require.NotNil(t, pub.Picture)

	// The same id again: the same answer, without reading the chain.
	reads := x.rpc.CountCalls("get")
	res, again := x.publish(t, "alice.testnet", a.ID)
	require.Equal(t, http.StatusOK, res.StatusCode, again)
	assert.JSONEq(t, body, again)
	assert.Equal(t, reads, x.rpc.CountCalls("get"))

	// Listed, newest first, by anyone; filtered.
	res, list := p.do(t, http.MethodGet, "/api/v1/flowers", "")
	require.Equal(t, http.StatusOK, res.StatusCode, list)
	var page struct {
		Flowers    []publishedAnswer `json:"flowers"`
		NextCursor *string           `json:"next_cursor"`
	}
	require.NoError(t, json.Unmarshal([]byte(list), &page))
	require.Len(t, page.Flowers, 1)
	assert.Equal(t, a.ID, page.Flowers[0].ID)
	assert.Nil(t, page.NextCursor)
	for q, want := range map[string]int{"maker=alice.testnet": 1, "maker=bob.testnet": 0, "network=testnet": 1, "network=mainnet": 0,
		"map=near:mainnet:flowers.sputnik-dao.near": 1, "limit=1": 1} {
		res, list = p.do(t, http.MethodGet, "/api/v1/flowers?"+q, "")
		require.Equal(t, http.StatusOK, res.StatusCode, list)
		require.NoError(t, json.Unmarshal([]byte(list), &page))
		assert.Len(t, page.Flowers, want, q)
	}
	res, list = p.do(t, http.MethodGet, "/api/v1/flowers?limit=101", "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, list)

	res, got := p.do(t, http.MethodGet, "/api/v1/flowers/"+a.ID, "")
	require.Equal(t, http.StatusOK, res.StatusCode, got)
	var one publishedAnswer
	require.NoError(t, json.Unmarshal([]byte(got), &one))
	assert.Equal(t, pub, one)
	res, _ = p.do(t, http.MethodGet, "/api/v1/flowers/"+strings.Repeat("0", 64), "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)

	// Its picture: immutable, its ETag the render's hash; through the view
	// its address names, and an unknown view is not_found.
	res, svg := p.do(t, http.MethodGet, "/api/v1/flowers/"+a.ID+"/svg", "")
	require.Equal(t, http.StatusOK, res.StatusCode, svg)
	assert.Equal(t, "image/svg+xml; charset=utf-8", res.Header.Get("Content-Type"))
	assert.Contains(t, res.Header.Get("Cache-Control"), "immutable")
	assert.Equal(t, `"`+canon.Sum([]byte(svg))+`"`, res.Header.Get("ETag"))
	assert.True(t, strings.HasPrefix(svg, "<svg"), svg[:min(len(svg), 40)])
	res, same := p.do(t, http.MethodGet, "/api/v1/flowers/"+a.ID+"/svg?view="+specs.DefaultViewName(), "")
	require.Equal(t, http.StatusOK, res.StatusCode, same)
	assert.Equal(t, svg, same, "the default view by its hash draws the same picture")
	res, body = p.do(t, http.MethodGet, "/api/v1/flowers/"+a.ID+"/svg?view="+strings.Repeat("e", 64), "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode, body)
	res, _ = p.do(t, http.MethodGet, "/api/v1/flowers/"+a.ID+"/svg", "", "If-None-Match", `"`+canon.Sum([]byte(svg))+`"`)
	assert.Equal(t, http.StatusNotModified, res.StatusCode)
}

func TestPublishingRefusals(t *testing.T) {
	t.Parallel()
	x := newPublishing(t)
	p := x.p
	countKept := func() int {
		var n int
		require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM published_flowers`).Scan(&n))
		return n
	}

	t.Run("someone else's record", func(t *testing.T) {
		a := x.prepare(t, "")
		x.send(t, a)
		res, body := x.publish(t, "bob.testnet", a.ID)
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
		res, body = p.do(t, http.MethodPost, "/api/v1/publish", `{"network":"testnet","account_id":"alice.testnet","id":"`+a.ID+`"}`, "Origin", siteOrigin)
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
		assert.Zero(t, countKept())
	})

	t.Run("a record changed after prepare", func(t *testing.T) {
		a := x.prepare(t, "Before")
		changed := strings.Replace(string(a.Transaction.Actions[0].Args), `Before`, `After!`, 1)
		require.NotEqual(t, changed, string(a.Transaction.Actions[0].Args))
		_, err := x.rpc.SocialSet(testnetSocial, "alice.testnet", []byte(changed))
		require.NoError(t, err)
		res, body := x.publish(t, "alice.testnet", a.ID)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
		code, _ := publishError(t, body)
		assert.Equal(t, "bad_input", code)
		assert.Zero(t, countKept())
	})

	t.Run("a missing record", func(t *testing.T) {
		a := x.prepare(t, "Never sent")
		res, body := x.publish(t, "alice.testnet", a.ID)
		require.Equal(t, http.StatusNotFound, res.StatusCode, body)
		_, hint := publishError(t, body)
		assert.Contains(t, hint, "wallet may not have sent")
		assert.Zero(t, countKept())
	})

	t.Run("the chain down", func(t *testing.T) {
		a := x.prepare(t, "Chain down")
		x.send(t, a)
		x.rpc.Inject(nearrpctest.Fault{Contract: testnetSocial, Status: http.StatusBadGateway, Times: 3})
		res, body := x.publish(t, "alice.testnet", a.ID)
		require.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
		code, _ := publishError(t, body)
		assert.Equal(t, "source_failed", code)
		assert.Zero(t, countKept())
	})

	t.Run("a record prepared elsewhere", func(t *testing.T) {
		var spec specs.Spec
		require.NoError(t, json.Unmarshal(x.spec, &spec))
		f := published.Flower{Schema: published.Schema, Spec: spec, Snapshot: spec.Snapshot, About: "made by another client",
			Map: "near:mainnet:flowers.sputnik-dao.near", MadeBy: "alice.testnet", MadeAt: "2026-11-30T12:00:00Z"}
		id, canonical, err := f.Canonical()
		require.NoError(t, err)
		args, _ := json.Marshal(map[string]any{"data": map[string]any{"alice.testnet": map[string]any{"petal": map[string]any{"flower": map[string]string{id: string(canonical)}}}}})
		_, err = x.rpc.SocialSet(testnetSocial, "alice.testnet", args)
		require.NoError(t, err)
		res, body := x.publish(t, "alice.testnet", id)
		require.Equal(t, http.StatusOK, res.StatusCode, body)

		// One naming a map its snapshot doesn't read is refused.
		f.Map = "near:mainnet:other.sputnik-dao.near"
		id, canonical, err = f.Canonical()
		require.NoError(t, err)
		args, _ = json.Marshal(map[string]any{"data": map[string]any{"alice.testnet": map[string]any{"petal": map[string]any{"flower": map[string]string{id: string(canonical)}}}}})
		_, err = x.rpc.SocialSet(testnetSocial, "alice.testnet", args)
		require.NoError(t, err)
		res, body = x.publish(t, "alice.testnet", id)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
		assert.Contains(t, body, "/map")

		// One whose snapshot isn't stored here is refused.
		f.Spec.Snapshot, f.Snapshot = strings.Repeat("9", 64), strings.Repeat("9", 64)
		id, canonical, err = f.Canonical()
		require.NoError(t, err)
		args, _ = json.Marshal(map[string]any{"data": map[string]any{"alice.testnet": map[string]any{"petal": map[string]any{"flower": map[string]string{id: string(canonical)}}}}})
		_, err = x.rpc.SocialSet(testnetSocial, "alice.testnet", args)
		require.NoError(t, err)
		res, body = x.publish(t, "alice.testnet", id)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
		assert.Equal(t, 1, countKept())
	})
}

// A flower Petals' agent draws for a signed-in person carries prepare: the
// record and the SocialDB set their own wallet may sign. Nothing is sent.
func TestTheAgentsFlowerOffersPublishing(t *testing.T) {
	t.Parallel()
	const model = "deepseek-ai/DeepSeek-V3.1"
	rpc := nearrpctest.New(t)
	// The spec is the one the person brings as their draft, so drawing it
	// needs no yes.
	snap := flowerDAOSnapshot()
	sha, _, err := snapshots.Name(snap)
	require.NoError(t, err)
	proposed, err := specs.Propose(&snap, sha, "")
	require.NoError(t, err)
	spec, err := json.Marshal(proposed)
	require.NoError(t, err)
	fake := nearaitest.New(t,
		nearaitest.Completion("p1", model, "", nearaitest.Call{Name: "render_flower", Args: `{"spec":` + string(spec) + `}`}),
		nearaitest.Completion("p2", model, "Here is the flower."))
	env := modelEnv(fake)
	env["PETAL_API"], env["PETAL_NEAR_RPC_MAINNET"], env["PETAL_NEAR_RPC_TESTNET"] = "https://petal.example", rpc.URL, rpc.URL
	p := startPetal(t, env)
	require.Equal(t, sha, storeFlowerSnapshot(t, p, snap))
	cookie, _ := signInAlice(t, p)
	signedIn := len(rpc.Calls())

	chat := `{"messages":[{"role":"user","content":"draw my draft"}],"draft":{"spec":` + string(spec) + `}}`
	var flower map[string]any
	for _, e := range p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", chat, "Cookie", cookie, "Origin", siteOrigin).rest(t) {
		if e.Name == "flower" {
			flower = e.json(t)
		}
	}
	require.NotNil(t, flower, "the chat drew a flower")
	prepare, ok := flower["prepare"].(map[string]any)
	require.True(t, ok, "a signed-in person's flower carries prepare: %v", flower)
	tx := prepare["transaction"].(map[string]any)
	assert.Equal(t, "alice.testnet", tx["signer_id"])
	assert.Equal(t, testnetSocial, tx["receiver_id"])
	assert.Regexp(t, `^[0-9a-f]{64}$`, prepare["id"])
	assert.Len(t, rpc.Calls(), signedIn, "nothing was sent, nor read from the chain, after signing in")
}

// A hidden map's flowers are in no list, and still open by id.
func TestAHiddenMapsFlowersAreInNoList(t *testing.T) {
	t.Parallel()
	x := newPublishing(t)
	p := x.p
	snap := flowerDAOSnapshot()
	snap.Chain = "near:testnet"
	snap.Params = json.RawMessage(`{"chain":"near:testnet","dao":"hidden-example.sputnikv2.testnet"}`)
	for i := range snap.Accounts {
		snap.Accounts[i].ID = strings.Replace(snap.Accounts[i].ID, "near:mainnet:", "near:testnet:", 1)
	}
	sha := storeFlowerSnapshot(t, p, snap)
	proposed, err := specs.Propose(&snap, sha, "")
	require.NoError(t, err)
	hiddenSpec, err := json.Marshal(proposed)
	require.NoError(t, err)
	shown := x.prepare(t, "Shown")
	x.spec = hiddenSpec
	hidden := x.prepare(t, "Hidden")
	for _, a := range []preparedAnswer{shown, hidden} {
		x.send(t, a)
		res, body := x.publish(t, "alice.testnet", a.ID)
		require.Equal(t, http.StatusOK, res.StatusCode, body)
	}
	var page struct {
		Flowers []publishedAnswer `json:"flowers"`
	}
	for _, q := range []string{"", "?map=near:testnet:hidden-example.sputnikv2.testnet", "?maker=alice.testnet"} {
		res, body := p.do(t, http.MethodGet, "/api/v1/flowers"+q, "")
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		require.NoError(t, json.Unmarshal([]byte(body), &page))
		for _, f := range page.Flowers {
			assert.NotEqual(t, hidden.ID, f.ID, "listed under %q", q)
		}
	}
	res, body := p.do(t, http.MethodGet, "/api/v1/flowers/"+hidden.ID, "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, "near:testnet:hidden-example.sputnikv2.testnet")
}

// txRecording is the fake node's FINAL outcome of a transaction signer sent
// to receiver with one FunctionCall set of args.
func txRecording(hash, signer, receiver string, args []byte, succeeded bool) nearrpctest.Recording {
	status := map[string]any{"SuccessValue": ""}
	if !succeeded {
		status = map[string]any{"Failure": map[string]any{"ActionError": map[string]any{"index": 0}}}
	}
	params, _ := json.Marshal(map[string]string{"tx_hash": hash, "sender_account_id": signer, "wait_until": "FINAL"})
	res, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "dontcare", "result": map[string]any{
		"final_execution_status": "FINAL", "status": status,
		"transaction": map[string]any{"signer_id": signer, "receiver_id": receiver, "hash": hash,
			"actions": []any{map[string]any{"FunctionCall": map[string]any{"method_name": "set", "args": args, "gas": 100000000000000, "deposit": "1"}}}},
		"transaction_outcome": map[string]any{"block_hash": "4kbcD3NeZ7Gf8VQ5cFmLQAk1VtUTXK6wzCZnhZqK1nUj"},
	}})
	return nearrpctest.Recording{Name: "tx " + hash, Method: "tx", Params: params, Response: res}
}

func TestPublishingByTransactionHash(t *testing.T) {
	t.Parallel()
	x := newPublishing(t)
	a := x.prepare(t, "By its transaction")
	x.send(t, a)
	hash := people.Base58Encode(bytes.Repeat([]byte{7}, 32))
	x.rpc.Add(txRecording(hash, "alice.testnet", testnetSocial, a.Transaction.Actions[0].Args, true))
	res, body := x.p.do(t, http.MethodPost, "/api/v1/publish", `{"network":"testnet","tx_hash":"`+hash+`"}`, "Cookie", x.cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var pub publishedAnswer
	require.NoError(t, json.Unmarshal([]byte(body), &pub))
	assert.Equal(t, a.ID, pub.ID)

	// A transaction NEAR doesn't know: 404, with the wallet hint.
	res, body = x.p.do(t, http.MethodPost, "/api/v1/publish", `{"network":"testnet","tx_hash":"CsPxP6wysLdGmh4UEy4nvmQnVbjagbJSpiqiaf9GSREy"}`, "Cookie", x.cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusNotFound, res.StatusCode, body)
	_, hint := publishError(t, body)
	assert.Contains(t, hint, "wallet may not have sent it")

	// One that failed on chain, or went elsewhere, wrote nothing.
	failed := people.Base58Encode(bytes.Repeat([]byte{8}, 32))
	x.rpc.Add(txRecording(failed, "alice.testnet", testnetSocial, a.Transaction.Actions[0].Args, false))
	res, body = x.p.do(t, http.MethodPost, "/api/v1/publish", `{"network":"testnet","tx_hash":"`+failed+`"}`, "Cookie", x.cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	elsewhere := people.Base58Encode(bytes.Repeat([]byte{9}, 32))
	x.rpc.Add(txRecording(elsewhere, "alice.testnet", "someone.testnet", a.Transaction.Actions[0].Args, true))
	res, body = x.p.do(t, http.MethodPost, "/api/v1/publish", `{"network":"testnet","tx_hash":"`+elsewhere+`"}`, "Cookie", x.cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
}

// Publishing the same flower from several requests at once keeps it once,
// and every one of them gets the same answer.
func TestPublishingTheSameFlowerAtOnce(t *testing.T) {
	t.Parallel()
	x := newPublishing(t)
	a := x.prepare(t, "At once")
	x.send(t, a)
	bodies := make([]string, 8)
	var wg sync.WaitGroup
	for i := range bodies {
		wg.Go(func() {
			res, body := x.publish(t, "alice.testnet", a.ID)
			if res.StatusCode != http.StatusOK {
				t.Errorf("%d: %s", res.StatusCode, body)
			}
			bodies[i] = body
		})
	}
	wg.Wait()
	for _, b := range bodies[1:] {
		assert.JSONEq(t, bodies[0], b)
	}
	var n int
	require.NoError(t, x.p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM published_flowers`).Scan(&n))
	assert.Equal(t, 1, n)
}
