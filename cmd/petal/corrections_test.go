package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/corrections"
	"github.com/petal-near/petal/domain/people"
)

type preparedCorrection struct {
	Correction  json.RawMessage `json:"correction"`
	ID          string          `json:"id"`
	Transaction struct {
		ReceiverID string `json:"receiver_id"`
		SignerID   string `json:"signer_id"`
		Actions    []struct {
			MethodName string          `json:"method_name"`
			Args       json.RawMessage `json:"args"`
			Deposit    string          `json:"deposit"`
		} `json:"actions"`
	} `json:"transaction"`
	Quote struct {
		DepositYocto string `json:"deposit_yocto"`
	} `json:"quote"`
}

type keptCorrection struct {
	Correction json.RawMessage `json:"correction"`
	ID         string          `json:"id"`
	Flower     string          `json:"flower"`
	Network    string          `json:"network"`
	Maker      string          `json:"maker"`
	Kind       string          `json:"kind"`
	Reason     string          `json:"reason"`
	Evidence   struct {
		Wrong, Right string
		Links        []string
	} `json:"evidence"`
	MadeAt string `json:"made_at"`
	KeptAt string `json:"kept_at"`
}

type flowerWithCorrections struct {
	publishedAnswer
	Corrections      []keptCorrection `json:"corrections"`
	CorrectionsCount int              `json:"corrections_count"`
}

// published is a flower alice.testnet published through this site.
func (x *publishing) published(t *testing.T) publishedAnswer {
	t.Helper()
	a := x.prepare(t, "Flowers DAO")
	x.send(t, a)
	res, body := x.publish(t, "alice.testnet", a.ID)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var pub publishedAnswer
	require.NoError(t, json.Unmarshal([]byte(body), &pub))
	return pub
}

func correctionBody(flower string) string {
	return `{"flower":"` + flower + `","kind":"misassigned_group","reason":"bob.near left the council in November",` +
		`"subject":"near:mainnet:bob.near",` +
		`"evidence":{"wrong":"bob.near is drawn in council","right":"bob.near holds no role now","links":["https://nearblocks.io/txns/4kbcD3NeZ7Gf8VQ5cFmLQAk1VtUTXK6wzCZnhZqK1nUj"]}}`
}

