package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
)

// smallestText is the smallest size, in CSS pixels as drawn, of any word in
// the page's main part, and the word: an SVG's text scaled as its picture
// is, what is hidden or only for screen readers left out.
const smallestText = `(() => {
  let min = 1e9, what = '';
  const walk = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
  for (let n; (n = walk.nextNode());) {
    if (!n.textContent.trim()) continue;
    const el = n.parentElement;
    if (el.closest('title, desc, .visually-hidden')) continue;
    const cs = getComputedStyle(el);
    if (cs.display === 'none' || cs.visibility === 'hidden') continue;
    let px = parseFloat(cs.fontSize);
    const svg = el.closest('svg');
    if (svg && svg.viewBox.baseVal && svg.viewBox.baseVal.width) px *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    if (px < min) { min = px; what = n.textContent.trim().slice(0, 40); }
  }
  return {px: Math.round(min * 10) / 10, what};
})()`

// pastTheScreen lists what reaches past the screen's right edge without a
// box that scrolls around it (main clips, at 320 px, what would make the
// page scroll sideways: clipped is as unreadable).
const pastTheScreen = `[...document.querySelectorAll('main *')].filter(el => {
  const r = el.getBoundingClientRect();
  if (r.width <= 1 || r.right <= window.innerWidth + 0.5) return false;
  for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
    const o = getComputedStyle(a).overflowX;
    if (o === 'auto' || o === 'scroll') return false;
  }
  return true;
}).slice(0, 5).map(el => el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined ? '.' + el.className : ''))`

// A map with three readings and its DAO's votes, in Chromium: its history's
// chart and table, the voting blocs beside the proposals, and a reading's
// "What changed" opening the comparison page; no word smaller than 11 px
// and nothing wider than the screen, at 800 px and at 320 px.
func TestMapHistoryAndComparisonInABrowser(t *testing.T) {
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	mapID, shas := threeReadingsMap(t, p, fake)
	sha, s := proposalsReading(t, p)
	require.Equal(t, mapID, publishProposals(t, p, fake, sha, s))
	b := startBrowser(t, p.URL)
	ctx := b.tab(t)

	legible := func(page string) {
		t.Helper()
		for _, width := range []int64{800, 320} {
			var small struct {
				PX   float64 `json:"px"`
				What string  `json:"what"`
			}
			var clipped []string
			require.NoError(t, chromedp.Run(ctx,
				emulation.SetDeviceMetricsOverride(width, 1000, 1, width < 400),
				chromedp.Evaluate(smallestText, &small),
				chromedp.Evaluate(pastTheScreen, &clipped),
			))
			assert.GreaterOrEqual(t, small.PX, 11.0, "%s at %d px: %q is drawn at %v px", page, width, small.What, small.PX)
			assert.Empty(t, clipped, "%s at %d px: past the screen's edge, outside anything that scrolls", page, width)
			if os.Getenv("PETAL_PAGE_SCREENSHOTS") == "1" {
				var png []byte
				require.NoError(t, chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)))
				require.NoError(t, os.WriteFile(filepath.Join("..", "..", "docs", "pages", page+"-"+map[bool]string{true: "320", false: "800"}[width < 400]+".png"), png, 0o644))
			}
		}
		require.NoError(t, chromedp.Run(ctx, emulation.ClearDeviceMetricsOverride()))
	}

	var pairs, location, heading string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(p.URL+"/map?id="+url.QueryEscape(mapID)),
		chromedp.WaitVisible("svg.history-chart", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('.bloc-pairs li').innerText`, &pairs),
	))
	assert.Equal(t, "alice.near and bob.near: alike on 3 of 3 (100.0%)", pairs)
	legible("map-history")

	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(`.history-table tbody tr:last-child a`, chromedp.ByQuery),
		chromedp.WaitVisible("#figures-h", chromedp.ByQuery),
		chromedp.Location(&location),
		chromedp.Text("h1", &heading, chromedp.ByQuery),
	))
	assert.Equal(t, p.URL+"/compare?a="+shas[1]+"&b="+shas[2]+"&map="+strings.ReplaceAll(url.QueryEscape(mapID), "%3A", "%3a"), location)
	assert.Equal(t, "What changed", heading)
	legible("compare")
}
