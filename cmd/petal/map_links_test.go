package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
)

// Every link the map hands out opens, in the browser: a card's drawing
// opens at its view_url with its picture, legend and figures, whether it was
// published here, synced from SocialDB or shipped with a public site.
func TestEveryMapLinkOpens(t *testing.T) {
	t.Parallel()
	opens := func(t *testing.T, p *testPetal, want int) {
		t.Helper()
		m := getMap(t, p, "/api/v1/map")
		require.Len(t, m.Views, want, "the views on the map")
		b := startBrowser(t, p.URL)
		for _, v := range m.Views[:min(len(m.Views), 3)] {
			var viewURL string
			_, body := p.do(t, http.MethodGet, "/api/v1/map/views", "")
			require.Contains(t, body, `"view_url":"/d/`+v.SHA+`"`)
			viewURL = "/d/" + v.SHA
			ctx := b.tab(t)
			var legend, figures int
			require.NoError(t, chromedp.Run(ctx,
				chromedp.Navigate(p.URL+viewURL),
				chromedp.WaitVisible("#flower svg path.petal", chromedp.ByQuery),
				chromedp.Evaluate(`document.querySelectorAll('.legend li').length`, &legend),
				chromedp.Evaluate(`document.querySelectorAll('.figures dt').length`, &figures),
			))
			assert.Positive(t, legend, "%s: the legend", viewURL)
			assert.Positive(t, figures, "%s: the reading's figures", viewURL)
		}
	}

	t.Run("synced from SocialDB", func(t *testing.T) {
		fake := nearrpctest.New(t)
		p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
		record, id, _ := aFlower(t, "alice.near", "Synced", 5)
		publishElsewhere(t, fake, "alice.near", id, record)
		_, err := p.Svc.MapSync.Run(t.Context())
		require.NoError(t, err)
		opens(t, p, 1)
	})

	t.Run("published here", func(t *testing.T) {
		x := newPublishing(t)
		a := x.prepare(t, "Published here")
		x.send(t, a)
		res, body := x.publish(t, "alice.testnet", a.ID)
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		opens(t, x.p, 1)
	})

	t.Run("shipped with a public site", func(t *testing.T) {
		p := startPetal(t, map[string]string{"PETAL_PUBLIC": "1"})
		m := getMap(t, p, "/api/v1/map")
		require.NotEmpty(t, m.Views, "a public site ships its map")
		opens(t, p, len(m.Views))
	})
}

// A map card's tile is the flower alone, drawn for a light or a dark page:
// the gallery's <picture> loads the dark one on a dark page.
func TestTilesAreDrawnForTheirPage(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	record, id, _ := aFlower(t, "alice.near", "A tile", 5)
	publishElsewhere(t, fake, "alice.near", id, record)
	_, err := p.Svc.MapSync.Run(t.Context())
	require.NoError(t, err)
	picture := getMap(t, p, "/api/v1/map").Views[0].Picture
	res, tile := p.do(t, http.MethodGet, picture+"&form=tile&scheme=dark", "")
	require.Equal(t, http.StatusOK, res.StatusCode, tile)
	assert.Contains(t, tile, `viewBox="0 0 400 400"`)
	assert.Contains(t, tile, `fill="#1E2026"`, "the dark page's ground")
	assert.NotContains(t, tile, "<text", "no words to shrink: the card says them")
	res, body := p.do(t, http.MethodGet, picture+"&form=poster", "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)

	b := startBrowser(t, p.URL)
	for _, scheme := range []string{"light", "dark"} {
		ctx := b.tab(t)
		var src string
		require.NoError(t, chromedp.Run(ctx,
			emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}),
			chromedp.Navigate(p.URL+"/map"),
			waitFor(`Array.from(document.querySelectorAll('.gallery img')).every(i => i.complete && i.naturalWidth > 0)`),
			chromedp.Evaluate(`document.querySelector('.gallery img').currentSrc`, &src),
		))
		assert.Contains(t, src, "form=tile", scheme)
		assert.Equal(t, scheme == "dark", strings.Contains(src, "scheme=dark"), scheme)
		if scheme == "dark" {
			screenshot(t, ctx, "map-dark")
		}
	}
}
