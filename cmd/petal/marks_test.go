package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/domain/snapshots"
)

// aReadingOf is a made-up reading of address by reader, its params naming
// the address as the reader's own would (token, dao, pool).
func aReadingOf(reader, param, address string) snapshots.Snapshot {
	tally := snapshots.TallyMembers(snapshots.Mainnet, []snapshots.DAORole{{Name: "all", Members: []string{"alice.near", "bob.near"}}})
	return snapshots.Snapshot{Schema: snapshots.Schema, Network: reader,
		Params: json.RawMessage(fmt.Sprintf(`{"chain":"near:mainnet",%q:%q}`, param, address)),
		Chain:  snapshots.Mainnet, Block: snapshots.Block{Height: 1, Hash: "h", Time: "2026-11-01T12:00:00Z"},
		Title: "A reading of " + address, Groups: tally.Groups, Accounts: tally.Accounts, Source: snapshots.Source{Calls: []snapshots.Call{}}}
}

// putOnTheMap stores each reading, publishes a flower of it and syncs, so
// every one is a map.
func putOnTheMap(t *testing.T, p *testPetal, fake *nearrpctest.Server, readings ...snapshots.Snapshot) {
	t.Helper()
	for _, r := range readings {
		sha := storeReading(t, p, r)
		record, id := flowerOfReading(t, r, sha, "alice.near")
		publishElsewhere(t, fake, "alice.near", id, record)
	}
	kept, err := p.Svc.MapSync.Run(t.Context())
	require.NoError(t, err)
	require.EqualValues(t, len(readings), kept)
}

// aPNG is a real PNG of side px, its pixels noise (so it doesn't compress
// below the size a test needs).
func aPNG(t *testing.T, side int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, side, side))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.UintN(256))
	}
	img.Set(0, 0, color.NRGBA{1, 2, 3, 255})
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// ftMetadata records a token's ft_metadata answer on the fake chain.
func ftMetadata(t *testing.T, fake *nearrpctest.Server, token, name, symbol string, icon *string) {
	t.Helper()
	result, _ := json.Marshal(map[string]any{"spec": "ft-1.0.0", "name": name, "symbol": symbol, "icon": icon, "reference": nil, "reference_hash": nil, "decimals": 6})
	rec, err := nearrpctest.FromSource(nearrpctest.Source{Contract: token, Method: "ft_metadata", Result: result})
	require.NoError(t, err)
	fake.Add(rec)
}

type markPart struct {
	Value      string `json:"value"`
	Status     string `json:"status"`
	Source     string `json:"source"`
	Ref        string `json:"ref"`
	VerifiedBy string `json:"verified_by"`
	At         string `json:"at"`
}

type cardMark struct {
	Name   *markPart `json:"name"`
	Symbol *markPart `json:"symbol"`
	Logo   *struct {
		SHA256    string `json:"sha256"`
		MediaType string `json:"media_type"`
		Status    string `json:"status"`
		Source    string `json:"source"`
		Ref       string `json:"ref"`
		At        string `json:"at"`
		URL       string `json:"url"`
	} `json:"logo"`
	ReadAt string `json:"read_at"`
}

