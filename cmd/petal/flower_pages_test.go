package main

// The flower as a person sees it on the pages, in Chromium: how large its
// words are where it is shown (/make and /draft, 1280 and 375 px wide, light
// and dark), and what a petal says when it is hovered, focused or clicked.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/domain/specs"
)

// minTextPx is the smallest a word of the picture may be drawn, in CSS px.
const minTextPx = 11.0

// flowerTextSizes reads, for every text of the flower pictures shown on the
// page, the size its glyphs are drawn at in CSS px: the text's computed font
// size (in the picture's own units) times the scale from those units to the
// screen (getScreenCTM, rotation taken out), and its bounding box's height
// (getBoundingClientRect) as a check. Texts not shown (display: none, a form
// for another screen) are left out.
const flowerTextSizes = `(() => {
	const out = [];
	document.querySelectorAll('.flower svg text, .flower-picture svg text').forEach(t => {
		const box = t.getBoundingClientRect();
		if (box.width === 0 || box.height === 0 || !t.checkVisibility()) return;
		const m = t.getScreenCTM();
		const scale = Math.hypot(m.a, m.b);
		const size = parseFloat(getComputedStyle(t).fontSize) * scale;
		let kind = (t.getAttribute('class') || t.parentNode.getAttribute('class') || '').split(' ')[0];
		if (!kind) { // the pictures before kinds were named
			if (t.hasAttribute('transform')) kind = 'label';
			else if (t.getAttribute('font-size') === '22') kind = 'title';
			else if (t.closest('g[font-size="13"]')) kind = 'legend';
			else kind = 'subtitle';
		}
		const rotated = Math.abs(m.b) > 1e-6;
		out.push({kind: kind, px: Math.round(size * 100) / 100, box: rotated ? 0 : Math.round(box.height * 100) / 100, text: t.textContent});
	});
	return out;
})()`

type textSize struct {
	Kind string  `json:"kind"`
	Px   float64 `json:"px"`
	Box  float64 `json:"box"`
	Text string  `json:"text"`
}

// aCrowdedReading is a reading of forty accounts with long names in three
// groups, weights falling away, so a flower of it has every kind of label.
func aCrowdedReading() snapshots.Snapshot {
	groups := []snapshots.Group{{ID: "council", Label: "Council"}, {ID: "community", Label: "Community members"}, {ID: "treasury", Label: "Treasury and grants"}}
	var accounts []snapshots.Account
	for i := range 40 {
		name := fmt.Sprintf("a-rather-long-account-name-%02d.near", i)
		accounts = append(accounts, snapshots.Account{ID: "near:mainnet:" + name, Label: name,
			Weight: fmt.Sprint(100000 / (i + 1)), Groups: []string{groups[i%3].ID}})
	}
	return snapshots.Snapshot{Schema: snapshots.Schema, Network: "near-ft-balances",
		Params: json.RawMessage(`{"chain":"near:mainnet","token":"crowded.tkn.near"}`),
		Chain:  snapshots.Mainnet, Block: snapshots.Block{Height: 1, Hash: "h", Time: "2026-11-01T12:00:00Z"},
		Title: "Holders of crowded.tkn.near, a token with many holders and a long title", Groups: groups, Accounts: accounts,
		Source: snapshots.Source{Calls: []snapshots.Call{}}}
}

