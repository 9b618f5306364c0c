package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
)

// demoMaps is what the demo map's answers say of its cards and views.
type demoMaps struct {
	Maps []struct {
		ID       string `json:"id"`
		Title    string `json:"title"`
		Picture  string `json:"picture"`
		ViewURL  string `json:"view_url"`
		Demo     bool   `json:"demo"`
		Readings []struct {
			Drawings []struct {
				SHA  string `json:"sha"`
				Demo bool   `json:"demo"`
			} `json:"drawings"`
		} `json:"readings"`
	} `json:"maps"`
}

type demoViews struct {
	Views []struct {
		Map     string `json:"map"`
		Picture string `json:"picture"`
		ViewURL string `json:"view_url"`
		Demo    bool   `json:"demo"`
	} `json:"views"`
	Groups []struct {
		Group string `json:"group"`
		Kind  string `json:"kind"`
		Count int    `json:"count"`
	} `json:"groups"`
	Pairs []struct {
		A, B    string
		Shared  int    `json:"shared"`
		Jaccard string `json:"jaccard"`
	} `json:"pairs"`
}

func readDemoMap(t *testing.T, p *testPetal) (demoMaps, demoViews) {
	t.Helper()
	var m demoMaps
	var v demoViews
	res, body := p.do(t, http.MethodGet, "/api/v1/maps", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.NoError(t, json.Unmarshal([]byte(body), &m))
	res, body = p.do(t, http.MethodGet, "/api/v1/map", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	return m, v
}

// A fresh local site's map shows the demo drawings, each marked demo, their
// pictures drawn and their links opening; nothing of them is stored; the
// setting and a public site turn them off; a real flower ends them.
func TestAFreshSiteShowsTheDemoMapUntilARealFlower(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_DEMO_MAP": "on", "PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})

	m, v := readDemoMap(t, p)
	require.Len(t, m.Maps, 3, "a DAO, a pool and a token")
	require.Len(t, v.Views, 3)
	for _, c := range m.Maps {
		assert.True(t, c.Demo, "%s: the card says demo", c.ID)
		assert.True(t, strings.HasSuffix(c.ID, ".demo"), "%s: a made-up contract", c.ID)
		assert.Contains(t, c.Title, "demo", c.ID)
		require.Len(t, c.Readings, 1)
		require.Len(t, c.Readings[0].Drawings, 1)
		assert.True(t, c.Readings[0].Drawings[0].Demo, "%s: its drawing says demo", c.ID)
		assert.Equal(t, "/d/"+c.Readings[0].Drawings[0].SHA, c.ViewURL, "a demo drawing opens at its draft link")
		res, svg := p.do(t, http.MethodGet, c.Picture, "")
		assert.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", c.Picture, svg)
		assert.Contains(t, svg, "<svg", c.Picture)
		res, page := p.do(t, http.MethodGet, c.ViewURL, "", "Accept", "text/html")
		assert.Equal(t, http.StatusOK, res.StatusCode, c.ViewURL)
		assert.Contains(t, page, `class="demo-mark"`, "%s: its page says demo", c.ViewURL)
		assert.Contains(t, page, "<svg", "%s: its page draws it", c.ViewURL)
	}
	for _, view := range v.Views {
		assert.True(t, view.Demo, "%s: the view says demo", view.Map)
	}
	// The demo readings share accounts, so the map's relations show.
	require.NotEmpty(t, v.Pairs, "the demo map's pairs")
	kinds := map[string]bool{}
	for _, g := range v.Groups {
		assert.True(t, strings.HasSuffix(g.Group, ".demo"), g.Group)
		assert.Positive(t, g.Count, g.Group)
		kinds[g.Kind] = true
	}
	assert.Equal(t, map[string]bool{"dao": true, "pool": true, "token": true}, kinds, "every demo group in a pair")
	for _, pr := range v.Pairs {
		assert.GreaterOrEqual(t, pr.Shared, 2, "%s %s", pr.A, pr.B)
		assert.Less(t, pr.A, pr.B)
		assert.NotEmpty(t, pr.Jaccard)
	}
	t.Logf("the demo map's pairs: %+v", v.Pairs)
	res, page := p.do(t, http.MethodGet, "/map", "", "Accept", "text/html")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, 3, strings.Count(page, `<span class="demo-mark">Demo</span>`), "each card is marked")
	assert.Contains(t, page, "demo-note")
	assert.NotContains(t, page, "Nothing is on the map yet")

	// A petal of the demo opens its account's groups: carol.near is in the
	// demo DAO and the demo pool, the larger share first.
	res, page = p.do(t, http.MethodGet, "/account?id=near:mainnet:carol.near", "", "Accept", "text/html")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, page, `class="demo-mark"`, "the account's page says demo")
	pool, dao := strings.Index(page, "/map?id=near%3amainnet%3ameadow.pool.demo"), strings.Index(page, "/map?id=near%3amainnet%3agarden.demo")
	require.True(t, pool > 0 && dao > 0, "carol.near's page lists the demo pool and DAO: %s", page)
	assert.Less(t, pool, dao, "42.2%% of the pool before 1/7 of the DAO")
	assert.Contains(t, page, "holds 42.2%")
	assert.NotContains(t, page, "it is in no group")

	// Never stored: no flower, no snapshot of them in the tables.
	var flowers, snaps int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM published_flowers`).Scan(&flowers))
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM snapshots WHERE title LIKE '%demo%'`).Scan(&snaps))
	assert.Zero(t, flowers, "the demo drawings are no published flowers")
	assert.Zero(t, snaps, "the demo readings are not stored")
	assert.Empty(t, fake.Calls(), "the demo map read nothing from the chain")

	// A real flower is published: the demo map is gone at once.
	record, id, _ := aFlower(t, "alice.near", "Real", 4)
	publishElsewhere(t, fake, "alice.near", id, record)
	_, err := p.Svc.MapSync.Run(t.Context())
	require.NoError(t, err)
	m, v = readDemoMap(t, p)
	require.Len(t, m.Maps, 1, "only the real map")
	assert.Equal(t, marketingMap, m.Maps[0].ID)
	assert.False(t, m.Maps[0].Demo)
	require.Len(t, v.Views, 1)
	assert.False(t, v.Views[0].Demo)
	for _, g := range v.Groups {
		assert.False(t, strings.HasSuffix(g.Group, ".demo"), "a demo group left on a real map: %s", g.Group)
	}
	_, page = p.do(t, http.MethodGet, "/map", "", "Accept", "text/html")
	assert.NotContains(t, page, "demo-mark")
	assert.NotContains(t, page, "demo-note")
	for _, c := range []string{"garden", "meadow", "seed"} {
		assert.NotContains(t, page, c+".", "the demo's %s is off the page", c)
	}
}