// marksOnCards is every card's mark by map id, as GET /api/v1/maps gives it.
func marksOnCards(t *testing.T, p *testPetal) map[string]*cardMark {
	t.Helper()
	res, body := p.do(t, http.MethodGet, "/api/v1/maps", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var got struct {
		Maps []struct {
			ID   string    `json:"id"`
			Mark *cardMark `json:"mark"`
		} `json:"maps"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	out := map[string]*cardMark{}
	for _, m := range got.Maps {
		out[m.ID] = m.Mark
	}
	return out
}

func TestMapMarksFromTheChainThenTheCuratedList(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})

	logo := aPNG(t, 16)
	icon := "data:image/png;base64," + base64.StdEncoding.EncodeToString(logo)
	ftMetadata(t, fake, "logo.tkn.near", "Logo Token", "LOGO", &icon)
	// SVG icons, as most NEAR tokens give them: percent-encoded, or base64
	// (this one with a script, kept: it never runs where it is shown).
	svg := "data:image/svg+xml," + url.PathEscape(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><circle cx="12" cy="12" r="12" fill="#5f8afa"/></svg>`)
	ftMetadata(t, fake, "svg.tkn.near", "Svg Token", "SVG", &svg)
	scripted := "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(scriptedSVG))
	ftMetadata(t, fake, "script.tkn.near", "Script Token", "JS", &scripted)
	// SVGs refused: a DOCTYPE with an entity, an HTML root, malformed XML,
	// and one over 64 KiB.
	refusedSVGs := map[string]string{
		"doctype.tkn.near": `<!DOCTYPE svg [<!ENTITY x "xx">]><svg xmlns="http://www.w3.org/2000/svg"><text>&x;</text></svg>`,
		"html.tkn.near":    `<html xmlns="http://www.w3.org/1999/xhtml"><body>hi</body></html>`,
		"broken.tkn.near":  `<svg xmlns="http://www.w3.org/2000/svg"><g></svg>`,
		"huge.tkn.near":    `<svg xmlns="http://www.w3.org/2000/svg"><!--` + strings.Repeat("x", 64<<10) + `--></svg>`,
	}
	for token, body := range refusedSVGs {
		icon := "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(body))
		ftMetadata(t, fake, token, "Refused "+token, "NO", &icon)
	}
	big := aPNG(t, 160) // noise: well over 64 KiB
	require.Greater(t, len(big), 64<<10)
	bigIcon := "data:image/png;base64," + base64.StdEncoding.EncodeToString(big)
	ftMetadata(t, fake, "big.tkn.near", "Big Token", "BIG", &bigIcon)
	ftMetadata(t, fake, "down.tkn.near", "Down Token", "DOWN", nil)
	fake.Inject(nearrpctest.Fault{Contract: "down.tkn.near", Function: "ft_metadata", Status: http.StatusServiceUnavailable})
	meta := base64.StdEncoding.EncodeToString([]byte(`{"displayName":"Named Guild","flagLogo":"https://example.com/logo.png","links":[]}`))
	cfg, err := nearrpctest.FromSource(nearrpctest.Source{Contract: "named.sputnik-dao.near", Method: "get_config",
		Result: json.RawMessage(`{"name":"named","purpose":"p","metadata":"` + meta + `"}`)})
	require.NoError(t, err)
	fake.Add(cfg)

	putOnTheMap(t, p, fake,
		aReadingOf("near-ft-balances", "token", "usdt.tether-token.near"),
		aReadingOf("near-ft-balances", "token", "logo.tkn.near"),
		aReadingOf("near-ft-balances", "token", "svg.tkn.near"),
		aReadingOf("near-ft-balances", "token", "script.tkn.near"),
		aReadingOf("near-ft-balances", "token", "doctype.tkn.near"),
		aReadingOf("near-ft-balances", "token", "html.tkn.near"),
		aReadingOf("near-ft-balances", "token", "broken.tkn.near"),
		aReadingOf("near-ft-balances", "token", "huge.tkn.near"),
		aReadingOf("near-ft-balances", "token", "big.tkn.near"),
		aReadingOf("near-ft-balances", "token", "down.tkn.near"),
		aReadingOf("near-dao-members", "dao", "marketing.sputnik-dao.near"),
		aReadingOf("near-dao-members", "dao", "named.sputnik-dao.near"),
		aReadingOf("near-staking-pool", "pool", "figment.poolv1.near"),
		aReadingOf("near-staking-pool", "pool", "nobody.poolv1.near"),
	)
	// Before any read: every card's mark is null.
	for id, m := range marksOnCards(t, p) {
		require.Nil(t, m, "%s has a mark before any read", id)
	}

	kept, err := p.Svc.Marks.Run(t.Context())
	require.NoError(t, err)
	assert.EqualValues(t, 13, kept, "every map but the one whose chain is down")
	marks := marksOnCards(t, p)

	// A token: name and symbol from ft_metadata, confirmed by the curated list.
	usdt := marks["near:mainnet:usdt.tether-token.near"]
	require.NotNil(t, usdt)
	assert.Equal(t, markPart{Value: "Tether USD", Status: "read", Source: "chain", Ref: "usdt.tether-token.near ft_metadata",
		VerifiedBy: usdt.Name.VerifiedBy, At: usdt.ReadAt}, *usdt.Name)
	assert.NotEmpty(t, usdt.Name.VerifiedBy, "the curated list agrees")
	assert.Equal(t, "USDt", usdt.Symbol.Value)
	assert.Nil(t, usdt.Logo, "its icon is null on chain")

	// A token with an icon: the logo is kept and served here.
	lt := marks["near:mainnet:logo.tkn.near"]
	require.NotNil(t, lt)
	require.NotNil(t, lt.Logo)
	assert.Equal(t, "Logo Token", lt.Name.Value)
	assert.Equal(t, "LOGO", lt.Symbol.Value)
	assert.Empty(t, lt.Name.VerifiedBy, "not on the curated list")
	assert.Equal(t, "image/png", lt.Logo.MediaType)
	assert.Equal(t, "chain", lt.Logo.Source)
	assert.Equal(t, "read", lt.Logo.Status)
	assert.Equal(t, "logo.tkn.near ft_metadata icon", lt.Logo.Ref)
	assert.Equal(t, "/api/v1/media/"+lt.Logo.SHA256+".png", lt.Logo.URL)
	res, body := p.do(t, http.MethodGet, lt.Logo.URL, "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, string(logo), body, "the logo's bytes as the chain gave them")
	assert.Equal(t, "image/png", res.Header.Get("Content-Type"))
	assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
	assert.Contains(t, res.Header.Get("Content-Security-Policy"), "default-src 'none'")
	assert.Contains(t, res.Header.Get("Content-Security-Policy"), "sandbox")

	// SVG icons are logos, served as SVG under a CSP that runs nothing and
	// loads nothing.
	for token, want := range map[string]string{"svg.tkn.near": "", "script.tkn.near": scriptedSVG} {
		m := marks["near:mainnet:"+token]
		require.NotNil(t, m, token)
		require.NotNil(t, m.Logo, token)
		assert.Equal(t, "image/svg+xml", m.Logo.MediaType)
		assert.Equal(t, "/api/v1/media/"+m.Logo.SHA256+".svg", m.Logo.URL)
		assert.Equal(t, token+" ft_metadata icon", m.Logo.Ref)
		res, body := p.do(t, http.MethodGet, m.Logo.URL, "")
		require.Equal(t, http.StatusOK, res.StatusCode, token)
		assert.Equal(t, "image/svg+xml", res.Header.Get("Content-Type"))
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
		assert.Equal(t, "default-src 'none'; style-src 'unsafe-inline'; sandbox", res.Header.Get("Content-Security-Policy"))
		assert.Equal(t, "public, max-age=31536000, immutable", res.Header.Get("Cache-Control"))
		if want != "" {
			assert.Equal(t, want, body, "kept as the chain gave it")
		}
		// Not a profile's picture: no address but its own.
		res, _ = p.do(t, http.MethodGet, strings.TrimSuffix(m.Logo.URL, ".svg")+".png", "")
		assert.Equal(t, http.StatusNotFound, res.StatusCode)
	}
	// A PNG's own CSP is as it was.
	res, _ = p.do(t, http.MethodGet, lt.Logo.URL, "")
	assert.Equal(t, "default-src 'none'; sandbox", res.Header.Get("Content-Security-Policy"))

	// Refused icons (SVGs that aren't one safe document, a PNG over 64 KiB):
	// nothing stored, the rest kept.
	refused := []string{"near:mainnet:big.tkn.near"}
	for token := range refusedSVGs {
		refused = append(refused, "near:mainnet:"+token)
	}
	for _, id := range refused {
		m := marks[id]
		require.NotNil(t, m, id)
		assert.Nil(t, m.Logo, id)
		assert.NotNil(t, m.Name, id)
	}
	var pictures int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM media`).Scan(&pictures))
	assert.Equal(t, 3, pictures, "only the good logos are kept: a PNG and two SVGs")

	// DAOs: the name from get_config; its metadata's displayName first, and
	// its flagLogo (a web address) never fetched.
	mk := marks["near:mainnet:marketing.sputnik-dao.near"]
	require.NotNil(t, mk)
	assert.Equal(t, "marketing", mk.Name.Value)
	assert.Equal(t, "marketing.sputnik-dao.near get_config name", mk.Name.Ref)
	assert.Nil(t, mk.Symbol)
	named := marks["near:mainnet:named.sputnik-dao.near"]
	require.NotNil(t, named)
	assert.Equal(t, "Named Guild", named.Name.Value)
	assert.Nil(t, named.Logo)

	// A pool: curated only, no chain read.
	fig := marks["near:mainnet:figment.poolv1.near"]
	require.NotNil(t, fig)
	assert.Equal(t, "Figment", fig.Name.Value)
	assert.Equal(t, "curated", fig.Name.Status)
	assert.Equal(t, "curated", fig.Name.Source)
	assert.Equal(t, "app/mapsapp/map-marks.json#near:mainnet:figment.poolv1.near", fig.Name.Ref)
	assert.NotEmpty(t, fig.Name.VerifiedBy)
	// A pool nobody curated: read, nothing known.
	nobody := marks["near:mainnet:nobody.poolv1.near"]
	require.NotNil(t, nobody)
	assert.Nil(t, nobody.Name)
	assert.NotEmpty(t, nobody.ReadAt)
	for _, c := range fake.Calls() {
		assert.NotContains(t, c.Contract, "poolv1", "a pool's mark reads no chain")
	}

	// The failing read leaves null, backed off.
	assert.Nil(t, marks["near:mainnet:down.tkn.near"])
	var failures int
	var backedOff bool
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT failures, next_at > now() + interval '5 minutes' FROM map_marks WHERE map_id = $1`,
		"near:mainnet:down.tkn.near").Scan(&failures, &backedOff))
	assert.Equal(t, 1, failures)
	assert.True(t, backedOff)
	// Nothing is due now: a second run reads nothing.
	kept, err = p.Svc.Marks.Run(t.Context())
	require.NoError(t, err)
	assert.Zero(t, kept)
	// Its back-off over and the chain back, it is read.
	fake.Inject(nearrpctest.Fault{Contract: "down.tkn.near", Function: "ft_metadata", Times: 1, Hold: closed()})
	_, err = p.DB.Pool.Exec(t.Context(), `UPDATE map_marks SET next_at = now() WHERE map_id = 'near:mainnet:down.tkn.near'`)
	require.NoError(t, err)
	kept, err = p.Svc.Marks.Run(t.Context())
	require.NoError(t, err)
	assert.EqualValues(t, 1, kept)
	down := marksOnCards(t, p)["near:mainnet:down.tkn.near"]
	require.NotNil(t, down)
	assert.Equal(t, "Down Token", down.Name.Value)

	// One map's card carries it too.
	res, body = p.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape("near:mainnet:logo.tkn.near"), "")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `"symbol":{"value":"LOGO"`)
}

