package main

import (
	"context"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
)

// The marks on the pages, in Chromium: a token's card shows its SVG logo
// (an <img> of the media route, alt its name), its name and symbol as text
// (markup shows as text) and where they came from; a curated pool says so.
// The logo holds a script: it runs neither in the page nor opened alone.
func TestMarksInABrowser(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	const hostile = `<img src=x onerror="document.title='pwned'">`
	icon := "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(scriptedSVG))
	ftMetadata(t, fake, "script.tkn.near", hostile, "JS", &icon)
	putOnTheMap(t, p, fake,
		aReadingOf("near-ft-balances", "token", "script.tkn.near"),
		aReadingOf("near-staking-pool", "pool", "figment.poolv1.near"),
	)
	_, err := p.Svc.Marks.Run(t.Context())
	require.NoError(t, err)
	logo := marksOnCards(t, p)["near:mainnet:script.tkn.near"]
	require.NotNil(t, logo)
	require.NotNil(t, logo.Logo)
	b := startBrowser(t, p.URL)

	t.Run("the gallery and a map show their marks", func(t *testing.T) {
		ctx := b.tab(t)
		var alt, name, symbol, hover, title string
		var sources []string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(p.URL+"/map"),
			chromedp.WaitVisible(".gallery .mark img", chromedp.ByQuery),
			waitFor(`Array.from(document.querySelectorAll('.gallery img')).every(i => i.complete && i.naturalWidth > 0)`),
			chromedp.AttributeValue(".gallery .mark img", "alt", &alt, nil, chromedp.ByQuery),
			chromedp.Text(".gallery .mark:has(img) .mark-name", &name, chromedp.ByQuery),
			chromedp.Text(".gallery .mark:has(img) .mark-symbol", &symbol, chromedp.ByQuery),
			chromedp.AttributeValue(".gallery .mark:has(img) .mark-name", "title", &hover, nil, chromedp.ByQuery),
			chromedp.Evaluate(`Array.from(document.querySelectorAll('.gallery .mark-source')).map(s => s.textContent)`, &sources),
			chromedp.Title(&title),
		))
		assert.Equal(t, hostile, alt)
		assert.Equal(t, hostile, name, "the name shows as text")
		assert.Equal(t, "JS", symbol)
		assert.Contains(t, hover, "read from the chain, script.tkn.near ft_metadata")
		assert.ElementsMatch(t, []string{"from the chain, unchecked", "from petal's curated list"}, sources)
		assert.NotEqual(t, "pwned", title)
		screenshot(t, ctx, "map-marks")

		var src string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(p.URL+"/map?id="+url.QueryEscape("near:mainnet:script.tkn.near")),
			chromedp.WaitVisible("main .mark img", chromedp.ByQuery),
			waitFor(`document.querySelector('main .mark img').complete && document.querySelector('main .mark img').naturalWidth > 0`),
			chromedp.AttributeValue("main .mark img", "src", &src, nil, chromedp.ByQuery),
			chromedp.Title(&title),
		))
		assert.Equal(t, logo.Logo.URL, src)
		assert.NotEqual(t, "pwned", title)
	})

	t.Run("a logo opened alone runs no script", func(t *testing.T) {
		ctx, cancel := chromedp.NewContext(b.ctx)
		defer cancel()
		var mu sync.Mutex
		var logs, away []string
		chromedp.ListenTarget(ctx, func(ev any) {
			mu.Lock()
			defer mu.Unlock()
			switch ev := ev.(type) {
			case *network.EventRequestWillBeSent:
				if !strings.HasPrefix(ev.Request.URL, p.URL+"/") {
					away = append(away, ev.Request.URL)
				}
			case *cdplog.EventEntryAdded:
				logs = append(logs, ev.Entry.Text)
			case *runtime.EventConsoleAPICalled:
				logs = append(logs, "console."+string(ev.Type))
			}
		})
		tctx, tcancel := context.WithTimeout(ctx, 30*time.Second)
		defer tcancel()
		var root string
		var ran *string
		require.NoError(t, chromedp.Run(tctx, network.Enable(), cdplog.Enable(), runtime.Enable(),
			chromedp.Navigate(p.URL+logo.Logo.URL),
			waitFor(`document.readyState === 'complete'`),
			chromedp.Evaluate(`document.documentElement.localName`, &root),
			chromedp.Evaluate(`document.documentElement.getAttribute('data-ran')`, &ran),
		))
		assert.Equal(t, "svg", root, "the logo opened as an SVG document")
		assert.Nil(t, ran, "the logo's script ran")
		mu.Lock()
		defer mu.Unlock()
		assert.Empty(t, away, "requests that left the origin")
		assert.True(t, slices.ContainsFunc(logs, func(l string) bool {
			return strings.Contains(l, "Blocked script execution") && strings.Contains(l, "sandboxed")
		}), "the sandbox is what stopped it: %q", logs)
	})
}