func getFlower(t *testing.T, p *testPetal, id string) flowerWithCorrections {
	t.Helper()
	res, body := p.do(t, http.MethodGet, "/api/v1/flowers/"+id, "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var f flowerWithCorrections
	require.NoError(t, json.Unmarshal([]byte(body), &f))
	return f
}

// A correction prepared, sent by the wallet (the fake chain holds the
// transaction and its set), submitted by its hash, and shown beside the
// flower, which it never changes; the same again is the same answer.
func TestCorrectingAPublishedFlower(t *testing.T) {
	t.Parallel()
	x := newPublishing(t)
	p := x.p
	pub := x.published(t)
	before := getFlower(t, p, pub.ID)
	assert.Empty(t, before.Corrections)
	assert.Zero(t, before.CorrectionsCount)

	res, body := p.do(t, http.MethodPost, "/api/v1/corrections/prepare", correctionBody(pub.ID), "Cookie", x.cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var a preparedCorrection
	require.NoError(t, json.Unmarshal([]byte(body), &a))
	assert.Equal(t, canon.Sum(a.Correction), a.ID, "the id is the SHA-256 of the record's canonical JSON")
	c, id, _, problems := corrections.Parse(a.Correction)
	require.Empty(t, problems)
	assert.Equal(t, a.ID, id)
	assert.Equal(t, "alice.testnet", c.MadeBy)
	assert.Equal(t, pub.ID, c.Flower)
	assert.Equal(t, corrections.MisassignedGroup, c.Kind)
	assert.Equal(t, testnetSocial, a.Transaction.ReceiverID, "written on the flower's network")
	assert.Equal(t, "alice.testnet", a.Transaction.SignerID)
	require.Len(t, a.Transaction.Actions, 1)
	assert.Equal(t, "set", a.Transaction.Actions[0].MethodName)
	assert.Equal(t, a.Quote.DepositYocto, a.Transaction.Actions[0].Deposit)
	var args struct {
		Data map[string]struct {
			Petal struct {
				Correction map[string]string `json:"correction"`
			} `json:"petal"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(a.Transaction.Actions[0].Args, &args))
	assert.Equal(t, string(a.Correction), args.Data["alice.testnet"].Petal.Correction[a.ID])
	assert.Zero(t, count(t, p, `SELECT count(*) FROM flower_corrections`), "preparing keeps nothing")

	submit := func(cookie, body string) (*http.Response, string) {
		return p.do(t, http.MethodPost, "/api/v1/corrections", body, "Cookie", cookie, "Origin", siteOrigin)
	}
	// Before the wallet has sent it: 404, and the hint says why.
	res, body = submit(x.cookie, `{"network":"testnet","account_id":"alice.testnet","id":"`+a.ID+`"}`)
	require.Equal(t, http.StatusNotFound, res.StatusCode, body)
	_, hint := publishError(t, body)
	assert.Contains(t, hint, "wallet")

	// Sent: the set applied on the fake chain, and its FINAL outcome there.
	_, err := x.rpc.SocialSet(a.Transaction.ReceiverID, a.Transaction.SignerID, a.Transaction.Actions[0].Args)
	require.NoError(t, err)
	hash := people.Base58Encode(bytes.Repeat([]byte{3}, 32))
	x.rpc.Add(txRecording(hash, "alice.testnet", testnetSocial, a.Transaction.Actions[0].Args, true))
	res, body = submit(x.cookie, `{"network":"testnet","tx_hash":"`+hash+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var kept keptCorrection
	require.NoError(t, json.Unmarshal([]byte(body), &kept))
	assert.Equal(t, a.ID, kept.ID)
	assert.Equal(t, pub.ID, kept.Flower)
	assert.Equal(t, "alice.testnet", kept.Maker)
	assert.Equal(t, "near:testnet", kept.Network)
	assert.Equal(t, "misassigned_group", kept.Kind)
	assert.Equal(t, "bob.near holds no role now", kept.Evidence.Right)
	assert.JSONEq(t, string(a.Correction), string(kept.Correction))

	// The same again: the same answer, without reading SocialDB.
	reads := x.rpc.CountCalls("get")
	res, again := submit(x.cookie, `{"network":"testnet","tx_hash":"`+hash+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, again)
	assert.JSONEq(t, body, again)
	assert.Equal(t, reads, x.rpc.CountCalls("get"))
	assert.Equal(t, 1, count(t, p, `SELECT count(*) FROM flower_corrections`))

	// Shown with the flower (who, when, what); the flower itself unchanged.
	after := getFlower(t, p, pub.ID)
	require.Len(t, after.Corrections, 1)
	assert.Equal(t, 1, after.CorrectionsCount)
	assert.Equal(t, kept, after.Corrections[0])
	assert.Equal(t, before.publishedAnswer, after.publishedAnswer, "a correction never changes the flower")
	assert.JSONEq(t, string(pub.Flower), string(after.Flower))

	// And on the map's page.
	res, page := p.do(t, http.MethodGet, "/map?id=near:mainnet:flowers.sputnik-dao.near", "", "Accept", "text/html")
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	assert.Contains(t, page, "bob.near left the council in November")
	assert.Contains(t, page, "alice.testnet")
	assert.Contains(t, page, `href="https://nearblocks.io/txns/4kbcD3NeZ7Gf8VQ5cFmLQAk1VtUTXK6wzCZnhZqK1nUj"`)
}

// One signed in as someone else is refused alice's correction, by its hash
// or by her account; bad input is refused in the contract's shape; and
// nothing changes on any of them.
func TestCorrectionRefusals(t *testing.T) {
	t.Parallel()
	x := newPublishing(t)
	p := x.p
	pub := x.published(t)
	kept := func() int { return count(t, p, `SELECT count(*) FROM flower_corrections`) }

	// Not signed in; a page of another site.
	res, body := p.do(t, http.MethodPost, "/api/v1/corrections/prepare", correctionBody(pub.ID), "Origin", siteOrigin)
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	res, body = p.do(t, http.MethodPost, "/api/v1/corrections/prepare", correctionBody(pub.ID), "Cookie", x.cookie, "Origin", "https://evil.example")
	require.Equal(t, http.StatusUnauthorized, res.StatusCode, body)

	bad := map[string]string{
		"kind":           strings.Replace(correctionBody(pub.ID), "misassigned_group", "wrong", 1),
		"reason blank":   strings.Replace(correctionBody(pub.ID), "bob.near left the council in November", "  ", 1),
		"reason long":    strings.Replace(correctionBody(pub.ID), "bob.near left the council in November", strings.Repeat("x", 501), 1),
		"link scheme":    strings.Replace(correctionBody(pub.ID), "https://nearblocks.io", "javascript://nearblocks.io", 1),
		"link user":      strings.Replace(correctionBody(pub.ID), "https://nearblocks.io", "https://me:pw@nearblocks.io", 1),
		"too many links": strings.Replace(correctionBody(pub.ID), `"links":[`, `"links":[`+strings.Repeat(`"https://a.example/",`, 8), 1),
		"subject":        strings.Replace(correctionBody(pub.ID), "near:mainnet:bob.near", "bob", 1),
		"control":        strings.Replace(correctionBody(pub.ID), "holds no role", `holds\u0007no role`, 1),
		"flower form":    correctionBody("not-an-id"),
		"unknown field":  strings.Replace(correctionBody(pub.ID), `{"flower"`, `{"also":1,"flower"`, 1),
	}
	for name, b := range bad {
		res, body = p.do(t, http.MethodPost, "/api/v1/corrections/prepare", b, "Cookie", x.cookie, "Origin", siteOrigin)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s", name, body)
		code, message, _ := errorOf(t, body)
		assert.Equal(t, "bad_input", code, name)
		assert.NotEmpty(t, message, name)
	}
	res, body = p.do(t, http.MethodPost, "/api/v1/corrections/prepare", correctionBody(strings.Repeat("0", 64)), "Cookie", x.cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusNotFound, res.StatusCode, body)

	// Alice prepares and sends one; bob, signed in, can't submit it.
	res, body = p.do(t, http.MethodPost, "/api/v1/corrections/prepare", correctionBody(pub.ID), "Cookie", x.cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var a preparedCorrection
	require.NoError(t, json.Unmarshal([]byte(body), &a))
	_, err := x.rpc.SocialSet(a.Transaction.ReceiverID, a.Transaction.SignerID, a.Transaction.Actions[0].Args)
	require.NoError(t, err)
	hash := people.Base58Encode(bytes.Repeat([]byte{4}, 32))
	x.rpc.Add(txRecording(hash, "alice.testnet", testnetSocial, a.Transaction.Actions[0].Args, true))
	bob := signInAs(t, p, x.rpc, "bob.testnet")
	for _, b := range []string{
		`{"network":"testnet","tx_hash":"` + hash + `","account_id":"alice.testnet"}`,
		`{"network":"testnet","account_id":"alice.testnet","id":"` + a.ID + `"}`,
	} {
		res, body = bob.do(t, http.MethodPost, "/api/v1/corrections", b)
		require.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
		_, message, _ := errorOf(t, body)
		assert.Contains(t, message, "the wallet that signed it")
	}
	// A transaction bob signed that wrote alice's key is not his to submit
	// either: the set's data is read under the signer's own account.
	bobs := people.Base58Encode(bytes.Repeat([]byte{5}, 32))
	x.rpc.Add(txRecording(bobs, "bob.testnet", testnetSocial, a.Transaction.Actions[0].Args, true))
	res, body = bob.do(t, http.MethodPost, "/api/v1/corrections", `{"network":"testnet","tx_hash":"`+bobs+`"}`)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Contains(t, body, "wrote no correction")
	// A failed transaction wrote nothing.
	failed := people.Base58Encode(bytes.Repeat([]byte{6}, 32))
	x.rpc.Add(txRecording(failed, "alice.testnet", testnetSocial, a.Transaction.Actions[0].Args, false))
	res, body = p.do(t, http.MethodPost, "/api/v1/corrections", `{"network":"testnet","tx_hash":"`+failed+`"}`, "Cookie", x.cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	// Bad submissions.
	for _, b := range []string{`{"network":"testnet"}`, `{"network":"moon","tx_hash":"` + hash + `"}`, `{"network":"testnet","tx_hash":"not base58!"}`} {
		res, body = p.do(t, http.MethodPost, "/api/v1/corrections", b, "Cookie", x.cookie, "Origin", siteOrigin)
		require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s: %s", b, body)
	}
	assert.Zero(t, kept(), "no refusal kept anything")
	assert.Empty(t, getFlower(t, p, pub.ID).Corrections)

	// A record under alice's key that isn't a valid correction of its own
	// id is refused too.
	wrongID := strings.Repeat("e", 64)
	args, _ := json.Marshal(map[string]any{"data": map[string]any{"alice.testnet": map[string]any{"petal": map[string]any{"correction": map[string]any{wrongID: string(a.Correction)}}}}})
	_, err = x.rpc.SocialSet(testnetSocial, "alice.testnet", args)
	require.NoError(t, err)
	res, body = p.do(t, http.MethodPost, "/api/v1/corrections", `{"network":"testnet","account_id":"alice.testnet","id":"`+wrongID+`"}`, "Cookie", x.cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	assert.Zero(t, kept())
}

// Corrections published elsewhere (straight to SocialDB, beside the
// flowers) are picked up by the map sync; a malformed one, or one of a
// flower not kept here, is not.
func TestTheMapSyncPicksUpCorrectionsPublishedElsewhere(t *testing.T) {
	t.Parallel()
	x := newPublishing(t)
	p := x.p
	pub := x.published(t)
	elsewhere := func(account string, c corrections.Correction, under string) string {
		id, canonical, err := c.Canonical()
		require.NoError(t, err)
		if under == "" {
			under = id
		}
		args, _ := json.Marshal(map[string]any{"data": map[string]any{account: map[string]any{"petal": map[string]any{"correction": map[string]any{under: string(canonical)}}}}})
		_, err = x.rpc.SocialSet(testnetSocial, account, args)
		require.NoError(t, err)
		return id
	}
	good := corrections.Correction{Schema: corrections.Schema, Flower: pub.ID, Kind: corrections.StaleReading, Reason: "read before the vote of 20 November",
		Evidence: corrections.Evidence{Wrong: "three council members", Right: "four since the vote", Links: []string{}}, MadeBy: "carol.testnet", MadeAt: "2026-11-30T12:00:00Z"}
	goodID := elsewhere("carol.testnet", good, "")
	notHers := good
	notHers.MadeBy = "erin.testnet"
	elsewhere("dave.testnet", notHers, "")
	noFlower := good
	noFlower.Flower = strings.Repeat("f", 64)
	elsewhere("frank.testnet", noFlower, "")
	elsewhere("gina.testnet", good, strings.Repeat("a", 64)) // under another id

	_, err := p.Svc.MapSync.Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 1, count(t, p, `SELECT count(*) FROM flower_corrections`))
	f := getFlower(t, p, pub.ID)
	require.Len(t, f.Corrections, 1)
	assert.Equal(t, goodID, f.Corrections[0].ID)
	assert.Equal(t, "carol.testnet", f.Corrections[0].Maker)
	assert.Equal(t, "stale_reading", f.Corrections[0].Kind)
	assert.Equal(t, "synced", func() (came string) {
		require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT came FROM flower_corrections WHERE id = $1`, goodID).Scan(&came))
		return came
	}())
	// A second run keeps nothing new.
	_, err = p.Svc.MapSync.Run(t.Context())
	require.NoError(t, err)
	assert.Equal(t, 1, count(t, p, `SELECT count(*) FROM flower_corrections`))
	// Each run looks at the three refused again (their flower may come).
	scraped := scrapeOf(t, p)
	for _, line := range []string{`petal_map_sync_corrections_total{outcome="kept"} 1`, `petal_map_sync_corrections_total{outcome="known"} 1`,
		`petal_map_sync_corrections_total{outcome="refused"} 6`} {
		assert.True(t, strings.Contains(scraped, line+"\n"), line)
	}

	// Over MCP: get_flower carries it; preparing needs a signed-in wallet,
	// which the MCP door has none of, and bad input is bad_input.
	cs := mcpSession(t, p)
	r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "get_flower", Arguments: map[string]any{"id": pub.ID}})
	require.NoError(t, err)
	require.False(t, r.IsError, "%+v", r.Content)
	out, _ := json.Marshal(r.StructuredContent)
	var viaMCP flowerWithCorrections
	require.NoError(t, json.Unmarshal(out, &viaMCP))
	require.Len(t, viaMCP.Corrections, 1)
	assert.Equal(t, f.Corrections[0], viaMCP.Corrections[0])
	var in map[string]any
	require.NoError(t, json.Unmarshal([]byte(correctionBody(pub.ID)), &in))
	r, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "prepare_correction", Arguments: in})
	require.NoError(t, err)
	require.True(t, r.IsError)
	assert.Contains(t, mcpText(r), "unauthorised")
	in["kind"] = "wrong"
	r, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "prepare_correction", Arguments: in})
	require.NoError(t, err)
	require.True(t, r.IsError)
	assert.Contains(t, mcpText(r), "bad_input")
	r, err = cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "submit_correction", Arguments: map[string]any{"network": "testnet", "tx_hash": "CsPxP6wysLdGmh4UEy4nvmQnVbjagbJSpiqiaf9GSREy"}})
	require.NoError(t, err)
	require.True(t, r.IsError)
	assert.Contains(t, mcpText(r), "unauthorised")
	assert.Equal(t, 1, count(t, p, `SELECT count(*) FROM flower_corrections`))
}

func mcpText(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// submitted is a correction alice prepared, sent and submitted by its hash.
func (x *publishing) submitted(t *testing.T, flower string, seed byte) keptCorrection {
	t.Helper()
	res, body := x.p.do(t, http.MethodPost, "/api/v1/corrections/prepare", correctionBody(flower), "Cookie", x.cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var a preparedCorrection
	require.NoError(t, json.Unmarshal([]byte(body), &a))
	_, err := x.rpc.SocialSet(a.Transaction.ReceiverID, a.Transaction.SignerID, a.Transaction.Actions[0].Args)
	require.NoError(t, err)
	hash := people.Base58Encode(bytes.Repeat([]byte{seed}, 32))
	x.rpc.Add(txRecording(hash, "alice.testnet", testnetSocial, a.Transaction.Actions[0].Args, true))
	res, body = x.p.do(t, http.MethodPost, "/api/v1/corrections", `{"network":"testnet","tx_hash":"`+hash+`"}`, "Cookie", x.cookie, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var k keptCorrection
	require.NoError(t, json.Unmarshal([]byte(body), &k))
	return k
}

// The map's page in Chromium shows the correction beside the drawings: who,
// when, what, its link, at a legible size.
func TestCorrectionsOnTheMapPageInABrowser(t *testing.T) {
	t.Parallel()
	x := newPublishing(t)
	pub := x.published(t)
	x.submitted(t, pub.ID, 11)
	b := startBrowser(t, x.p.URL)
	ctx := b.tab(t)
	var heading, text, claim, by, href, size string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(x.p.URL+"/map?id=near:mainnet:flowers.sputnik-dao.near"),
		chromedp.WaitVisible(".corrections .correction", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('.corrections h3').innerText`, &heading),
		chromedp.Evaluate(`document.querySelector('.correction p').innerText`, &text),
		chromedp.Evaluate(`document.querySelector('.correction p:nth-child(2)').innerText`, &claim),
		chromedp.Evaluate(`document.querySelector('.correction p:last-child').innerText`, &by),
		chromedp.Evaluate(`document.querySelector('.correction a').href`, &href),
		chromedp.Evaluate(`getComputedStyle(document.querySelector('.correction p')).fontSize`, &size),
	))
	assert.Equal(t, "Flowers DAO 1 correction", heading)
	assert.Equal(t, "Mis-assigned group · near:mainnet:bob.near: bob.near left the council in November", text)
	assert.Equal(t, "Wrong: “bob.near is drawn in council” · Right: “bob.near holds no role now”", claim)
	assert.Regexp(t, `^by alice\.testnet · `, by)
	assert.Equal(t, "https://nearblocks.io/txns/4kbcD3NeZ7Gf8VQ5cFmLQAk1VtUTXK6wzCZnhZqK1nUj", href)
	assert.Equal(t, "16px", size)
	if os.Getenv("PETAL_PAGE_SCREENSHOTS") == "1" { // below the drawings: the whole page
		var png []byte
		require.NoError(t, chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)))
		require.NoError(t, os.WriteFile(filepath.Join("..", "..", "docs", "pages", "map-corrections.png"), png, 0o644))
	}
}
