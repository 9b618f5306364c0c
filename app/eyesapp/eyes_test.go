package eyesapp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/brave"
	"github.com/petal-near/petal/adapters/brave/bravetest"
	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/nearrpc"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/webpage"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/eyesapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// eyes is the reading tools over the real adapters, pointed at fakes at the
// network edge, called through a registry as every door calls them.
func eyes(t *testing.T, near string, search ports.WebSearch) *toolkit.Registry {
	t.Helper()
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	chain := nearrpc.New(nearrpc.Options{URLs: map[string]string{snapshots.Mainnet: near, snapshots.Testnet: near}, Backoff: time.Millisecond, CallTimeout: 10 * time.Second})
	if search == nil {
		search = brave.New("", "", nil)
	}
	svc := eyesapp.NewEyesService(chain, webpage.New(webpage.Options{AllowLoopback: true}), search, memory.SystemClock{})
	return toolkit.NewRegistry(cfg, nil, []toolkit.ToolSet{svc, eyesapp.NewBrainService()})
}

func call(t *testing.T, reg *toolkit.Registry, tool, input string) (any, error) {
	t.Helper()
	return reg.Call(t.Context(), tool, toolkit.Call{Input: json.RawMessage(input), Caller: toolkit.Caller{Door: toolkit.DoorHTTP, Address: "test"}})
}

func TestReadChainAgainstTheFakeNode(t *testing.T) {
	fake := nearrpctest.New(t)
	reg := eyes(t, fake.URL, nil)

	out, err := call(t, reg, eyesapp.ToolReadChain, `{"network":"near:mainnet","contract":"marketing.sputnik-dao.near","method":"get_config"}`)
	require.NoError(t, err)
	a := out.(eyesapp.ChainAnswer)
	assert.Equal(t, "json", a.Encoding)
	assert.JSONEq(t, `{"name":"marketing","purpose":"Marketing guild of the NEAR community: campaigns, events and content.","metadata":""}`, string(a.Result))
	assert.Equal(t, eyesapp.ChainBlock{Height: nearrpctest.RecordedHeight, Hash: nearrpctest.RecordedHash}, a.Block)
	assert.Equal(t, []string{}, a.Logs)

	out, err = call(t, reg, eyesapp.ToolReadChain, `{"network":"mainnet","contract":"usdt.tether-token.near","method":"ft_balance_of","args":{"account_id":"alice.near"}}`)
	require.NoError(t, err)
	assert.Equal(t, `"1250000000"`, string(out.(eyesapp.ChainAnswer).Result), "arguments sent, a JSON string answered")

	// Bytes that aren't JSON come back as base64.
	out, err = call(t, reg, eyesapp.ToolReadChain, `{"network":"near:mainnet","contract":"blob.near","method":"get_state"}`)
	require.NoError(t, err)
	a = out.(eyesapp.ChainAnswer)
	assert.Equal(t, "base64", a.Encoding)
	assert.Equal(t, `"AQAAAP/+cGV0YWw="`, string(a.Result))
	assert.Equal(t, 11, a.Bytes)

	// A contract that panics says so in its own words.
	_, err = call(t, reg, eyesapp.ToolReadChain, `{"network":"near:mainnet","contract":"broken.sputnik-dao.near","method":"get_last_proposal_id"}`)
	e, ok := errs.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errs.CannotRead, e.Code)
	assert.Contains(t, e.Message, "Proposals are corrupted")
	_, err = call(t, reg, eyesapp.ToolReadChain, `{"network":"near:mainnet","contract":"broken.sputnik-dao.near","method":"get_policy"}`)
	assert.Contains(t, err.Error(), "Policy is corrupted", "the older result-with-error shape too")

	_, err = call(t, reg, eyesapp.ToolReadChain, `{"network":"near:mainnet","contract":"nope.sputnik-dao.near","method":"get_config"}`)
	assert.True(t, errs.Is(err, errs.NotFound), "%v", err)

	// An answer over 1 MiB is refused, not read whole.
	big := make([]byte, eyesapp.MaxChainAnswer+1)
	for i := range big {
		big[i] = 'x'
	}
	rec, err := nearrpctest.FromSource(nearrpctest.Source{Contract: "huge.near", Method: "get_everything", ResultBytes: big})
	require.NoError(t, err)
	fake.Add(rec)
	_, err = call(t, reg, eyesapp.ToolReadChain, `{"network":"near:mainnet","contract":"huge.near","method":"get_everything"}`)
	e, ok = errs.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errs.CannotRead, e.Code)
	assert.Contains(t, e.Message, "larger than 1048576 bytes")

	// Bad input is refused before any call.
	before := len(fake.Calls())
	for input, field := range map[string]string{
		`{"network":"near:betanet","contract":"a.near","method":"m"}`:            "network",
		`{"network":"near:mainnet","contract":"A B","method":"m"}`:               "contract",
		`{"network":"near:mainnet","contract":"a.near","method":"m; rm"}`:        "method",
		`{"network":"near:mainnet","contract":"a.near","method":"m","args":[1]}`: "args",
		`{"contract":"a.near","method":"m"}`:                                     "network",
	} {
		_, err := call(t, reg, eyesapp.ToolReadChain, input)
		assert.True(t, errs.Is(err, errs.BadInput), input)
		assert.Contains(t, err.Error(), field, input)
	}
	assert.Equal(t, before, len(fake.Calls()))
}