func TestTheDemoMapIsOffWhenTurnedOffAndOnAPublicSite(t *testing.T) {
	t.Parallel()
	for name, env := range map[string]map[string]string{
		"turned off":  {"PETAL_DEMO_MAP": "off"},
		"public site": {"PETAL_DEMO_MAP": "on", "PETAL_PUBLIC": "1"},
	} {
		t.Run(name, func(t *testing.T) {
			p := startPetal(t, env)
			m, v := readDemoMap(t, p)
			for _, c := range m.Maps {
				assert.False(t, c.Demo, c.ID)
				assert.False(t, strings.HasSuffix(c.ID, ".demo"), c.ID)
			}
			for _, view := range v.Views {
				assert.False(t, view.Demo, view.Map)
			}
			_, page := p.do(t, http.MethodGet, "/map", "", "Accept", "text/html")
			assert.NotContains(t, page, "demo-mark")
			if name == "turned off" {
				assert.Empty(t, m.Maps)
				assert.Contains(t, page, "Nothing is on the map yet")
			}
		})
	}
}

// The demo map in Chromium: the gallery lists the three cards, each marked,
// their tiles drawn; one opens at its map's page, marked too.
func TestTheDemoMapInABrowser(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_DEMO_MAP": "on"})
	b := startBrowser(t, p.URL)
	ctx := b.tab(t)
	var cards, marks, drawn int
	var note, markSize string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(p.URL+"/map"),
		chromedp.WaitVisible(".gallery .tile img", chromedp.ByQuery),
		waitFor(`[...document.querySelectorAll('.gallery .tile img')].every(i => i.complete && i.naturalWidth > 0)`),
		chromedp.Evaluate(`document.querySelectorAll('.gallery .tile').length`, &cards),
		chromedp.Evaluate(`[...document.querySelectorAll('.gallery .tile')].filter(t => t.querySelector('.demo-mark')?.innerText.trim().toLowerCase() === 'demo').length`, &marks),
		chromedp.Evaluate(`[...document.querySelectorAll('.gallery .tile img')].filter(i => i.naturalWidth > 0).length`, &drawn),
		chromedp.Evaluate(`document.querySelector('.demo-note')?.innerText ?? ''`, &note),
		chromedp.Evaluate(`getComputedStyle(document.querySelector('.demo-mark')).fontSize`, &markSize),
	))
	assert.Equal(t, 3, cards, "the demo map's cards")
	assert.Equal(t, 3, marks, "each card marked demo")
	assert.Equal(t, 3, drawn, "each tile drawn")
	assert.Contains(t, note, "demo")
	t.Logf("the demo mark's font size: %s", markSize)
	screenshot(t, ctx, "map-demo")

	var title string
	var tileMarks int
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(".gallery .tile a", chromedp.ByQuery),
		chromedp.WaitVisible(".reading .tile img", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('h1').innerText`, &title),
		chromedp.Evaluate(`document.querySelectorAll('.reading .tile .demo-mark').length`, &tileMarks),
	))
	assert.Contains(t, strings.ToLower(title), "demo")
	assert.Equal(t, 1, tileMarks)
	screenshot(t, ctx, "map-demo-one")

	// The drawing opens at its draft page, drawn and marked demo; its largest
	// petal opens the account's groups among the demo maps.
	var heading string
	var petals int
	var x, y float64
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(".reading .tile a", chromedp.ByQuery),
		chromedp.WaitVisible("#flower svg path.petal", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('h1').innerText`, &heading),
		chromedp.Evaluate(`document.querySelectorAll('#flower svg path.petal').length`, &petals),
		chromedp.Evaluate(`(() => { const r = document.querySelectorAll('#flower svg path.petal')[0].getBoundingClientRect(); return r.x + r.width / 2; })()`, &x),
		chromedp.Evaluate(`(() => { const r = document.querySelectorAll('#flower svg path.petal')[0].getBoundingClientRect(); return r.y + r.height / 2; })()`, &y),
	))
	assert.Contains(t, heading, "Demo", "the draft page says demo")
	assert.Positive(t, petals)
	screenshot(t, ctx, "map-demo-drawing")
	var groups int
	require.NoError(t, chromedp.Run(ctx,
		chromedp.MouseClickXY(x, y),
		chromedp.WaitVisible("ul.groups a", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('ul.groups a').length`, &groups),
	))
	assert.Positive(t, groups, "a demo account's page lists its demo maps")
	screenshot(t, ctx, "map-demo-account")
}
