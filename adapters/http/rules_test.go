package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

// These tests hold every route to the contract's general rules, through a real
// loopback listener, on a Server with a small test tool set.

// testTools is a tiny ToolSet: echo reads its input strictly and answers it;
// fail answers the error its input names; boom panics.
type testTools struct{}

type echoInput struct {
	Text  string   `json:"text"`
	N     int      `json:"n"`
	Tags  []string `json:"tags"`
	Inner *struct {
		K string `json:"k"`
	} `json:"inner"`
}

// echoed is echo's answer: its input, and who called.
type echoed struct {
	Text    string   `json:"text"`
	N       int      `json:"n"`
	Tags    []string `json:"tags"`
	Address string   `json:"address"`
}

type nothing struct{}

func (testTools) Tools() []toolkit.Tool {
	// Their inputs are written out after WithIO, looser than the input
	// types would make them: the rules under test are the decoder's.
	echo := toolkit.WithIO(toolkit.Tool{Name: "echo", Description: "answers its input"},
		func(_ context.Context, call toolkit.Call, in echoInput) (echoed, error) {
			return echoed{Text: in.Text, N: in.N, Tags: in.Tags, Address: call.Caller.Address}, nil
		})
	echo.Input = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"},"tags":{"type":"array"},"inner":{"type":"object"}},"additionalProperties":false}`)
	fail := toolkit.WithIO(toolkit.Tool{Name: "fail"}, func(_ context.Context, call toolkit.Call, in struct {
		Code string `json:"code"`
	}) (nothing, error) {
		if in.Code == "" {
			// Not petal's error: its text must never reach the caller.
			return nothing{}, fmt.Errorf("pq: relation \"secret_table\" does not exist at /srv/petal/store.go:42")
		}
		return nothing{}, errs.New(errs.Code(in.Code), "refused for the test", "a hint")
	})
	fail.Input = json.RawMessage(`{"type":"object","properties":{"code":{"type":"string"}}}`)
	boom := toolkit.WithIO(toolkit.Tool{Name: "boom"}, func(context.Context, toolkit.Call, struct{}) (nothing, error) {
		panic("secret panic detail: password=hunter2")
	})
	return []toolkit.Tool{echo, fail, boom}
}

// fixedClock is a clock the test moves by hand.
type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fixedClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type rulesServer struct {
	URL   string
	clock *fixedClock
	log   *syncBuffer
	// inflated is how many bytes the posted-reading route read after inflating.
	inflated chan int64
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newRulesServer(t *testing.T, env map[string]string) *rulesServer {
	t.Helper()
	cfg, err := config.LoadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	rs := &rulesServer{
		clock:    &fixedClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)},
		log:      &syncBuffer{},
		inflated: make(chan int64, 1),
	}
	log := slog.New(slog.NewJSONHandler(rs.log, nil))
	reg := toolkit.NewRegistry(cfg, memory.NewRateLimiter(rs.clock), []toolkit.ToolSet{testTools{}})
	s := New(Deps{Config: cfg, Log: log, Registry: reg})
	for _, r := range []Route{
		{Method: http.MethodPost, Path: "/test/echo", Tool: "echo"},
		{Method: http.MethodGet, Path: "/test/echo", Tool: "echo"},
		{Method: http.MethodPost, Path: "/test/fail", Tool: "fail"},
		{Method: http.MethodPost, Path: "/test/boom", Tool: "boom"},
		{Method: http.MethodPost, Path: "/test/chat", Tool: "echo", BodyLimit: ChatBodyLimit},
		{Method: http.MethodPost, Path: "/test/session", Access: AccessSession, Handler: func(c echo.Context) error {
			var in echoInput
			if err := decodeBody(c, &in); err != nil {
				return err
			}
			return writeJSON(c, http.StatusOK, in)
		}},
		{Method: http.MethodPut, Path: "/test/reading", BodyLimit: PostedReadingWireLimit, Handler: func(c echo.Context) error {
			body, err := RequestBodyReader(c, PostedReadingInflatedLimit)
			if err != nil {
				return err
			}
			defer body.Close()
			counted := &countingReader{r: body}
			var reading map[string]any
			err = toolkit.DecodeStrict(counted, &reading)
			rs.inflated <- counted.n
			if err != nil {
				return err
			}
			return writeJSON(c, http.StatusOK, map[string]int{"keys": len(reading)})
		}},
	} {
		s.add(r)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	rs.URL = srv.URL
	return rs
}