func TestReadPageInPages(t *testing.T) {
	var body strings.Builder
	for i := 0; body.Len() < 70_000; i++ {
		fmt.Fprintf(&body, "<p>Paragraph %d says the council voted &amp; the pool staked.</p>\n", i)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>Long page</title></head><body>%s</body></html>", body.String())
	}))
	defer srv.Close()
	reg := eyes(t, "http://127.0.0.1:1", nil)

	var text strings.Builder
	start, pages := 0, 0
	for {
		out, err := call(t, reg, eyesapp.ToolReadPage, fmt.Sprintf(`{"url":%q,"start":%d}`, srv.URL, start))
		require.NoError(t, err)
		p := out.(eyesapp.PageAnswer)
		pages++
		assert.Equal(t, "Long page", p.Title)
		assert.Equal(t, start, p.Start)
		assert.LessOrEqual(t, utf8.RuneCountInString(p.Text), eyesapp.PageChars)
		assert.Equal(t, p.End-p.Start, utf8.RuneCountInString(p.Text))
		enc, _ := json.Marshal(p)
		assert.Less(t, len(enc), 24<<10, "a page fits the agent's thread")
		text.WriteString(p.Text)
		if p.Next == nil {
			assert.Equal(t, p.Total, p.End)
			break
		}
		assert.Equal(t, p.End, *p.Next)
		assert.True(t, strings.HasSuffix(p.Text, "\n"), "a page ends at a line's end")
		start = *p.Next
	}
	assert.GreaterOrEqual(t, pages, 3)
	assert.Contains(t, text.String(), "Paragraph 0 says the council voted & the pool staked.")
	assert.Contains(t, text.String(), "Paragraph 900 says")

	_, err := call(t, reg, eyesapp.ToolReadPage, fmt.Sprintf(`{"url":%q,"start":%d}`, srv.URL, 10_000_000))
	assert.True(t, errs.Is(err, errs.BadInput), "start past the schema's bound")
	_, err = call(t, reg, eyesapp.ToolReadPage, fmt.Sprintf(`{"url":%q,"start":%d}`, srv.URL, text.Len()+5))
	assert.True(t, errs.Is(err, errs.BadInput), "start past the end")
	_, err = call(t, reg, eyesapp.ToolReadPage, `{"url":"http://10.0.0.1/"}`)
	assert.True(t, errs.Is(err, errs.BadInput), "a private address even with loopback allowed")
}

func TestPageOf(t *testing.T) {
	// Markup-heavy text costs six bytes a character once JSON-encoded: the
	// page is shorter, never larger than the thread holds.
	text := strings.Repeat("<a>&", 20_000)
	page, end := eyesapp.PageOf(text, 0)
	enc, _ := json.Marshal(page)
	assert.LessOrEqual(t, len(enc), 20_002)
	assert.Equal(t, utf8.RuneCountInString(page), end)

	// Another script: characters, not bytes.
	text = strings.Repeat("花びら ", 10_000)
	page, end = eyesapp.PageOf(text, 0)
	assert.True(t, utf8.ValidString(page))
	again, next := eyesapp.PageOf(text, end)
	assert.Equal(t, text[:len(page)+len(again)], page+again)
	assert.Greater(t, next, end)

	page, end = eyesapp.PageOf("short", 0)
	assert.Equal(t, "short", page)
	assert.Equal(t, 5, end)
	page, end = eyesapp.PageOf("short", 5)
	assert.Equal(t, "", page)
	assert.Equal(t, 5, end)
}

func TestSearch(t *testing.T) {
	fake := bravetest.New(t)
	reg := eyes(t, "http://127.0.0.1:1", brave.New(fake.URL, bravetest.Key, nil))
	out, err := call(t, reg, eyesapp.ToolSearch, `{"query":"  near   dao "}`)
	require.NoError(t, err)
	s := out.(eyesapp.SearchAnswer)
	assert.Equal(t, "near dao", s.Query)
	require.Len(t, s.Results, 2)
	assert.Equal(t, "https://example.org/sputnik", s.Results[0].URL)
	tool, _ := reg.Get(eyesapp.ToolSearch)
	assert.False(t, tool.HiddenFromAgent)

	// Without a key: 503 source_failed naming the variable, and the agent
	// is not offered it.
	reg = eyes(t, "http://127.0.0.1:1", nil)
	_, err = call(t, reg, eyesapp.ToolSearch, `{"query":"near dao"}`)
	e, ok := errs.As(err)
	require.True(t, ok)
	assert.Equal(t, errs.SourceFailed, e.Code)
	assert.Contains(t, e.Hint, "PETAL_SEARCH_API_KEY")
	tool, _ = reg.Get(eyesapp.ToolSearch)
	assert.True(t, tool.HiddenFromAgent)
	assert.Empty(t, fake.Queries()[1:])
}

// The test setting that lets read_page read loopback is refused on an https
// site: a real site never reads its own machine.
func TestReadPageLoopbackIsRefusedOnAnHTTPSSite(t *testing.T) {
	env := map[string]string{"PETAL_READ_PAGE_LOOPBACK": "1", "PETAL_API": "https://petal.example"}
	_, err := config.LoadConfig(func(k string) string { return env[k] })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PETAL_READ_PAGE_LOOPBACK")
	env["PETAL_API"] = "http://localhost:8787"
	cfg, err := config.LoadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.True(t, cfg.ReadPageLoopback)
}

// Many callers reading pages at once share the page cache and the few
// fetch slots; run with -race.
func TestReadPageConcurrently(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat(r.URL.Path+" words words\n", 5000))
	}))
	defer srv.Close()
	reg := eyes(t, "http://127.0.0.1:1", nil)
	errc := make(chan error, 16)
	for i := range 16 {
		go func() {
			_, err := call(t, reg, eyesapp.ToolReadPage, fmt.Sprintf(`{"url":%q,"start":%d}`, fmt.Sprintf("%s/p%d", srv.URL, i%4), (i%3)*1000))
			errc <- err
		}()
	}
	for range 16 {
		assert.NoError(t, <-errc)
	}
}
