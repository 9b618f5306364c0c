package main

// The pages in a real browser: Debian's chromium, driven over the DevTools
// protocol by chromedp, started by the test itself.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/oneclick/oneclicktest"
)

// chromium is one headless chromium for a test; each page gets a tab that
// records its console errors and every request it makes.
type chromium struct {
	ctx    context.Context
	origin string
	// declared are the other origins a tab may reach: the wallet
	// connector's declared hosts, on /signin.
	declared []string
}

func startBrowser(t *testing.T, origin string) *chromium {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is missing: the page tests need it (.ci/run installs it with apt-get)")
		}
		t.Skip("chromium is missing: apt-get install -y chromium")
	}
	// Not t.TempDir: Chromium's helper processes may still write into the
	// profile for a moment after the browser is told to stop, and TempDir's
	// own clean-up fails the test on a directory that isn't empty yet.
	profile, err := os.MkdirTemp("", "petal-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		// Without these Chromium reaches for Google's services, which this
		// machine refuses, and the page tests would count those requests.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(800, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("the browser profile %s could not be removed", profile)
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return &chromium{ctx: ctx, origin: origin}
}

// tab opens a tab for one subtest; when the subtest ends it fails on any
// console error, uncaught exception, or request that left the origin, but
// the ones that hold an allowed text (a page answered 404 on purpose).
func (b *chromium) tab(t *testing.T, allowed ...string) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx)
	var mu sync.Mutex
	var problems, away []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			u := ev.Request.URL
			if !b.sameOrDeclared(u) {
				away = append(away, u)
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError || ev.Type == runtime.APITypeWarning {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				problems = append(problems, "console."+string(ev.Type)+": "+strings.Join(parts, " "))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Error())
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.LevelError || ev.Entry.Level == cdplog.LevelWarning {
				problems = append(problems, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		}
	})
	if err := chromedp.Run(ctx, network.Enable(), cdplog.Enable(), runtime.Enable()); err != nil {
		t.Fatal(err)
	}
	tctx, tcancel := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() {
		tcancel()
		cancel()
		mu.Lock()
		defer mu.Unlock()
		problems = slices.DeleteFunc(problems, func(p string) bool {
			return slices.ContainsFunc(allowed, func(a string) bool { return strings.Contains(p, a) })
		})
		assert.Empty(t, problems, "console errors")
		assert.Empty(t, away, "requests that left the origin")
	})
	return tctx
}

// sameOrDeclared reports whether a tab may ask for u: the server's origin,
// or one the wallet connector declares.
func (b *chromium) sameOrDeclared(u string) bool {
	if strings.HasPrefix(u, "data:") {
		return true // a picture in the page itself (a wallet's icon): nothing is asked of anyone
	}
	for _, o := range append([]string{b.origin}, b.declared...) {
		if u == o || strings.HasPrefix(u, o+"/") {
			return true
		}
	}
	return false
}

// screenshot keeps a small PNG of the page under docs/pages/ when
// PETAL_PAGE_SCREENSHOTS=1.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("PETAL_PAGE_SCREENSHOTS") != "1" {
		return
	}
	var png []byte
	require.NoError(t, chromedp.Run(ctx, chromedp.CaptureScreenshot(&png)))
	require.NoError(t, os.WriteFile(filepath.Join("..", "..", "docs", "pages", name+".png"), png, 0o644))
}

// waitFor polls a JavaScript condition until it holds (or the tab's deadline).
func waitFor(expr string) chromedp.Action {
	return chromedp.Poll(expr, nil, chromedp.WithPollingInterval(50*time.Millisecond))
}