type response struct {
	*http.Response
	Body []byte
}

// errorBody is the contract's error shape, and tools_version beside it.
type errorBody struct {
	ToolsVersion string `json:"tools_version"`
	Error        struct {
		Code        string `json:"code"`
		Message     string `json:"message"`
		Hint        string `json:"hint"`
		RetryAfterS int    `json:"retry_after_s"`
	} `json:"error"`
}

func (r response) errorBody(t *testing.T) errorBody {
	t.Helper()
	var e errorBody
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&e), "error body in the contract's shape: %s", r.Body)
	assert.Equal(t, toolkit.ToolsVersion, e.ToolsVersion, "tools_version in every JSON answer")
	assert.NotEmpty(t, e.Error.Code)
	assert.NotEmpty(t, e.Error.Message)
	return e
}

func (rs *rulesServer) do(t *testing.T, method, path string, body io.Reader, headers ...string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, rs.URL+path, body)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		var withVersion struct {
			ToolsVersion string `json:"tools_version"`
		}
		require.NoError(t, json.Unmarshal(b, &withVersion), "%s", b)
		assert.Equal(t, toolkit.ToolsVersion, withVersion.ToolsVersion, "tools_version in every JSON answer: %s %s → %s", method, path, b)
		assert.Equal(t, "application/json; charset=UTF-8", res.Header.Get("Content-Type"))
	}
	assert.NotEmpty(t, res.Header.Get("X-Request-Id"), "X-Request-Id on every answer")
	return response{Response: res, Body: b}
}

func (rs *rulesServer) post(t *testing.T, path, body string, headers ...string) response {
	t.Helper()
	return rs.do(t, http.MethodPost, path, strings.NewReader(body), headers...)
}

func TestAnswersAreJSONWithToolsVersion(t *testing.T) {
	rs := newRulesServer(t, nil)
	res := rs.post(t, "/test/echo", `{"text":"ünïcode ✿","n":3,"tags":["a"]}`)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", res.Body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","text":"ünïcode ✿","n":3,"tags":["a"],"address":"127.0.0.1"}`, string(res.Body))

	// The query is typed by the tool's input schema.
	res = rs.do(t, http.MethodGet, "/test/echo?text=hi&n=7&tags=a,b", nil)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", res.Body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","text":"hi","n":7,"tags":["a","b"],"address":"127.0.0.1"}`, string(res.Body))
}

func TestStrictDecodingRefusesWithTheFieldNamed(t *testing.T) {
	rs := newRulesServer(t, nil)
	cases := []struct {
		name, body, mention string
	}{
		{"unknown field", `{"text":"a","colour":"red"}`, "colour"},
		{"wrong type", `{"n":"seven"}`, "n"},
		{"wrong type, nested", `{"inner":{"k":5}}`, "inner.k"},
		{"wrong type, array", `{"tags":"a"}`, "tags"},
		{"trailing data", `{"text":"a"} trailing`, "after"},
		{"a second JSON value", `{"text":"a"} {"text":"b"}`, "more than one JSON value"},
		{"not an object", `[1,2]`, "object"},
		{"not JSON", `text=a`, "not valid JSON"},
		{"cut short", `{"text":"a"`, "ends too soon"},
		{"not UTF-8 (latin-1)", "{\"text\":\"caf\xe9\"}", "not valid UTF-8"},
	}
	for _, path := range []string{"/test/echo", "/test/session"} {
		for _, tc := range cases {
			t.Run(path+" "+tc.name, func(t *testing.T) {
				res := rs.post(t, path, tc.body)
				require.Equal(t, http.StatusBadRequest, res.StatusCode, "%s", res.Body)
				e := res.errorBody(t)
				assert.Equal(t, "bad_input", e.Error.Code)
				assert.Contains(t, e.Error.Message, tc.mention)
			})
		}
	}
	// A body that is not JSON by its Content-Type is refused too.
	res := rs.post(t, "/test/session", `{"text":"a"}`, "Content-Type", "application/x-www-form-urlencoded")
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, res.errorBody(t).Error.Message, "must be JSON")
	// Typed query values are checked too, naming the parameter.
	res = rs.do(t, http.MethodGet, "/test/echo?n=many", nil)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, res.errorBody(t).Error.Message, "n")
	res = rs.do(t, http.MethodGet, "/test/echo?colour=red", nil)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, res.errorBody(t).Error.Message, "colour")
}