// scriptedSVG is a logo with a script in it: kept, and never run (the
// media route's sandbox CSP; an <img> runs none either).
const scriptedSVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><script>document.documentElement.setAttribute("data-ran", "yes")</script><rect width="16" height="16" fill="#c00"/></svg>`

// closed is a channel already closed: a Hold fault that lets its request
// through at once, as if there were none (it outranks older faults).
func closed() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// A mark read on one replica is on its cards at once, and on another's
// within marksRecheck (30 s): that one asks the marks' version in the
// background, never per card.
func TestAnotherReplicaCarriesANewMark(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	env := map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL}
	a := startPetal(t, env)
	b := startPetalOn(t, env, a.DB, a.DB.DB)
	record, id, _ := aFlower(t, "alice.near", "Marketing", 4)
	publishElsewhere(t, fake, "alice.near", id, record)
	_, err := a.Svc.MapSync.Run(t.Context())
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		m, ok := marksOnCards(t, b)[marketingMap]
		return ok && m == nil
	}, 10*time.Second, 50*time.Millisecond, "replica b has the map, without a mark")

	kept, err := a.Svc.Marks.Run(t.Context())
	require.NoError(t, err)
	require.EqualValues(t, 1, kept)
	m := marksOnCards(t, a)[marketingMap]
	require.NotNil(t, m, "the replica that read it carries it at once")
	assert.Equal(t, "marketing", m.Name.Value)
	require.Eventually(t, func() bool {
		m := marksOnCards(t, b)[marketingMap]
		return m != nil && m.Name != nil && m.Name.Value == "marketing"
	}, 45*time.Second, 250*time.Millisecond, "replica b never carried the mark")
	_, ba := a.do(t, http.MethodGet, "/api/v1/maps", "")
	_, bb := b.do(t, http.MethodGet, "/api/v1/maps", "")
	assert.Equal(t, ba, bb, "the replicas' cards differ")
}

// unknownAccount records the chain's answer for a contract that is not
// there: NEAR's UNKNOWN_ACCOUNT error, in the shape of nope_get_config.json.
func unknownAccount(t *testing.T, fake *nearrpctest.Server, contract, method string) {
	t.Helper()
	rpcErr := fmt.Sprintf(`{"name":"HANDLER_ERROR","cause":{"name":"UNKNOWN_ACCOUNT","info":{"requested_account_id":%q,"block_hash":%q,"block_height":%d}},"code":-32000,"message":"Server error","data":"account %s does not exist while viewing"}`,
		contract, nearrpctest.RecordedHash, nearrpctest.RecordedHeight, contract)
	rec, err := nearrpctest.FromSource(nearrpctest.Source{Contract: contract, Method: method, RPCError: json.RawMessage(rpcErr)})
	require.NoError(t, err)
	fake.Add(rec)
}

// The curated list fills a mark whatever the chain says: a contract that is
// not there gives the list's mark at once (kept as read, due in a day), a
// chain that can't be read gives it too (and is tried again, backed off),
// and a later read adds the chain's word, the list confirming it.
func TestACuratedMarkNeedsNoChain(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	const sweat, wrap, gone = "near:mainnet:token.sweat", "near:mainnet:wrap.near", "near:mainnet:gone.tkn.near"
	unknownAccount(t, fake, "token.sweat", "ft_metadata")
	unknownAccount(t, fake, "gone.tkn.near", "ft_metadata")
	ftMetadata(t, fake, "wrap.near", "Wrapped NEAR fungible token", "wNEAR", nil)
	fake.Inject(nearrpctest.Fault{Contract: "wrap.near", Function: "ft_metadata", Status: http.StatusServiceUnavailable})
	putOnTheMap(t, p, fake,
		aReadingOf("near-ft-balances", "token", "token.sweat"),
		aReadingOf("near-ft-balances", "token", "wrap.near"),
		aReadingOf("near-ft-balances", "token", "gone.tkn.near"),
	)

	kept, err := p.Svc.Marks.Run(t.Context())
	require.NoError(t, err)
	assert.EqualValues(t, 2, kept, "the two contracts that are not there are read as saying nothing")
	marks := marksOnCards(t, p)

	// Not on the chain: the list's name and symbol, curated; due in a day.
	sw := marks[sweat]
	require.NotNil(t, sw)
	require.NotNil(t, sw.Name)
	assert.Equal(t, markPart{Value: "SWEAT", Status: "curated", Source: "curated", Ref: "app/mapsapp/map-marks.json#" + sweat,
		VerifiedBy: sw.Name.VerifiedBy, At: "2026-11-30T00:00:00Z"}, *sw.Name)
	assert.NotEmpty(t, sw.Name.VerifiedBy)
	require.NotNil(t, sw.Symbol)
	assert.Equal(t, "SWEAT", sw.Symbol.Value)
	assert.Nil(t, sw.Logo)
	var failures int
	var dueInADay bool
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT failures, next_at > now() + interval '23 hours' FROM map_marks WHERE map_id = $1`, sweat).Scan(&failures, &dueInADay))
	assert.Zero(t, failures, "a contract that is not there is an answer, not a failure")
	assert.True(t, dueInADay)
	// Not on the chain nor on the list: read, nothing known.
	g := marks[gone]
	require.NotNil(t, g)
	assert.Nil(t, g.Name)
	assert.NotEmpty(t, g.ReadAt)

	// The chain unreachable: the list's mark all the same, and backed off.
	wr := marks[wrap]
	require.NotNil(t, wr, "a curated map waits for no chain")
	require.NotNil(t, wr.Name)
	assert.Equal(t, "Wrapped NEAR fungible token", wr.Name.Value)
	assert.Equal(t, "curated", wr.Name.Source)
	assert.Equal(t, "wNEAR", wr.Symbol.Value)
	var backedOff bool
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT failures, next_at > now() + interval '5 minutes' FROM map_marks WHERE map_id = $1`, wrap).Scan(&failures, &backedOff))
	assert.Equal(t, 1, failures)
	assert.True(t, backedOff)

	// The chain back: its word is on the mark, the list confirming it.
	fake.Inject(nearrpctest.Fault{Contract: "wrap.near", Function: "ft_metadata", Times: 1, Hold: closed()})
	_, err = p.DB.Pool.Exec(t.Context(), `UPDATE map_marks SET next_at = now() WHERE map_id = $1`, wrap)
	require.NoError(t, err)
	kept, err = p.Svc.Marks.Run(t.Context())
	require.NoError(t, err)
	assert.EqualValues(t, 1, kept)
	wr = marksOnCards(t, p)[wrap]
	require.NotNil(t, wr)
	assert.Equal(t, "chain", wr.Name.Source)
	assert.Equal(t, "read", wr.Name.Status)
	assert.Equal(t, "wrap.near ft_metadata", wr.Name.Ref)
	assert.NotEmpty(t, wr.Name.VerifiedBy, "the list says the same")
	assert.Equal(t, "chain", wr.Symbol.Source)

	// Down again: what the chain said is kept, not replaced by the list's.
	fake.Inject(nearrpctest.Fault{Contract: "wrap.near", Function: "ft_metadata", Status: http.StatusServiceUnavailable})
	_, err = p.DB.Pool.Exec(t.Context(), `UPDATE map_marks SET next_at = now() WHERE map_id = $1`, wrap)
	require.NoError(t, err)
	kept, err = p.Svc.Marks.Run(t.Context())
	require.NoError(t, err)
	assert.Zero(t, kept)
	again := marksOnCards(t, p)[wrap]
	require.NotNil(t, again)
	assert.Equal(t, *wr.Name, *again.Name)
	assert.Equal(t, wr.ReadAt, again.ReadAt)
}