func TestPagesInABrowser(t *testing.T) {
	fake := nearrpctest.New(t)
	wallet := startFakeWallet(t)
	p := startPetal(t, map[string]string{"PETAL_WALLET_MANIFEST": wallet.URL + "/manifest.json", "PETAL_WALLET_HOSTS": wallet.URL,
		"PETAL_RECORDED_PACE_MS": "1000", "PETAL_ONECLICK_URL": oneclicktest.New(t).URL,
		"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	// A drawing on the map whose name is markup.
	const hostile = `<img src=x onerror="document.title='pwned'">`
	record, id, _ := aFlower(t, "alice.near", hostile, 4)
	publishElsewhere(t, fake, "alice.near", id, record)
	if _, err := p.Svc.MapSync.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, p.URL)
	b.declared = []string{wallet.URL}

	t.Run("a recorded chat on /make draws its flower", func(t *testing.T) {
		ctx := b.tab(t)
		var location string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(p.URL+"/"), // the front door leads to /make
			chromedp.SendKeys("#ask", "draw the marketing DAO", chromedp.ByID),
			chromedp.Click("#send", chromedp.ByID),
			// The picture itself (the legend's swatches are small SVGs too).
			chromedp.WaitVisible(`.flower svg[aria-labelledby]`, chromedp.ByQuery),
			chromedp.WaitVisible("li.ev-done", chromedp.ByQuery),
			chromedp.Location(&location),
		))
		assert.Contains(t, location, "/make?run=")
		var you string
		require.NoError(t, chromedp.Run(ctx, chromedp.Text("li.ev-you", &you, chromedp.ByQuery)))
		assert.Contains(t, you, "draw the marketing DAO")
		// The flower's text alternative: its own title and description.
		var named string
		require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`(() => {
			const svg = document.querySelector('.flower svg[aria-labelledby]');
			return svg.getAttribute('aria-labelledby').split(' ').map(id => document.getElementById(id).textContent).join(' | ');
		})()`, &named)))
		assert.Contains(t, named, "Members of marketing.sputnik-dao.near | All 6 accounts")
		require.NoError(t, chromedp.Run(ctx, chromedp.ScrollIntoView(".flower", chromedp.ByQuery)))
		screenshot(t, ctx, "make")

		// Continue the conversation: the second chat's events follow the
		// first's (a recorded follow-up says it can only replay).
		var yous, flowers int
		var seqs []int
		wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
		defer wcancel()
		err := chromedp.Run(wctx,
			chromedp.WaitEnabled("#send", chromedp.ByID),
			chromedp.SendKeys("#ask", "and once more", chromedp.ByID),
			chromedp.Click("#send", chromedp.ByID),
			waitFor(`document.querySelectorAll('li.ev-done').length === 2 || document.getElementById('status').classList.contains('bad')`),
			chromedp.Evaluate(`document.querySelectorAll('li.ev-you').length`, &yous),
			chromedp.Evaluate(`document.querySelectorAll('li.ev-flower').length`, &flowers),
			chromedp.Evaluate(`Array.from(document.querySelectorAll('#log li[data-seq]')).map(li => +li.dataset.seq)`, &seqs),
		)
		if err != nil {
			var html string
			_ = chromedp.Run(ctx, chromedp.OuterHTML("#make", &html, chromedp.ByID))
			t.Fatalf("%v\n%s", err, html[max(0, len(html)-2500):])
		}
		var status string
		require.NoError(t, chromedp.Run(ctx, chromedp.Text("#status", &status, chromedp.ByID)))
		require.Empty(t, status, "the second chat")
		assert.Equal(t, 2, yous)
		assert.Equal(t, 1, flowers, "a recorded follow-up answers in words")
		runID := location[strings.Index(location, "run=")+len("run="):]
		assert.Equal(t, storedSeqs(t, p, runID), seqs, "each stored event once, in order, across both chats")
	})

	t.Run("stop ends a run from its page", func(t *testing.T) {
		ctx := b.tab(t)
		var errText string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(p.URL+"/make"),
			chromedp.SendKeys("#ask", "draw it", chromedp.ByID),
			chromedp.Click("#send", chromedp.ByID),
			chromedp.WaitVisible("#stop", chromedp.ByID),
			chromedp.WaitVisible("li.ev-tool_call", chromedp.ByQuery),
			chromedp.Click("#stop", chromedp.ByID),
			chromedp.WaitVisible("li.ev-done", chromedp.ByQuery),
			chromedp.WaitNotVisible("#stop", chromedp.ByID),
			chromedp.Text("li.ev-error", &errText, chromedp.ByQuery),
		))
		assert.NotEmpty(t, errText, "the stopped error is shown")
	})

	// A run started elsewhere, followed on its page, reloaded while it runs.
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	var started struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &started))

	t.Run("reloading mid-run shows every event once", func(t *testing.T) {
		ctx := b.tab(t)
		var ended bool
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(p.URL+"/make?run="+started.RunID),
			chromedp.WaitVisible("li.ev-tool_call", chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelector('li.ev-done') !== null`, &ended),
		))
		require.False(t, ended, "the run ended before the reload (PETAL_RECORDED_PACE_MS too fast for this machine?)")
		var seqs []int
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Reload(),
			chromedp.WaitVisible("li.ev-done", chromedp.ByQuery),
			chromedp.WaitReady(`#make[data-caught-up="yes"]`, chromedp.ByQuery), // the live marker came
			chromedp.Evaluate(`Array.from(document.querySelectorAll('#log li[data-seq]')).map(li => +li.dataset.seq)`, &seqs),
		))
		want := storedSeqs(t, p, started.RunID)
		require.NotEmpty(t, want)
		assert.Equal(t, want, seqs, "each stored event once, in order")
	})

	t.Run("a /d/ link lands on the drawn draft", func(t *testing.T) {
		_, runBody := p.do(t, http.MethodGet, "/api/v1/agent/runs/"+started.RunID, "")
		var run struct {
			Events []struct {
				Kind string          `json:"event"`
				Data json.RawMessage `json:"data"`
			} `json:"events"`
		}
		require.NoError(t, json.Unmarshal([]byte(runBody), &run))
		var viewURL string
		for _, e := range run.Events {
			if e.Kind == "flower" {
				var f struct {
					ViewURL string `json:"view_url"`
				}
				require.NoError(t, json.Unmarshal(e.Data, &f))
				viewURL = f.ViewURL
			}
		}
		require.True(t, strings.HasPrefix(viewURL, "/d/"), runBody)
		ctx := b.tab(t)
		var location, title, link string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(p.URL+viewURL),
			chromedp.WaitVisible("#flower svg", chromedp.ByQuery),
			chromedp.Location(&location),
			chromedp.Text("h1", &title, chromedp.ByQuery),
			chromedp.Value("#draft-link", &link, chromedp.ByID),
		))
		assert.Contains(t, location, p.URL+"/draft?spec=")
		assert.NotEmpty(t, title)
		assert.Equal(t, p.URL+viewURL, link, "the draft link to copy")
		screenshot(t, ctx, "draft")
		// Readable at 320 px: nothing wider than the screen.
		var wide bool
		require.NoError(t, chromedp.Run(ctx,
			emulation.SetDeviceMetricsOverride(320, 640, 1, true),
			emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}),
			chromedp.Evaluate(`document.documentElement.scrollWidth > 320`, &wide),
		))
		assert.False(t, wide, "the draft page scrolls sideways at 320 px")
		screenshot(t, ctx, "draft-320-dark")
	})

	t.Run("the gallery loads its tiles and shows a hostile name as text", func(t *testing.T) {
		ctx := b.tab(t)
		var name, title string
		var tiles int
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(p.URL+"/map"),
			chromedp.WaitVisible(".gallery .tile img", chromedp.ByQuery),
			waitFor(`Array.from(document.querySelectorAll('.gallery img')).every(i => i.complete && i.naturalWidth > 0)`),
			chromedp.Evaluate(`document.querySelectorAll('.gallery .tile').length`, &tiles),
			chromedp.Text(".gallery .tile-name", &name, chromedp.ByQuery),
			chromedp.Title(&title),
		))
		assert.Equal(t, 1, tiles)
		assert.Equal(t, hostile, name, "the name shows as text")
		assert.NotEqual(t, "pwned", title)
		screenshot(t, ctx, "map")
		var drawings int
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Click(".gallery .tile a", chromedp.ByQuery),
			chromedp.WaitVisible(".reading .tile img", chromedp.ByQuery),
			waitFor(`Array.from(document.querySelectorAll('.reading img')).every(i => i.complete && i.naturalWidth > 0)`),
			chromedp.Evaluate(`document.querySelectorAll('.reading .tile').length`, &drawings),
			chromedp.Title(&title),
		))
		assert.Equal(t, 1, drawings)
		assert.NotEqual(t, "pwned", title)
		screenshot(t, ctx, "map-one")
	})

	t.Run("connect shows how to bring an agent and takes an invite", func(t *testing.T) {
		invite := mintInvite(t, p, "0.05")
		ctx := b.tab(t)
		var command, held string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(p.URL+"/connect"),
			chromedp.WaitVisible(`main a[href="/signin"]`, chromedp.ByQuery),
			chromedp.Value("#mcp-http", &command, chromedp.ByID),
		))
		assert.Equal(t, "claude mcp add --transport http petal "+p.URL+"/mcp", command)
		screenshot(t, ctx, "connect")
		require.NoError(t, chromedp.Run(ctx,
			chromedp.SendKeys("#invite", invite.Token, chromedp.ByID),
			chromedp.Click("#invite-form button", chromedp.ByQuery),
			waitFor(`document.getElementById('invite-status').textContent !== ''`),
			chromedp.Text("#invite-status", &held, chromedp.ByID),
		))
		assert.Contains(t, held, "active")
	})

	// Last: from here on the browser is signed in.
	t.Run("the connector's wallet signs in; the person makes an agent link, sees it listed and revokes it", func(t *testing.T) {
		key, erin := goKey(t, fake, "erin.testnet", "full")
		wallet.use(key, erin)
		ctx := b.tab(t)
		signInWithTheConnector(t, ctx, p)
		var link string
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Navigate(p.URL+"/connect"),
			chromedp.WaitVisible("#agent-links-none", chromedp.ByID), // none yet
			chromedp.Click("#agent-link-form button", chromedp.ByQuery),
			waitFor(`document.getElementById('agent-link').textContent !== ''`),
			chromedp.Text("#agent-link", &link, chromedp.ByID),
			waitFor(`document.querySelectorAll('#agent-links li').length === 1`),
			chromedp.WaitVisible("#signed-in", chromedp.ByID),
		))
		token := link[strings.Index(link, "petal_agent_"):]
		res, body := p.do(t, http.MethodPost, "/api/v1/agents/wait", `{"as":"claude","wait_s":1}`, "Authorization", "Bearer "+token)
		require.Equal(t, http.StatusOK, res.StatusCode, "the new link waits: %s", body)
		screenshot(t, ctx, "connect-signed-in")
		require.NoError(t, chromedp.Run(ctx,
			chromedp.Click("#agent-links li button", chromedp.ByQuery),
			waitFor(`document.querySelectorAll('#agent-links li').length === 0`),
		))
		res, body = p.do(t, http.MethodPost, "/api/v1/agents/wait", `{"as":"claude","wait_s":1}`, "Authorization", "Bearer "+token)
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "the revoked link's next wait: %s", body)
	})
}

