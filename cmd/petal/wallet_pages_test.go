package main

// A person's own pages in Chromium: sign-in through NEAR's wallet connector
// with a wallet it finds in its manifest (wallet_fake_test.go), the header,
// sign-out, /me, agents and conversations.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/oneclick/oneclicktest"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/people"
)

// awaitPromise makes Evaluate wait for the promise the expression is.
func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

// walletPetal is a petal whose /signin connector lists only the fake wallet.
func walletPetal(t *testing.T, env map[string]string) (*testPetal, *fakeWallet, *nearrpctest.Server, *oneclicktest.Fake) {
	t.Helper()
	rpc := nearrpctest.New(t)
	wallet := startFakeWallet(t)
	swaps := oneclicktest.New(t)
	all := map[string]string{"PETAL_WALLET_MANIFEST": wallet.URL + "/manifest.json", "PETAL_WALLET_HOSTS": wallet.URL,
		"PETAL_NEAR_RPC_MAINNET": rpc.URL, "PETAL_NEAR_RPC_TESTNET": rpc.URL,
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
		network.ClearBrowserCookies(), // one browser: start each sign-in a visitor
		chromedp.Navigate(p.URL+"/signin"),
		chromedp.SetValue("#network", "testnet", chromedp.ByID),
		chromedp.Click("#wallet-sign-in", chromedp.ByID),
		chromedp.WaitVisible(`.connect-item[data-type="petal-test-wallet"]`, chromedp.ByQuery),
		chromedp.Click(`.connect-item[data-type="petal-test-wallet"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#me", chromedp.ByID),
	))
}

func TestSignInThroughTheWalletConnector(t *testing.T) {
	t.Parallel()
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

	t.Run("/me's usage list: each charge with NEAR AI's bill beside it, reconciled ones marked", func(t *testing.T) {
		// Two calls paid from erin's credit through the real ledger, the
		// older one reconciled with a bill below its charge.
		var person, session string
		require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT subject, id FROM sessions WHERE wallet_id IS NOT NULL ORDER BY created_at DESC LIMIT 1`).
			Scan(&person, &session)) // erin's: the only person signed in so far
		store := postgres.NewLedgerRepository(p.DB.DB)
		ledger := moneyapp.NewLedger(config.Config{}, store, postgres.NewPeopleRepository(p.DB.DB), memory.SystemClock{}, rand.Reader, nil)
		access := moneyapp.NewAccess(p.Cfg, postgres.NewSessionRepository(p.DB.DB), postgres.NewInviteRepository(p.DB.DB), store, memory.SystemClock{})
		payer, err := access.Gate(t.Context(), toolkit.Caller{Subject: person, Session: session})
		require.NoError(t, err)
		require.Equal(t, credit.PayPerson, payer.Kind, "her own credit pays")
		for i, cost := range []credit.Micros{20_000, 30_000} {
			h, err := ledger.Reserve(t.Context(), payer, "run_usage", "proc", 100_000)
			require.NoError(t, err)
			require.NoError(t, ledger.SettleCall(t.Context(), h, cost, credit.Usage{InferenceID: fmt.Sprintf("inf-%d", i), Model: "deepseek-ai/DeepSeek-V3.1",
				TokensIn: 1200 + i, TokensCached: 200, TokensOut: 80}, credit.CallContext{}))
			if i == 0 {
				require.NoError(t, ledger.Reconcile(t.Context(), h, 18_000))
			}
		}

		ctx := b.tab(t)
		require.NoError(t, chromedp.Run(ctx, chromedp.Navigate(p.URL+"/me"), waitFor(`document.querySelectorAll('#usage tbody tr').length === 2`)))
		var rows []struct {
			Reconciled bool     `json:"reconciled"`
			Cells      []string `json:"cells"`
			Title      string   `json:"title"`
		}
		var totals string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Evaluate(`Array.from(document.querySelectorAll('#usage tbody tr')).map(tr => ({
				reconciled: tr.classList.contains('is-reconciled'),
				cells: Array.from(tr.cells).map(c => c.textContent.trim()),
				title: (tr.querySelector('time') || {}).title || ''}))`, &rows),
			chromedp.Text("#usage-totals", &totals, chromedp.ByID),
		))
		require.Len(t, rows, 2)
		newest, older := rows[0], rows[1]
		assert.False(t, newest.Reconciled, "newest first: the call not billed yet")
		assert.Equal(t, []string{"deepseek-ai/DeepSeek-V3.1", "1201 / 200 / 80", "$0.03", "not billed yet", "waiting for the bill"}, newest.Cells[1:])
		assert.True(t, older.Reconciled)
		assert.Equal(t, "deepseek-ai/DeepSeek-V3.1", older.Cells[1])
		assert.Equal(t, "$0.018", older.Cells[3], "charged: its $0.02 settled down to the bill")
		assert.Equal(t, "$0.018", older.Cells[4], "NEAR AI's bill beside it")
		assert.Equal(t, "✓ reconciled $0.002 given back with the bill", older.Cells[5])
		assert.NotEmpty(t, newest.Title, "the date in people's words, the exact time on hover")
		assert.Regexp(t, `^\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC$`, newest.Cells[0], "not an ISO instant")
		assert.Equal(t, "2 calls, $0.048 charged; 1 reconciled with NEAR AI's bill of $0.018.", totals)
		if os.Getenv("PETAL_PAGE_SCREENSHOTS") == "1" { // the list is below the fold: the whole page
			var png []byte
			require.NoError(t, chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)))
			require.NoError(t, os.WriteFile(filepath.Join("..", "..", "docs", "pages", "me-usage.png"), png, 0o644))
		}
	})

	t.Run("one's conversations on /make, newest first and paged, each opening at its run; New chat", func(t *testing.T) {
		var person string
		require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT person_id FROM wallets ORDER BY created_at LIMIT 1`).Scan(&person))
		for i := range 12 {
			_, err := p.DB.Pool.Exec(t.Context(), `INSERT INTO runs (id, owner, status, model, title, updated_at)
VALUES ($1, $2, 'done', 'recorded', $3, now() - make_interval(mins => $4))`, fmt.Sprintf("run_%032x", i), person, fmt.Sprintf("Chat %02d", i), 100-i)
			require.NoError(t, err)
		}
		ctx := b.tab(t)
		signInWithTheConnector(t, ctx, p)
		var titles []string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(p.URL+"/make"),
			waitFor(`document.querySelectorAll('#conversation-list li').length === 10`),
			chromedp.Click("#conversations-more", chromedp.ByID),
			waitFor(`document.querySelectorAll('#conversation-list li').length === 12`),
			chromedp.Evaluate(`Array.from(document.querySelectorAll('#conversation-list li a')).map(a => a.textContent)`, &titles),
		))
		require.Len(t, titles, 12)
		assert.Equal(t, "Chat 11", titles[0], "newest first")
		assert.Equal(t, "Chat 00", titles[11])
		var more bool
		require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`document.getElementById('conversations-more').hidden`, &more)))
		assert.True(t, more, "no third page")
		screenshot(t, ctx, "make-conversations")
		var h1, current string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Click(`#conversation-list a[href="/make?run=run_00000000000000000000000000000005"]`, chromedp.ByQuery),
			chromedp.WaitVisible("#new-chat", chromedp.ByID),
			chromedp.Text("#run-title", &h1, chromedp.ByID),
			waitFor(`document.querySelector('#conversation-list a[aria-current="page"]') !== null`),
			chromedp.Text(`#conversation-list a[aria-current="page"]`, &current, chromedp.ByQuery),
		))
		assert.Equal(t, "Chat 05", h1)
		assert.Equal(t, "Chat 05", current)
		var location string
		require.NoError(t, chromedp.Run(ctx, chromedp.Click("#new-chat", chromedp.ByID), chromedp.WaitVisible("#ask", chromedp.ByID), chromedp.Location(&location)))
		assert.Equal(t, p.URL+"/make", location)
	})

	t.Run("a second wallet attached from /signin?attach=1; one bound to someone else refused, nothing merged", func(t *testing.T) {
		frankKey, frank := goKey(t, rpc, "frank.testnet", "full")
		gretaKey, greta := goKey(t, rpc, "greta.testnet", "full")
		// greta is someone already.
		res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", signChallengeFor(t, p, gretaKey, greta)))
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		ctx := b.tab(t, "status of 409")
		wallet.use(key, erin)
		signInWithTheConnector(t, ctx, p)
		attach := func(k ed25519.PrivateKey, account string) {
			wallet.use(k, account)
			require.NoError(t, chromedp.Run(ctx,
				chromedp.Navigate(p.URL+"/signin?attach=1"),
				chromedp.SetValue("#network", "testnet", chromedp.ByID),
				chromedp.Click("#wallet-sign-in", chromedp.ByID),
				chromedp.WaitVisible(`.connect-item[data-type="petal-test-wallet"]`, chromedp.ByQuery),
				chromedp.Click(`.connect-item[data-type="petal-test-wallet"]`, chromedp.ByQuery),
			))
		}
		attach(frankKey, frank)
		var wallets []string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.WaitVisible("#me", chromedp.ByID),
			waitFor(`document.querySelectorAll('#wallets li').length === 2`),
			chromedp.Evaluate(`Array.from(document.querySelectorAll('#wallets li strong')).map(s => s.textContent)`, &wallets),
		))
		assert.Equal(t, []string{"erin.testnet", "frank.testnet"}, wallets)
		attach(gretaKey, greta)
		var refusal string
		require.NoError(t, chromedp.Run(ctx,
			waitFor(`document.getElementById('wallet-status').className.includes('bad')`),
			chromedp.Text("#wallet-status", &refusal, chromedp.ByID),
		))
		assert.Contains(t, refusal, "already bound to another person")
		screenshot(t, ctx, "signin-attach-refused")
		var n int
		require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(DISTINCT person_id) FROM wallets`).Scan(&n))
		assert.Equal(t, 2, n, "erin (with frank) and greta, still two people")
	})

	t.Run("a wallet that signs by redirect comes back to /signin and signs in", func(t *testing.T) {
		ctx := b.tab(t)
		var pending struct{ Message, Nonce, Recipient string }
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(p.URL+"/signin"),
			chromedp.WaitVisible("#signin", chromedp.ByID),
			// What the page keeps before it sends the person to such a wallet.
			chromedp.Evaluate(`window.petalAPI.post('/api/v1/auth/challenge').then(ch => {
				const pending = { mode: 'signin', network: 'testnet', message: ch.message, nonce: ch.nonce, recipient: ch.recipient, callback: null };
				sessionStorage.setItem('petal.signin.pending', JSON.stringify(pending));
				return pending;
			})`, &pending, awaitPromise),
		))
		nonce, err := base64.StdEncoding.DecodeString(pending.Nonce)
		require.NoError(t, err)
		callback := p.URL + "/signin"
		h := people.Nep413Hash(people.Nep413Payload(pending.Message, [32]byte(nonce), pending.Recipient, &callback))
		back := url.Values{"accountId": {erin}, "publicKey": {people.FormatPublicKey(key.Public().(ed25519.PublicKey))},
			"signature": {base64.StdEncoding.EncodeToString(ed25519.Sign(key, h[:]))}}
		var who string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(p.URL+"/make"),
			chromedp.Navigate(callback+"#"+back.Encode()),
			chromedp.WaitVisible("#me", chromedp.ByID),
			chromedp.Text("#who", &who, chromedp.ByID),
		))
		assert.Equal(t, "erin.testnet testnet", who)
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

// signChallengeFor is signChallenge on a site without PETAL_API (recipient
// localhost), from no browser.
func signChallengeFor(t *testing.T, p *testPetal, priv ed25519.PrivateKey, account string) map[string]string {
	t.Helper()
	res, body := p.do(t, http.MethodPost, "/api/v1/auth/challenge", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var ch struct{ Nonce, Message, Recipient string }
	require.NoError(t, json.Unmarshal([]byte(body), &ch))
	nonce, err := base64.StdEncoding.DecodeString(ch.Nonce)
	require.NoError(t, err)
	h := people.Nep413Hash(people.Nep413Payload(ch.Message, [32]byte(nonce), ch.Recipient, nil))
	return map[string]string{"type": "nep413", "account_id": account, "public_key": people.FormatPublicKey(priv.Public().(ed25519.PublicKey)),
		"signature": base64.StdEncoding.EncodeToString(ed25519.Sign(priv, h[:])), "message": ch.Message, "nonce": ch.Nonce, "recipient": ch.Recipient}
}