func TestErrorCodesMapToTheContractsStatuses(t *testing.T) {
	rs := newRulesServer(t, nil)
	want := map[errs.Code]int{
		errs.BadInput: 400, errs.Unauthorised: 401, errs.InviteRequired: 403, errs.NotFound: 404,
		errs.CannotRead: 422, errs.InvalidSpec: 422, errs.RateLimited: 429, errs.BudgetExhausted: 429,
		errs.PaymentRequired: 402, errs.NotOnThisSite: 403,
		errs.SourceFailed: 503, // never 502: Cloudflare would hide the message
		errs.Internal:     500,
	}
	for code, status := range want {
		res := rs.post(t, "/test/fail", `{"code":"`+string(code)+`"}`)
		assert.Equal(t, status, res.StatusCode, "%s", code)
		e := res.errorBody(t)
		assert.Equal(t, string(code), e.Error.Code)
		assert.Equal(t, "refused for the test", e.Error.Message)
		assert.Equal(t, "a hint", e.Error.Hint)
	}
}

func TestAnErrorNotOursIsInternalAndSaysNothingInside(t *testing.T) {
	rs := newRulesServer(t, nil)
	res := rs.post(t, "/test/fail", `{}`)
	require.Equal(t, http.StatusInternalServerError, res.StatusCode)
	assert.Equal(t, "internal", res.errorBody(t).Error.Code)
	for _, secret := range []string{"secret_table", "pq:", "store.go"} {
		assert.NotContains(t, string(res.Body), secret)
	}
	// The detail is in the log, with the request id, for us.
	assert.Contains(t, rs.log.String(), "secret_table")
	assert.Contains(t, rs.log.String(), res.Header.Get("X-Request-Id"))
}

func TestAPanicIsInternalAndTheServerGoesOn(t *testing.T) {
	rs := newRulesServer(t, nil)
	res := rs.post(t, "/test/boom", `{}`)
	require.Equal(t, http.StatusInternalServerError, res.StatusCode)
	e := res.errorBody(t)
	assert.Equal(t, "internal", e.Error.Code)
	for _, secret := range []string{"hunter2", "secret", "goroutine", ".go:", "panic"} {
		assert.NotContains(t, string(res.Body), secret)
	}
	assert.Contains(t, rs.log.String(), "hunter2", "the panic is logged for us")
	assert.Contains(t, rs.log.String(), "rules_test.go", "with its stack")

	res = rs.post(t, "/test/echo", `{"text":"still here"}`)
	assert.Equal(t, http.StatusOK, res.StatusCode)
}

func TestUnknownRouteAndWrongMethod(t *testing.T) {
	rs := newRulesServer(t, nil)
	res := rs.do(t, http.MethodGet, "/api/v1/no-such-route", nil)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	assert.Equal(t, "not_found", res.errorBody(t).Error.Code)

	res = rs.do(t, http.MethodDelete, "/test/echo", nil)
	require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
	assert.Equal(t, "method_not_allowed", res.errorBody(t).Error.Code)
	assert.Contains(t, res.Header.Get("Allow"), http.MethodPost)
}

