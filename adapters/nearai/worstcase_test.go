package nearai_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai"
	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// longRequest is request with a user message of n bytes of text.
func longRequest(text string, n int) ports.ModelRequest {
	req := request
	req.Messages = append([]runs.Message(nil), request.Messages...)
	req.Messages[1].Content = strings.Repeat(text, n/len(text)+1)[:n]
	req.MaxTokens = 2048
	return req
}

// TestWorstCaseBoundsABillAtOneTokenPerByte: billed at one prompt token per
// byte of the request (what byte-level tokenizers make of rare scripts), a
// call never costs more than the worst case held for it, whether the model
// answers or fails and the fallback answers (the failed attempt's input then
// counts too), and whatever the text: ASCII, a rare script, characters JSON
// escapes.
func TestWorstCaseBoundsABillAtOneTokenPerByte(t *testing.T) {
	texts := map[string]string{
		"ascii":           "the marketing DAO, please ",
		"a rare script":   "ཀཁགངཅཆཇཉཏཐདནཔཕབམ",
		"escaped by JSON": `<&>"\` + "\x01",
		"four-byte emoji": "🌸🌼🌻",
	}
	for name, text := range texts {
		t.Run(name, func(t *testing.T) {
			req := longRequest(text, 90<<10)
			full := nearaitest.Completion("w", "deepseek-ai/DeepSeek-V3.1", "done")
			fake := nearaitest.New(t, full, nearaitest.Fail(http.StatusServiceUnavailable, "error_503.json"), full)
			fake.OneTokenPerByte = true
			c, _ := newClient(t, fake)
			worst := c.WorstCase(req)

			ans, err := c.Complete(t.Context(), req)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, ans.Tokens.In, int64(90<<10), "billed at one token per byte at least")
			assert.LessOrEqual(t, ans.Cost, worst, "the model answered")

			ans, err = c.Complete(t.Context(), req)
			require.NoError(t, err)
			require.True(t, ans.FallbackUsed)
			assert.LessOrEqual(t, ans.Cost, worst, "the model failed and the fallback answered")
		})
	}
}

// TestWorstCaseOnTheModelAsked: a chat that asks for a dearer model than the
// default is held at that model's prices.
func TestWorstCaseOnTheModelAsked(t *testing.T) {
	fake := nearaitest.New(t)
	attestless, err := nearai.New(nearai.Options{BaseURL: fake.BaseURL(), Key: "k", Model: "openai/gpt-oss-120b", Fallback: "openai/gpt-oss-120b"}, nil)
	require.NoError(t, err)
	req := longRequest("abc", 10_000)
	cheap := attestless.WorstCase(req)
	req.Model = "deepseek-ai/DeepSeek-V3.1"
	assert.Greater(t, attestless.WorstCase(req), 4*cheap, "DeepSeek's input is five times gpt-oss's")
}

// TestACutCallIsChargedItsInput: a call cut after NEAR AI had it (a stop)
// comes back with the context's error and what it is known to have cost: its
// input, and the inference id when the answer's headers had come.
func TestACutCallIsChargedItsInput(t *testing.T) {
	for _, headersFirst := range []bool{false, true} {
		fake := nearaitest.New(t)
		fake.Hold, fake.Holding, fake.HeadersFirst = make(chan struct{}), make(chan struct{}, 1), headersFirst
		// With the headers first, the stop comes once the client has them.
		gotHeaders := make(chan struct{}, 1)
		c, err := nearai.New(nearai.Options{BaseURL: fake.BaseURL(), Key: "sk-test", Model: "deepseek-ai/DeepSeek-V3.1", Fallback: "openai/gpt-oss-120b",
			HTTP: &http.Client{Transport: headersSeen{gotHeaders}}, PricesEvery: -1}, nil) // no model list read through the watched transport
		require.NoError(t, err)
		req := longRequest("abc", 20_000)
		ctx, cancel := context.WithCancel(t.Context())
		go func() {
			<-fake.Holding
			if headersFirst {
				<-gotHeaders
			}
			cancel()
		}()
		ans, err := c.Complete(ctx, req)
		require.Error(t, err)
		assert.True(t, errors.Is(err, context.Canceled), "%v", err)
		assert.True(t, ans.Cut)
		assert.Greater(t, ans.Tokens.In, int64(20_000), "its input, at one token per byte")
		assert.Zero(t, ans.Tokens.Out)
		assert.Equal(t, nearai.Catalogue[0].Cost(runs.Tokens{In: ans.Tokens.In}), ans.Cost)
		if headersFirst {
			assert.Equal(t, nearaitest.InferenceID, ans.InferenceID, "the headers came: reconciliation can find its bill")
		} else {
			assert.Empty(t, ans.InferenceID)
		}
		assert.Len(t, fake.Completions(), 1, "a cut call is not retried on the fallback")
	}
}

// TestACutFallbackIsChargedTheFailedAttemptToo: the model fails on NEAR
// AI's side, the fallback has the request and is cut by a stop: both inputs
// are charged, as they are when the fallback answers, and never more than
// the worst case held.
func TestACutFallbackIsChargedTheFailedAttemptToo(t *testing.T) {
	fake := nearaitest.New(t, nearaitest.Fail(http.StatusServiceUnavailable, "error_503.json"))
	fake.Hold, fake.Holding = make(chan struct{}), make(chan struct{}, 1)
	c, _ := newClient(t, fake)
	req := longRequest("abc", 20_000)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-fake.Holding
		fake.Hold <- struct{}{} // the model's 503
		<-fake.Holding          // the fallback has the request
		cancel()
	}()
	ans, err := c.Complete(ctx, req)
	require.ErrorIs(t, err, context.Canceled)
	require.True(t, ans.Cut)
	assert.Equal(t, "openai/gpt-oss-120b", ans.Model, "the fallback was cut")
	assert.Len(t, fake.Completions(), 2)
	model, fallback := nearai.Catalogue[0], mustFind(t, "openai/gpt-oss-120b")
	in := runs.Tokens{In: ans.Tokens.In}
	assert.Equal(t, model.Cost(in)+fallback.Cost(in), ans.Cost, "the failed attempt's input at its own price, and the fallback's")
	assert.LessOrEqual(t, ans.Cost, c.WorstCase(req))
}

func mustFind(t *testing.T, id string) nearai.Model {
	t.Helper()
	m, ok := nearai.Find(id)
	require.True(t, ok, id)
	return m
}

// TestACallNeverSentIsChargedNothing: a context cancelled before the request
// goes out costs nothing.
func TestACallNeverSentIsChargedNothing(t *testing.T) {
	fake := nearaitest.New(t)
	c, _ := newClient(t, fake)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ans, err := c.Complete(ctx, request)
	require.Error(t, err)
	assert.False(t, ans.Cut)
	assert.Zero(t, ans.Cost)
	assert.Empty(t, fake.Completions())
}

// headersSeen is the default transport, telling when a response's headers
// have come.
type headersSeen struct{ got chan struct{} }

func (h headersSeen) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		h.got <- struct{}{}
	}
	return res, err
}

// TestAFallbackIsAskedOnItsOwn (issue 25): a call held on its own model
// alone fails on NEAR AI's side as ports.ErrModelUnavailable and is not
// retried there; FallbackFor is the same request on the fallback model,
// whose worst case carries the failed attempt's input at its own bound and
// price, and whose answer is charged that input (at the fallback's count,
// never past the bound) beside its own call, within its worst case.
func TestAFallbackIsAskedOnItsOwn(t *testing.T) {
	fake := nearaitest.New(t, nearaitest.Fail(http.StatusServiceUnavailable, "error_503.json"),
		nearaitest.Completion("fb", "openai/gpt-oss-120b", "The fallback's answer."))
	fake.OneTokenPerByte = true
	c, _ := newClient(t, fake)
	req := longRequest("the marketing DAO, please ", 20<<10)
	req.NoFallback = true
	w := c.WorstCall(req)
	require.Zero(t, w.FallbackInputTokensMax, "held on its own model alone")
	req.Held = &w
	_, err := c.Complete(t.Context(), req)
	require.ErrorIs(t, err, ports.ErrModelUnavailable)
	require.Len(t, fake.Completions(), 1, "not retried on the fallback by the adapter")

	freq, ok := c.FallbackFor(req, w)
	require.True(t, ok)
	assert.Equal(t, "openai/gpt-oss-120b", freq.Model)
	assert.Nil(t, freq.Held, "held again before it is sent")
	fw := c.WorstCall(freq)
	primary, fallback := nearai.Catalogue[0], mustFind(t, "openai/gpt-oss-120b")
	alone := freq
	alone.FallbackOf = nil
	assert.Equal(t, c.WorstCall(alone).Bill+primary.Cost(runs.Tokens{In: w.InputTokensMax}), fw.Bill,
		"the fallback's call and the failed attempt's input at its bound")
	freq.Held = &fw
	ans, err := c.Complete(t.Context(), freq)
	require.NoError(t, err)
	assert.True(t, ans.FallbackUsed)
	assert.Equal(t, "openai/gpt-oss-120b", ans.Model)
	assert.Equal(t, fallback.Cost(ans.Tokens)+primary.Cost(runs.Tokens{In: min(ans.Tokens.In, w.InputTokensMax)}), ans.Cost)
	assert.LessOrEqual(t, ans.Cost, fw.Bill)

	_, ok = c.FallbackFor(freq, fw)
	assert.False(t, ok, "a fallback has no fallback of its own")
	onFallback := req
	onFallback.Model = "openai/gpt-oss-120b"
	_, ok = c.FallbackFor(onFallback, w)
	assert.False(t, ok, "a call on the fallback model has none")
}

// TestAnAnswerStoppedAtMaxTokensSaysSo: finish_reason length is Truncated.
func TestAnAnswerStoppedAtMaxTokensSaysSo(t *testing.T) {
	fake := nearaitest.New(t, nearaitest.Truncated(nearaitest.Completion("t", "deepseek-ai/DeepSeek-V3.1", "The answer, cut sh")),
		nearaitest.Completion("u", "deepseek-ai/DeepSeek-V3.1", "The whole answer."))
	c, _ := newClient(t, fake)
	ans, err := c.Complete(t.Context(), request)
	require.NoError(t, err)
	assert.True(t, ans.Truncated)
	ans, err = c.Complete(t.Context(), request)
	require.NoError(t, err)
	assert.False(t, ans.Truncated)
}