func TestFlowerWordsAreReadableWhereShown(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_RECORDED_PACE_MS": "0",
		"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	crowded := aCrowdedReading()
	crowdedSHA := storeReading(t, p, crowded)
	spec, err := specs.Propose(&crowded, crowdedSHA, "top 30")
	require.NoError(t, err)
	specJSON, err := json.Marshal(spec)
	require.NoError(t, err)
	b := startBrowser(t, p.URL)

	// The recorded demo's flower, on /make and on its draft page.
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	var started struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	waitForRun(t, p, started.RunID)
	demoDraft := flowerViewURL(t, p, started.RunID)

	pages := []struct{ name, path, ready string }{
		{"make", "/make?run=" + started.RunID, "li.ev-done"},
		{"draft", demoDraft, "#flower svg"},
		{"draft-crowded", "/draft?spec=" + url.QueryEscape(string(specJSON)), "#flower svg"},
	}
	for _, pg := range pages {
		for _, width := range []int64{1280, 375, 320} {
			for _, scheme := range []string{"light", "dark"} {
				t.Run(fmt.Sprintf("%s at %d, %s", pg.name, width, scheme), func(t *testing.T) {
					ctx := b.tab(t)
					var sizes []textSize
					require.NoError(t, chromedp.Run(ctx,
						emulation.SetDeviceMetricsOverride(width, 900, 1, width < 600),
						emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}),
						chromedp.Navigate(p.URL+pg.path),
						chromedp.WaitVisible(pg.ready, chromedp.ByQuery),
						waitFor(`document.querySelectorAll('.flower svg text, .flower-picture svg text').length > 0`),
						chromedp.Evaluate(flowerTextSizes, &sizes),
					))
					require.NotEmpty(t, sizes)
					if pg.name == "make" {
						// The tool results' instants, as a person writes them.
						var human, exact string
						require.NoError(t, chromedp.Run(ctx,
							chromedp.Text("li.ev-tool_result time", &human, chromedp.ByQuery),
							chromedp.AttributeValue("li.ev-tool_result time", "title", &exact, nil, chromedp.ByQuery),
						))
						assert.Equal(t, "1 Nov 2026", human)
						assert.Equal(t, "Sun, 01 Nov 2026 12:00:00 UTC", exact)
					}
					smallest := map[string]textSize{}
					for _, s := range sizes {
						if m, ok := smallest[s.Kind]; !ok || s.Px < m.Px {
							smallest[s.Kind] = s
						}
					}
					var report []string
					for kind, s := range smallest {
						report = append(report, fmt.Sprintf("%s %.2f px (box %.2f) %q", kind, s.Px, s.Box, s.Text))
					}
					t.Logf("smallest words: %s", strings.Join(report, "; "))
					for _, s := range sizes {
						assert.GreaterOrEqual(t, s.Px, minTextPx, "%s %q", s.Kind, s.Text)
					}
					if width == 320 {
						// There it reaches the screen's edges: all of it, and no
						// sideways scroll for the page.
						var fits bool
						require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`(() => {
							const box = document.querySelector('.flower svg').getBoundingClientRect();
							return document.documentElement.scrollWidth <= innerWidth && box.left >= -0.5 && box.right <= innerWidth + 0.5;
						})()`, &fits)))
						assert.True(t, fits, "the picture within the screen, the page without a sideways scroll")
						if scheme == "dark" && pg.name == "draft-crowded" {
							require.NoError(t, chromedp.Run(ctx, chromedp.ScrollIntoView(".flower svg", chromedp.ByQuery)))
							screenshot(t, ctx, pg.name+"-320-dark")
						}
					}
					if width == 375 && scheme == "dark" {
						require.NoError(t, chromedp.Run(ctx, chromedp.ScrollIntoView(".flower svg", chromedp.ByQuery)))
						screenshot(t, ctx, pg.name+"-375-dark")
					}
				})
			}
		}
	}
}