func TestXRequestID(t *testing.T) {
	rs := newRulesServer(t, nil)
	res := rs.post(t, "/test/echo", `{}`, "X-Request-Id", "client-id.42:a_b")
	assert.Equal(t, "client-id.42:a_b", res.Header.Get("X-Request-Id"), "a client's sane id is kept")

	made := rs.post(t, "/test/echo", `{}`).Header.Get("X-Request-Id")
	assert.Regexp(t, `^[0-9a-f]{24}$`, made)
	assert.NotEqual(t, made, rs.post(t, "/test/echo", `{}`).Header.Get("X-Request-Id"), "each request gets its own")

	for _, insane := range []string{strings.Repeat("x", 129), "has space", "semi;colon", `quote"`, "ünïcode"} {
		got := rs.post(t, "/test/echo", `{}`, "X-Request-Id", insane).Header.Get("X-Request-Id")
		assert.Regexp(t, `^[0-9a-f]{24}$`, got, "%q is replaced", insane)
	}
	// Errors carry it too.
	res = rs.do(t, http.MethodGet, "/nope", nil, "X-Request-Id", "trace-404")
	assert.Equal(t, "trace-404", res.Header.Get("X-Request-Id"))
}

func TestOneAccessLogLinePerRequest(t *testing.T) {
	rs := newRulesServer(t, nil)
	rs.post(t, "/test/echo", `{}`, "X-Request-Id", "log-ok")
	rs.do(t, http.MethodGet, "/nope", nil, "X-Request-Id", "log-404")
	rs.post(t, "/test/boom", `{}`, "X-Request-Id", "log-500")
	lines := map[string]map[string]any{}
	for line := range strings.Lines(rs.log.String()) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), "JSON log lines: %s", line)
		if rec["msg"] == "request" {
			id, _ := rec["request_id"].(string)
			require.NotContains(t, lines, id, "one line per request")
			lines[id] = rec
		}
	}
	require.Len(t, lines, 3)
	assert.EqualValues(t, 200, lines["log-ok"]["status"])
	assert.Equal(t, "/test/echo", lines["log-ok"]["route"])
	assert.EqualValues(t, 404, lines["log-404"]["status"])
	assert.EqualValues(t, 500, lines["log-500"]["status"])
	assert.Equal(t, http.MethodPost, lines["log-500"]["method"])
}

func jsonOfSize(n int) string {
	// {"text":"xxxx…"} exactly n bytes.
	return `{"text":"` + strings.Repeat("x", n-len(`{"text":""}`)) + `"}`
}

// chunked hides the length, so the cap is met while reading, not up front.
type chunked struct{ r io.Reader }

func (c chunked) Read(p []byte) (int, error) { return c.r.Read(p) }

func TestBodyLimits(t *testing.T) {
	rs := newRulesServer(t, nil)
	for _, tc := range []struct {
		path  string
		limit int
		name  string
	}{
		{"/test/echo", DefaultBodyLimit, "256 KiB"},
		{"/test/session", DefaultBodyLimit, "256 KiB"},
		{"/test/chat", ChatBodyLimit, "512 KiB"},
	} {
		for _, hide := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s hidden length %v", tc.path, hide), func(t *testing.T) {
				body := func(n int) io.Reader {
					if hide {
						return chunked{strings.NewReader(jsonOfSize(n))}
					}
					return strings.NewReader(jsonOfSize(n))
				}
				res := rs.do(t, http.MethodPost, tc.path, body(tc.limit))
				assert.Equal(t, http.StatusOK, res.StatusCode, "a body at the limit passes: %s", res.Body[:min(len(res.Body), 200)])
				res = rs.do(t, http.MethodPost, tc.path, body(tc.limit+1))
				require.Equal(t, http.StatusBadRequest, res.StatusCode)
				e := res.errorBody(t)
				assert.Equal(t, "bad_input", e.Error.Code)
				assert.Contains(t, e.Error.Message, tc.name)
			})
		}
	}
	assert.Equal(t, 256<<10, DefaultBodyLimit)
	assert.Equal(t, 512<<10, ChatBodyLimit)
}