// storedSeqs is the seqs of a run's stored events that its page shows (all
// but run, whose place is the person's message).
func storedSeqs(t *testing.T, p *testPetal, runID string) []int {
	t.Helper()
	_, body := p.do(t, http.MethodGet, "/api/v1/agent/runs/"+runID, "")
	var run struct {
		Events []struct {
			Seq  int    `json:"seq"`
			Kind string `json:"event"`
		} `json:"events"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &run), body)
	var seqs []int
	for _, e := range run.Events {
		if e.Kind != "run" {
			seqs = append(seqs, e.Seq)
		}
	}
	return seqs
}

func TestPagesCarryAStrictPolicy(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	for _, path := range []string{"/make", "/connect", "/map", "/make?run=nobody"} {
		res, body := p.do(t, http.MethodGet, path, "")
		csp := res.Header.Get("Content-Security-Policy")
		assert.Contains(t, csp, "default-src 'self'", path)
		assert.Contains(t, csp, "frame-ancestors 'none'", path)
		assert.NotContains(t, csp, "unsafe-inline", path)
		assert.Equal(t, "no-store", res.Header.Get("Cache-Control"), path)
		assert.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), "text/html"), path)
		assert.NotContains(t, body, "<script>", "no inline script: %s", path)
		assert.NotContains(t, body, "style=", "no inline style: %s", path)
	}
	// /signin alone runs the wallet connector: its scripts by nonce, its
	// wallets' hosts, and nothing inline besides styles.
	res, body := p.do(t, http.MethodGet, "/signin", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	csp := res.Header.Get("Content-Security-Policy")
	nonce := csp[strings.Index(csp, "'nonce-")+7:]
	nonce = nonce[:strings.Index(nonce, "'")]
	assert.Contains(t, body, `data-nonce="`+nonce+`"`)
	assert.Contains(t, csp, "script-src 'self' 'nonce-"+nonce+"';", "no unsafe-inline script")
	assert.Contains(t, csp, "connect-src 'self' https://raw.githubusercontent.com ", "the connector's manifest")
	assert.Contains(t, csp, "frame-ancestors 'none'")
	assert.NotContains(t, body, "<script>", "no inline script")
	res2, _ := p.do(t, http.MethodGet, "/signin", "")
	assert.NotEqual(t, csp, res2.Header.Get("Content-Security-Policy"), "a fresh nonce each time")
	res, _ = p.do(t, http.MethodGet, "/me", "")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "/me is a signed-in person's")
	assert.NotContains(t, res.Header.Get("Content-Security-Policy"), "unsafe-inline")

	res, body = p.do(t, http.MethodGet, "/make?run=nobody", "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Contains(t, body, "Not found")

	// A spec that cannot be drawn lists its problems, escaped.
	res, body = p.do(t, http.MethodGet, "/draft?spec="+url.QueryEscape(`{"schema":"flower-spec/v1","title":"<b>x</b>"}`), "")
	assert.Equal(t, http.StatusUnprocessableEntity, res.StatusCode, body)
	assert.Contains(t, body, `class="problems"`)
	assert.NotContains(t, body, "<b>x</b>")
	res, _ = p.do(t, http.MethodGet, "/draft", "")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)

}

func TestMakePageHidesSomeoneElsesRun(t *testing.T) {
	fake := nearaitest.New(t, nearaitest.Completion("c1", "deepseek-ai/DeepSeek-V3.1", "Hello."))
	p := startPetal(t, modelEnv(fake))
	cookie, _ := inviteSession(t, p, "0.05")
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", `{"messages":[{"role":"user","content":"hi"}]}`,
		"Accept", "application/json", "Cookie", cookie)
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	var started struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	res, body = p.do(t, http.MethodGet, "/make?run="+started.RunID, "", "Cookie", cookie)
	assert.Equal(t, http.StatusOK, res.StatusCode, "its owner's page")
	assert.Contains(t, body, `data-run="`+started.RunID+`"`)
	res, body = p.do(t, http.MethodGet, "/make?run="+started.RunID, "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "someone else's: the same as none")
	assert.Contains(t, body, "Not found")
	assert.NotContains(t, body, "data-run=")
}

// On a model (the fake), /make carries the session cookie the chat opens and
// passes the Origin check, and the approval's Yes chip continues the run.
func TestMakePageOnAModelAsksBeforeReading(t *testing.T) {
	t.Parallel()
	const model = "deepseek-ai/DeepSeek-V3.1"
	read := nearaitest.Call{Name: "get_snapshot", Args: freshMarketing}
	fake := nearaitest.New(t,
		nearaitest.Completion("a1", model, "", read),
		nearaitest.Completion("a2", model, "", read),
		nearaitest.Completion("a3", model, "Shall I read the Marketing DAO's members fresh from the chain?"),
		nearaitest.Completion("b1", model, "Then I will."),
	)
	p := startPetal(t, modelEnv(fake))
	b := startBrowser(t, p.URL)
	ctx := b.tab(t)
	var yous []string
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(p.URL+"/make"),
		chromedp.SendKeys("#ask", "what kinds of DAOs live on NEAR?", chromedp.ByID),
		chromedp.Click("#send", chromedp.ByID),
		chromedp.WaitVisible("li.ev-approval_required button.chip", chromedp.ByQuery),
		chromedp.WaitVisible("li.ev-done", chromedp.ByQuery),
		chromedp.Click("li.ev-approval_required button.chip", chromedp.ByQuery), // Yes
		waitFor(`document.querySelectorAll('li.ev-done').length === 2`),
		chromedp.Evaluate(`Array.from(document.querySelectorAll('li.ev-you')).map(li => li.textContent)`, &yous),
	))
	assert.Equal(t, []string{"You: what kinds of DAOs live on NEAR?", "You: Yes"}, yous)
	screenshot(t, ctx, "make-asks")
}