// waitForRun waits until a run is no longer running.
func waitForRun(t *testing.T, p *testPetal, runID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		_, body := p.do(t, http.MethodGet, "/api/v1/agent/runs/"+runID+"?limit=1", "", "Accept", "application/json")
		var run struct {
			Status string `json:"status"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &run), body)
		if run.Status != "running" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the run %s did not end", runID)
}

// flowerViewURL is the view_url of a run's flower event.
func flowerViewURL(t *testing.T, p *testPetal, runID string) string {
	t.Helper()
	_, runBody := p.do(t, http.MethodGet, "/api/v1/agent/runs/"+runID, "")
	var run struct {
		Events []struct {
			Kind string          `json:"event"`
			Data json.RawMessage `json:"data"`
		} `json:"events"`
	}
	require.NoError(t, json.Unmarshal([]byte(runBody), &run))
	for _, e := range run.Events {
		if e.Kind == "flower" {
			var f struct {
				ViewURL string `json:"view_url"`
			}
			require.NoError(t, json.Unmarshal(e.Data, &f))
			return f.ViewURL
		}
	}
	t.Fatalf("no flower in run %s: %s", runID, runBody)
	return ""
}

// A petal tells who it is: focused or hovered it says its account, weight
// and share under the picture; clicked it opens the account's groups on the
// map, each a link to its map.
func TestAPetalTellsWhoItIs(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	record, id, _ := aFlower(t, "alice.near", "Marketing by role", 6)
	publishElsewhere(t, fake, "alice.near", id, record)
	_, err := p.Svc.MapSync.Run(t.Context())
	require.NoError(t, err)
	_, err = p.Svc.Relations.CatchUp(t.Context())
	require.NoError(t, err)
	var flower struct {
		Spec json.RawMessage `json:"spec"`
	}
	require.NoError(t, json.Unmarshal(record, &flower))
	b := startBrowser(t, p.URL)
	ctx := b.tab(t)

	var focusable int
	var focused, info string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(p.URL+"/draft?spec="+url.QueryEscape(string(flower.Spec))),
		chromedp.WaitVisible("#flower svg path.petal", chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('#flower svg path.petal')).filter(p => p.tabIndex === 0).length`, &focusable),
		// Tab from the last thing before the picture lands on its first petal.
		chromedp.Evaluate(`document.querySelector('#flower svg path.petal').focus(); document.activeElement.dataset.name`, &focused),
		chromedp.Text(".petal-info", &info, chromedp.ByQuery),
	))
	assert.Equal(t, 6, focusable, "every petal is focusable")
	assert.Equal(t, "alice.near", focused)
	assert.Contains(t, info, "alice.near: 16.7% of the total, weight 1 (council)")
	screenshot(t, ctx, "draft-petal-focused")

	// Hovered with the mouse: the largest petal after alice's.
	var x, y float64
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Evaluate(`(() => { const r = document.querySelectorAll('#flower svg path.petal')[1].getBoundingClientRect(); return r.x + r.width / 2; })()`, &x),
		chromedp.Evaluate(`(() => { const r = document.querySelectorAll('#flower svg path.petal')[1].getBoundingClientRect(); return r.y + r.height / 2; })()`, &y),
		chromedp.ActionFunc(func(ctx context.Context) error {
			return input.DispatchMouseEvent(input.MouseMoved, x, y).Do(ctx)
		}),
		waitFor(`document.querySelector('.petal-info').textContent.includes('bob.near')`),
		chromedp.Text(".petal-info", &info, chromedp.ByQuery),
	))
	assert.Contains(t, info, "bob.near: 16.7% of the total")

	// Clicked: the account's groups, and one opens its map.
	var location, group, heading string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.MouseClickXY(x, y),
		chromedp.WaitVisible("ul.groups a", chromedp.ByQuery),
		chromedp.Location(&location),
		chromedp.Text("ul.groups a", &group, chromedp.ByQuery),
	))
	assert.Equal(t, p.URL+"/account?id="+url.QueryEscape("near:mainnet:bob.near"), location)
	assert.Equal(t, "Members of marketing.sputnik-dao.near", group)
	screenshot(t, ctx, "account")
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click("ul.groups a", chromedp.ByQuery),
		chromedp.WaitVisible(".reading", chromedp.ByQuery),
		chromedp.Text("h1", &heading, chromedp.ByQuery),
	))
	assert.Equal(t, "Marketing by role", heading, "the map of the group, by its name")
}

// An address that is no page answers a page to a browser (404, with the
// way on as links), while the API keeps answering JSON.
func TestAnUnknownPageIsAPage(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	res, body := p.do(t, http.MethodGet, "/no-such-page", "", "Accept", "text/html,application/xhtml+xml")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "text/html"), res.Header.Get("Content-Type"))
	assert.Contains(t, body, "<h1>Not found</h1>")
	assert.Contains(t, body, `<a href="/make">/make</a>`, "the hint's paths are links")
	assert.Contains(t, res.Header.Get("Content-Security-Policy"), "default-src 'self'")

	res, body = p.do(t, http.MethodGet, "/d/"+strings.Repeat("a", 64), "", "Accept", "text/html")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Contains(t, body, "no draft has that address")
	res, body = p.do(t, http.MethodGet, "/d/"+strings.Repeat("a", 64), "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Equal(t, "not found: no draft has that hash\n", body, "a program keeps the plain answer")

	for _, path := range []string{"/api/v1/no-such-route", "/no-such-page"} {
		res, body = p.do(t, http.MethodGet, path, "", "Accept", "application/json")
		assert.Equal(t, http.StatusNotFound, res.StatusCode, path)
		assert.Contains(t, body, `"code":"not_found"`, path)
	}
	res, body = p.do(t, http.MethodGet, "/api/v1/no-such-route", "", "Accept", "text/html")
	assert.Contains(t, body, `"code":"not_found"`, "the API is JSON even to a browser")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)

	// In the browser: the page, with no console errors.
	b := startBrowser(t, p.URL)
	// Chromium logs the page's own 404 status, and only that is allowed.
	ctx := b.tab(t, "status of 404 (Not Found) "+p.URL+"/maps/somewhere")
	var heading string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(p.URL+"/maps/somewhere"),
		chromedp.Text("h1", &heading, chromedp.ByQuery),
	))
	assert.Equal(t, "Not found", heading)
	screenshot(t, ctx, "not-found")
}