func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func TestPostedReadingLimits(t *testing.T) {
	rs := newRulesServer(t, nil)
	put := func(body []byte, encoding string) response {
		t.Helper()
		h := []string{}
		if encoding != "" {
			h = append(h, "Content-Encoding", encoding)
		}
		return rs.do(t, http.MethodPut, "/test/reading", bytes.NewReader(body), h...)
	}

	// 3 MiB inflated from far less on the wire: past the wire limit once
	// inflated, and still accepted, since inflated may be 32 MiB.
	big := []byte(jsonOfSize(3 << 20))
	res := put(gzipBytes(t, big), "gzip")
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", res.Body)
	assert.EqualValues(t, len(big), <-rs.inflated)

	// A plain body over 2 MiB is refused at the wire limit.
	res = put(big, "")
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, res.errorBody(t).Error.Message, "2 MiB")

	// A gzip bomb (256 MiB of zeros in ~256 KiB) is refused without inflating
	// past the 32 MiB cap.
	res = put(gzipBomb(t), "gzip")
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	e := res.errorBody(t)
	assert.Equal(t, "bad_input", e.Error.Code)
	assert.Contains(t, e.Error.Message, "32 MiB inflated")
	inflated := <-rs.inflated
	assert.LessOrEqual(t, inflated, int64(PostedReadingInflatedLimit), "never inflated past the cap")

	// A compressed body over 2 MiB on the wire is refused before inflating.
	// Random letters from 64 compress to 3/4 of their size: 4 MiB of them is
	// 3 MiB on the wire.
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	noise := make([]byte, 4<<20)
	rng := rand.New(rand.NewPCG(1, 2)) // a fixed seed: the same bytes every run
	for i := range noise {
		noise[i] = letters[rng.IntN(64)]
	}
	res = put(gzipBytes(t, []byte(`{"text":"`+string(noise)+`"}`)), "gzip")
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, res.errorBody(t).Error.Message, "2 MiB")

	res = put([]byte("not gzip at all"), "gzip")
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, res.errorBody(t).Error.Message, "gzip")
	res = put([]byte(`{}`), "br")
	require.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Contains(t, res.errorBody(t).Error.Message, "Content-Encoding")
}

func TestCORS(t *testing.T) {
	rs := newRulesServer(t, nil)
	origin := []string{"Origin", "https://someone-else.example"}

	// Tool routes are open to any site, never with credentials.
	res := rs.post(t, "/test/echo", `{}`, origin...)
	assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, res.Header.Get("Access-Control-Expose-Headers"), "Retry-After")
	assert.Empty(t, res.Header.Values("Access-Control-Allow-Credentials"))
	// Errors on an open route are readable across sites too.
	res = rs.post(t, "/test/echo", `{"colour":1}`, origin...)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode)
	assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))

	pre := rs.do(t, http.MethodOptions, "/test/echo", nil, "Origin", origin[1],
		"Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "content-type")
	assert.Equal(t, http.StatusNoContent, pre.StatusCode)
	assert.Equal(t, "*", pre.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, pre.Header.Get("Access-Control-Allow-Methods"), "POST")
	assert.Contains(t, pre.Header.Get("Access-Control-Allow-Headers"), "Content-Type")
	assert.Empty(t, pre.Header.Values("Access-Control-Allow-Credentials"))

	// Session routes send no CORS headers at all, so a browser on another
	// site can neither read them nor preflight a write.
	for _, r := range []response{
		rs.post(t, "/test/session", `{}`, origin...),
		rs.post(t, "/test/session", `{"colour":1}`, origin...),
		rs.do(t, http.MethodOptions, "/test/session", nil, "Origin", origin[1], "Access-Control-Request-Method", "POST"),
	} {
		for name := range r.Header {
			assert.False(t, strings.HasPrefix(name, "Access-Control-"), "%s on a session route", name)
		}
	}
	assert.Equal(t, "no-store", rs.post(t, "/test/session", `{}`).Header.Get("Cache-Control"))
}

