package main

// A person's own pages in Chromium: sign-in through NEAR's wallet connector
// with a wallet it finds in its manifest (wallet_fake_test.go), the header,
// sign-out, /me, agents and conversations.

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/oneclick/oneclicktest"
)

// awaitPromise makes Evaluate wait for the promise the expression is.
func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

// walletPetal is a petal whose /signin connector lists only the fake wallet.
func walletPetal(t *testing.T, env map[string]string) (*testPetal, *fakeWallet, *nearrpctest.Server, *oneclicktest.Fake) {
	t.Helper()
	rpc := nearrpctest.New(t)
	wallet := startFakeWallet(t)
	swaps := oneclicktest.New(t)
	t.Setenv("PETAL_WALLET_MANIFEST", wallet.URL+"/manifest.json")
	t.Setenv("PETAL_WALLET_HOSTS", wallet.URL)
	all := map[string]string{"PETAL_NEAR_RPC_MAINNET": rpc.URL, "PETAL_NEAR_RPC_TESTNET": rpc.URL,
		"PETAL_ONECLICK_URL": swaps.URL, "PETAL_NEAR_USD": "3"}
	for k, v := range env {
		all[k] = v
	}
	return startPetal(t, all), wallet, rpc, swaps
}

// signInWithTheConnector signs in on /signin through the connector's
// wallet list, on testnet, and lands on /me.
func signInWithTheConnector(t *testing.T, ctx context.Context, p *testPetal) {
	t.Helper()
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(p.URL+"/signin"),
		chromedp.SetValue("#network", "testnet", chromedp.ByID),
		chromedp.Click("#wallet-sign-in", chromedp.ByID),
		chromedp.WaitVisible(`.connect-item[data-type="petal-test-wallet"]`, chromedp.ByQuery),
		chromedp.Click(`.connect-item[data-type="petal-test-wallet"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#me", chromedp.ByID),
	))
}

func TestSignInThroughTheWalletConnector(t *testing.T) {
	p, wallet, rpc, swaps := walletPetal(t, nil)
	b := startBrowser(t, p.URL)
	b.declared = []string{wallet.URL}
	key, erin := goKey(t, rpc, "erin.testnet", "full")
	wallet.use(key, erin)

	t.Run("the connector's wallet signs in, the header names it, sign-out ends the session", func(t *testing.T) {
		ctx := b.tab(t)
		require.NoError(t, chromedp.Run(ctx, chromedp.Navigate(p.URL+"/signin"), chromedp.WaitVisible("#wallet-sign-in", chromedp.ByID)))
		screenshot(t, ctx, "signin")
		require.NoError(t, chromedp.Run(ctx,
			chromedp.SetValue("#network", "testnet", chromedp.ByID),
			chromedp.Click("#wallet-sign-in", chromedp.ByID),
			chromedp.WaitVisible(`.connect-item[data-type="petal-test-wallet"]`, chromedp.ByQuery),
		))
		screenshot(t, ctx, "signin-wallets")
		var who string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Click(`.connect-item[data-type="petal-test-wallet"]`, chromedp.ByQuery),
			chromedp.WaitVisible("#me", chromedp.ByID),
			chromedp.Text("#who", &who, chromedp.ByID),
		))
		assert.Equal(t, "erin.testnet testnet", who)
		assert.Equal(t, 1, wallet.signatures())
		cookie := browserSession(t, ctx)
		res, body := p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", cookie)
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Click("#sign-out", chromedp.ByID),
			chromedp.WaitVisible("#wallet-sign-in", chromedp.ByID),
		))
		res, _ = p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", cookie)
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "signed out: the session itself is gone, not only its cookie")
		assert.Empty(t, browserSession(t, ctx), "and the cookie is cleared")
		var signIn bool
		require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`!!document.querySelector('header a[href="/signin"]') && !document.getElementById('sign-out')`, &signIn)))
		assert.True(t, signIn, "the header offers sign-in again")
	})

	t.Run("/me shows the credit and a 1Click top-up's status changing until it is credited", func(t *testing.T) {
		ctx := b.tab(t)
		signInWithTheConnector(t, ctx, p)
		var address string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.WaitVisible("#credit-none", chromedp.ByID), // no credit yet
			waitFor(`document.querySelectorAll('#intent-token option').length === 3`),
			chromedp.SetValue("#intent-token", oneclicktest.ETH, chromedp.ByID),
			chromedp.SetValue("#intent-usd", "5", chromedp.ByID),
			chromedp.SendKeys("#intent-refund", "0x2527D02599Ba641c19FEa793cD0F9a6e8457C317", chromedp.ByID),
			chromedp.Click("#intent-form button", chromedp.ByQuery),
			waitFor(`document.getElementById('intent-address').value !== ''`),
			chromedp.Value("#intent-address", &address, chromedp.ByID),
		))
		swaps.Script(address, oneclicktest.Step{Status: "KNOWN_DEPOSIT_TX"}, oneclicktest.Step{Status: "PROCESSING"},
			oneclicktest.Step{Status: "SUCCESS", AmountOut: "5000000"})
		var seen []string
		require.NoError(t, chromedp.Run(ctx,
			waitFor(`document.getElementById('intent-state').textContent.startsWith('PROCESSING')`),
			chromedp.Evaluate(`document.getElementById('intent-state').textContent`, new(string)),
		))
		seen = append(seen, "PROCESSING")
		var credit string
		require.NoError(t, chromedp.Run(ctx,
			waitFor(`document.getElementById('intent-state').textContent.startsWith('SUCCESS')`),
			waitFor(`document.getElementById('credit').textContent.includes('Funded')`),
			chromedp.Text("#credit", &credit, chromedp.ByID),
		))
		seen = append(seen, "SUCCESS")
		assert.Equal(t, []string{"PROCESSING", "SUCCESS"}, seen)
		assert.Contains(t, credit, "$5")
		require.NoError(t, chromedp.Run(ctx, waitFor(`document.querySelector('#view-flower svg') !== null`)))
		screenshot(t, ctx, "me")
	})
}

// browserSession is the tab's session cookie as a Cookie header ("" for none).
func browserSession(t *testing.T, ctx context.Context) string {
	t.Helper()
	var cookies []*network.Cookie
	require.NoError(t, chromedp.Run(ctx, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		cookies, err = network.GetCookies().Do(ctx)
		return err
	})))
	for _, c := range cookies {
		if strings.HasSuffix(c.Name, "petal_session") {
			return c.Name + "=" + c.Value
		}
	}
	return ""
}