func TestToolCallRateLimit(t *testing.T) {
	rs := newRulesServer(t, behindLoopbackProxy)
	call := func(headers ...string) response {
		t.Helper()
		return rs.post(t, "/test/echo", `{}`, headers...)
	}
	for i := range 60 {
		// Headers a client can set freely change nothing.
		res := call("X-Forwarded-For", fmt.Sprintf("10.0.0.%d", i), "X-Real-IP", fmt.Sprintf("10.1.0.%d", i))
		require.Equal(t, http.StatusOK, res.StatusCode, "call %d", i+1)
	}
	res := call("X-Forwarded-For", "10.9.9.9", "X-Real-IP", "10.9.9.9")
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode, "the 61st call in a minute")
	e := res.errorBody(t)
	assert.Equal(t, "rate_limited", e.Error.Code)
	assert.Equal(t, 60, e.Error.RetryAfterS)
	assert.Equal(t, "60", res.Header.Get("Retry-After"))
	assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"))

	// Another address (cf-connecting-ip) has its own allowance.
	assert.Equal(t, http.StatusOK, call("Cf-Connecting-Ip", "203.0.113.9").StatusCode)

	// Half a minute on, the wait is shorter; a minute on, the window is new.
	rs.clock.Add(30 * time.Second)
	res = call()
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	assert.Equal(t, 30, res.errorBody(t).Error.RetryAfterS)
	rs.clock.Add(30 * time.Second)
	assert.Equal(t, http.StatusOK, call().StatusCode)
}

// behindLoopbackProxy makes the test's own client a trusted proxy, so its
// cf-connecting-ip is believed.
var behindLoopbackProxy = map[string]string{"PETAL_TRUSTED_PROXIES": "127.0.0.0/8,::1"}

// A client that is not a trusted proxy can't buy itself a new allowance by
// rotating cf-connecting-ip.
func TestRotatedCfConnectingIPFromAnUntrustedPeerChangesNothing(t *testing.T) {
	rs := newRulesServer(t, map[string]string{"PETAL_TRUSTED_PROXIES": "10.0.0.0/8"})
	for i := range 60 {
		res := rs.post(t, "/test/echo", `{}`, "Cf-Connecting-Ip", fmt.Sprintf("203.0.113.%d", i))
		require.Equal(t, http.StatusOK, res.StatusCode, "call %d", i+1)
		var out map[string]any
		require.NoError(t, json.Unmarshal(res.Body, &out))
		require.Equal(t, "127.0.0.1", out["address"], "the socket's peer, whatever the header")
	}
	res := rs.post(t, "/test/echo", `{}`, "Cf-Connecting-Ip", "198.51.100.200")
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, "the 61st call, under a 61st cf-connecting-ip")
}

func TestRateLimitCountsAnIPv6AddressAsItsSlash64(t *testing.T) {
	rs := newRulesServer(t, behindLoopbackProxy)
	for i := range 60 {
		// Sixty different addresses in one /64 share one allowance.
		ip := fmt.Sprintf("2001:db8:1:2:%x::%x", i, i+1)
		require.Equal(t, http.StatusOK, rs.post(t, "/test/echo", `{}`, "Cf-Connecting-Ip", ip).StatusCode)
	}
	res := rs.post(t, "/test/echo", `{}`, "Cf-Connecting-Ip", "2001:db8:1:2:ffff:ffff:ffff:ffff")
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	res = rs.post(t, "/test/echo", `{}`, "Cf-Connecting-Ip", "2001:db8:1:3::1")
	assert.Equal(t, http.StatusOK, res.StatusCode, "the next /64 is another address")
	var out map[string]any
	require.NoError(t, json.Unmarshal(res.Body, &out))
	assert.Equal(t, "2001:db8:1:3::/64", out["address"])
	// The socket's peer is untouched by all of this.
	assert.Equal(t, http.StatusOK, rs.post(t, "/test/echo", `{}`).StatusCode)
}

func TestClientAddress(t *testing.T) {
	proxies, err := config.ParseCIDRs("198.51.100.0/24, 2001:db8:ffff::/48")
	require.NoError(t, err)
	cases := []struct {
		name    string
		remote  string
		headers map[string]string
		public  bool
		trusted []netip.Prefix
		want    string
	}{
		{"socket peer", "198.51.100.7:5555", nil, false, nil, "198.51.100.7"},
		{"cf-connecting-ip wins", "198.51.100.7:5555", map[string]string{"Cf-Connecting-Ip": "203.0.113.1"}, false, proxies, "203.0.113.1"},
		{"x-forwarded-for never counts", "198.51.100.7:5555", map[string]string{"X-Forwarded-For": "203.0.113.1"}, false, nil, "198.51.100.7"},
		{"x-real-ip never counts", "198.51.100.7:5555", map[string]string{"X-Real-Ip": "203.0.113.1"}, false, nil, "198.51.100.7"},
		{"ipv6 peer as its /64", "[2001:db8:a:b:c:d:e:f]:443", nil, false, nil, "2001:db8:a:b::/64"},
		{"ipv6 cf-connecting-ip as its /64", "198.51.100.7:5555", map[string]string{"Cf-Connecting-Ip": "2001:db8::1"}, false, proxies, "2001:db8::/64"},
		{"ipv4-mapped ipv6 is ipv4", "[::ffff:198.51.100.7]:1", nil, false, nil, "198.51.100.7"},
		{"garbage cf-connecting-ip is ignored", "198.51.100.7:5555", map[string]string{"Cf-Connecting-Ip": "not an ip"}, false, nil, "198.51.100.7"},
		{"public: without cf-connecting-ip everyone shares", "198.51.100.7:5555", nil, true, nil, "shared"},
		{"public: cf-connecting-ip counts", "198.51.100.7:5555", map[string]string{"Cf-Connecting-Ip": "203.0.113.1"}, true, proxies, "203.0.113.1"},
		// Whose address is it: the header only from a trusted proxy.
		{"untrusted peer: cf-connecting-ip is not believed", "192.0.2.9:5555", map[string]string{"Cf-Connecting-Ip": "203.0.113.1"}, false, proxies, "192.0.2.9"},
		{"no trusted proxies: cf-connecting-ip is not believed", "198.51.100.7:5555", map[string]string{"Cf-Connecting-Ip": "203.0.113.1"}, false, nil, "198.51.100.7"},
		{"public, untrusted peer: shares, whatever the header", "192.0.2.9:5555", map[string]string{"Cf-Connecting-Ip": "203.0.113.1"}, true, proxies, "shared"},
		{"trusted proxy without the header: shares", "198.51.100.7:5555", nil, false, proxies, "shared"},
		{"trusted proxy with a garbage header: shares", "198.51.100.7:5555", map[string]string{"Cf-Connecting-Ip": "not an ip"}, false, proxies, "shared"},
		{"trusted ipv6 proxy", "[2001:db8:ffff:1::5]:443", map[string]string{"Cf-Connecting-Ip": "203.0.113.4"}, false, proxies, "203.0.113.4"},
		{"trusted ipv4 proxy seen as ipv4-mapped ipv6", "[::ffff:198.51.100.7]:1", map[string]string{"Cf-Connecting-Ip": "203.0.113.5"}, false, proxies, "203.0.113.5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.remote
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			assert.Equal(t, tc.want, ClientAddress(r, tc.public, tc.trusted))
		})
	}
}
