// Package nearai is the model provider on NEAR AI's OpenAI-compatible API,
// over plain net/http: non-streamed chat completions with tool calls (so each
// can carry a TEE signature), the completion's signature, and the attestation
// report behind it, stored by its SHA-256. A model catalogue is the
// allow-list, with list prices for the ledger and one fallback model.
package nearai

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// Options configure the client. Every option is explicit: nothing is read
// from the environment here.
type Options struct {
	BaseURL  string // https://cloud-api.near.ai/v1
	Key      string
	Model    string // the default model; must be in the catalogue
	Fallback string // tried once when the default fails on NEAR AI's side
	HTTP     *http.Client
	// Metrics receives each completion's outcome and time (nil: none kept).
	Metrics ports.Metrics
	// Counts keeps what NEAR AI counted of each request, so later calls
	// starting with the same bytes are held at its count (nil: every call
	// is held at one token a byte).
	Counts ports.PromptCounts
	// Log gets what an operator must see (nil: discarded).
	Log *slog.Logger
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// PricesEvery is how often NEAR AI's model list is read again for its
	// prices (0: DefaultPricesEvery; below zero: never, the shipped table).
	PricesEvery time.Duration
}

// Client is the NEAR AI model provider.
type Client struct {
	opt      Options
	model    Model
	fallback Model
	attest   ports.Attestations
	calls    ports.Histogram
	inFlight ports.Gauge
	log      *slog.Logger
	now      func() time.Time
	// bounds counts the input bounds found, by model and source; exceeded
	// the calls NEAR AI counted past a learned bound (each distrusts its
	// model); ratio is each call's bound over what was counted.
	bounds   ports.Counter
	exceeded ports.Counter
	ratio    ports.Histogram
	prices   priceList
}

var _ ports.ModelProvider = (*Client)(nil)

// New checks the options against the catalogue.
func New(opt Options, attest ports.Attestations) (*Client, error) {
	m, ok := Find(opt.Model)
	if !ok {
		return nil, fmt.Errorf("nearai: model %q is not in the catalogue", opt.Model)
	}
	f, ok := Find(opt.Fallback)
	if !ok {
		return nil, fmt.Errorf("nearai: fallback model %q is not in the catalogue", opt.Fallback)
	}
	if opt.HTTP == nil {
		opt.HTTP = &http.Client{Timeout: 120 * time.Second}
	}
	opt.BaseURL = strings.TrimRight(opt.BaseURL, "/")
	calls := ports.MetricsOrNone(opt.Metrics).Histogram("petal_model_call_duration_seconds",
		"Model completions asked of NEAR AI by model and outcome (ok, provider_failed: 5xx, 429 or no answer, cancelled, or the error's code), with their time; a fallback is a call of its own. _count is the calls.",
		[]float64{0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120}, "model", "outcome")
	inFlight := ports.MetricsOrNone(opt.Metrics).Gauge("petal_model_calls_in_flight",
		"Completions under way by model and phase: waiting (sent, no answer yet) or answering (the answer's headers came, its body is being read).",
		"model", "phase")
	c := &Client{opt: opt, model: m, fallback: f, attest: attest, calls: calls, inFlight: inFlight, log: opt.Log, now: opt.Now}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	metrics := ports.MetricsOrNone(opt.Metrics)
	c.bounds = metrics.Counter("petal_model_input_bounds_total",
		"Input bounds found for a model call's hold, by model and where they came from: bytes (one token a byte), prefix, other_head, head (NEAR AI's own counts kept), distrusted (bytes again: the model's counts were once passed), store_failed.",
		"model", "source")
	c.exceeded = metrics.Counter("petal_model_input_bound_exceeded_total",
		"Model calls NEAR AI counted more input for than the learned bound they were held at; each holds its model at one token a byte until an operator trusts it again (petal model trust).",
		"model")
	c.ratio = metrics.Histogram("petal_model_input_bound_ratio",
		"Each call's input bound over the input NEAR AI counted, by model and the bound's source.",
		[]float64{1, 1.1, 1.25, 1.5, 2, 3, 5, 10}, "model", "source")
	c.prices = newPriceList(c, metrics)
	return c, nil
}

// Name implements ports.ModelProvider.
func (c *Client) Name() string { return c.model.ID }

// Models implements ports.ModelProvider: the catalogue.
func (c *Client) Models() []ports.ModelOffer {
	out := make([]ports.ModelOffer, len(Catalogue))
	for i, m := range Catalogue {
		out[i] = ports.ModelOffer{ID: m.ID, Efforts: append([]string(nil), m.Efforts...)}
	}
	return out
}

// offers reports whether m takes effort.
func (m Model) offers(effort string) bool {
	for _, e := range m.Efforts {
		if e == effort {
			return true
		}
	}
	return false
}

// wire shapes of the OpenAI-compatible API.
type (
	wireRequest struct {
		Model     string        `json:"model"`
		Messages  []wireMessage `json:"messages"`
		Tools     []wireTool    `json:"tools,omitempty"`
		MaxTokens int           `json:"max_tokens,omitempty"`
		Stream    bool          `json:"stream"`
		// ReasoningEffort goes only to a model that takes it: a fallback
		// that doesn't answers without it.
		ReasoningEffort string `json:"reasoning_effort,omitempty"`
	}
	wireMessage struct {
		Role       string         `json:"role"`
		Content    *string        `json:"content"`
		ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
	}
	wireToolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	wireTool struct {
		Type     string       `json:"type"`
		Function wireFunction `json:"function"`
	}
	wireFunction struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	wireResponse struct {
		ID      string `json:"id"`
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Role      string         `json:"role"`
				Content   *string        `json:"content"`
				ToolCalls []wireToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens        int64 `json:"prompt_tokens"`
			CompletionTokens    int64 `json:"completion_tokens"`
			PromptTokensDetails *struct {
				CachedTokens int64 `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	wireError struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
)

// Complete implements ports.ModelProvider: the model asked, then once the
// fallback when NEAR AI failed on its side and the call may fall back. A 402
// is never retried on another model: the budget is the same whichever
// answers. Each attempt is checked against the input bound it was held at
// (req.Held, else the one found now), and its count kept.
func (c *Client) Complete(ctx context.Context, req ports.ModelRequest) (ports.ModelAnswer, error) {
	if req.Model != "" {
		if _, ok := Find(req.Model); !ok {
			return ports.ModelAnswer{}, errs.Newf(errs.BadInput, "model %s is not offered here", req.Model)
		}
	}
	held := req.Held
	if held == nil {
		w := c.WorstCallFor(ctx, req)
		held = &w
	}
	primary, fallback := c.models(req)
	if held.FallbackInputTokensMax == 0 {
		fallback = nil // the hold counted none
	}
	ps := shapeOf(primary, req)
	ans, err := c.complete(ctx, primary, req, ps, held.InputTokensMax, held.Source)
	if req.FallbackOf != nil {
		return c.afterFailed(ans, err, *req.FallbackOf)
	}
	if err == nil || !retryable(err) || ctx.Err() != nil || fallback == nil {
		return ans, err
	}
	failed := ans // what the failed attempt is known to have cost: its input, when it was cut
	fs := shapeOf(*fallback, req)
	ans, ferr := c.complete(ctx, *fallback, req, fs, held.FallbackInputTokensMax, "")
	if ferr != nil {
		// The fallback failed too, or was cut: what both are known to have
		// cost goes with the error. A cut fallback is billed, so the failed
		// attempt before it counts at the same input, as when it answers.
		if failed.Cost == 0 && ans.Cut {
			failed.Cost = primary.Cost(runs.Tokens{In: min(ans.Tokens.In, held.InputTokensMax)})
		}
		ans.Cost += failed.Cost
		return ans, ferr
	}
	ans.FallbackUsed = true
	// The failed attempt said nothing of its cost: it counts at the same
	// input in full, on its own model (the contract's done.cost_usd), and
	// never past the input it was held at (its own bound).
	ans.Cost += primary.Cost(runs.Tokens{In: min(ans.Tokens.In, held.InputTokensMax)})
	return ans, nil
}

// afterFailed is a fallback's answer (ans, err) with the attempt it fell
// back from counted: that attempt said nothing of its cost, so it counts at
// the fallback's input in full on its own model (the contract's
// done.cost_usd), never past the input it was held at. A fallback that
// failed before NEAR AI had it leaves nothing to count.
func (c *Client) afterFailed(ans ports.ModelAnswer, err error, failed ports.WorstCall) (ports.ModelAnswer, error) {
	if err != nil && !ans.Cut {
		return ans, err
	}
	ans.Cost += failedInput(failed, ans.Tokens.In)
	ans.FallbackUsed = err == nil
	return ans, err
}

// failedInput is what a failed attempt held at failed costs at in input
// tokens: never past its own bound, at the price it was held at (a price
// read meanwhile can't make it pass its hold).
func failedInput(failed ports.WorstCall, in int64) credit.Micros {
	return Model{InputPerMTok: failed.InPerMTok}.Cost(runs.Tokens{In: min(in, failed.InputTokensMax)})
}

// FallbackFor implements ports.ModelFallbacks: req on the fallback model,
// after req (held at failed) failed on NEAR AI's side; none when req was
// already on it.
func (c *Client) FallbackFor(req ports.ModelRequest, failed ports.WorstCall) (ports.ModelRequest, bool) {
	primary, _ := c.models(ports.ModelRequest{Model: req.Model})
	if req.FallbackOf != nil || primary.ID == c.fallback.ID {
		return ports.ModelRequest{}, false
	}
	req.Model, req.NoFallback, req.Held = c.fallback.ID, true, nil
	req.FallbackOf = &failed
	return req, true
}

// providerError is NEAR AI failing on its side (5xx, 429, no answer): the
// fallback may answer instead.
type providerError struct{ err error }

func (e *providerError) Error() string { return e.err.Error() }
func (e *providerError) Unwrap() error { return e.err }

// Is makes a provider's failure ports.ErrModelUnavailable to the app.
func (e *providerError) Is(target error) bool { return target == ports.ErrModelUnavailable }

func retryable(err error) bool {
	var pe *providerError
	return errors.As(err, &pe)
}

// complete asks model m once, and counts the call: held is the input bound
// it was held at (from src).
func (c *Client) complete(ctx context.Context, m Model, req ports.ModelRequest, s requestShape, held int64, src string) (ports.ModelAnswer, error) {
	start := time.Now()
	ans, err := c.completeOnce(ctx, m, req, min(held, s.byteBound))
	outcome := "ok"
	switch {
	case err == nil:
		c.check(ctx, s, held, src, ans.Tokens.In)
	case ctx.Err() != nil:
		outcome = "cancelled"
	case retryable(err):
		outcome = "provider_failed"
	default:
		outcome = "error"
		if e, ok := errs.As(err); ok {
			outcome = string(e.Code)
		}
	}
	c.calls.Observe(time.Since(start).Seconds(), m.ID, outcome)
	return ans, err
}

// wireBody is the request petal sends m for req.
func wireBody(m Model, req ports.ModelRequest) wireRequest {
	body := wireRequest{Model: m.ID, MaxTokens: req.MaxTokens, Stream: false}
	if req.Effort != "" && m.offers(req.Effort) {
		body.ReasoningEffort = req.Effort
	}
	for _, msg := range req.Messages {
		wm := wireMessage{Role: msg.Role, ToolCallID: msg.ToolCallID}
		content := msg.Content
		wm.Content = &content
		for _, tc := range msg.ToolCalls {
			var w wireToolCall
			w.ID, w.Type = tc.ID, "function"
			w.Function.Name, w.Function.Arguments = tc.Name, string(tc.Args)
			wm.ToolCalls = append(wm.ToolCalls, w)
		}
		if msg.Role == runs.RoleAssistant && len(wm.ToolCalls) > 0 && content == "" {
			wm.Content = nil
		}
		body.Messages = append(body.Messages, wm)
	}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, wireTool{Type: "function", Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	return body
}

// completeOnce asks m once; a call cut after NEAR AI had it is charged
// inputHeld, the input bound it was held at.
func (c *Client) completeOnce(ctx context.Context, m Model, req ports.ModelRequest, inputHeld int64) (ports.ModelAnswer, error) {
	raw, err := json.Marshal(wireBody(m, req))
	if err != nil {
		return ports.ModelAnswer{}, err
	}
	var sent atomic.Bool
	tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(w httptrace.WroteRequestInfo) { sent.Store(w.Err == nil) }})
	res, b, err := c.do(tctx, http.MethodPost, "/chat/completions", raw, m.ID)
	if err != nil {
		if sent.Load() && (ctx.Err() != nil || isTimeout(err)) {
			// Cut by a stop, the chat's time, or the client's timeout after
			// NEAR AI had the whole request: it bills the input at least.
			// Charged its input at the bound held for it; the inference id,
			// when the answer's headers came, lets reconciliation bring it
			// to NEAR AI's bill.
			cut := ports.ModelAnswer{Model: m.ID, Tokens: runs.Tokens{In: inputHeld}, Cost: m.Cost(runs.Tokens{In: inputHeld}), Cut: true}
			if res != nil {
				cut.InferenceID = res.Header.Get("Inference-Id")
			}
			return cut, err
		}
		return ports.ModelAnswer{}, err
	}
	if res.StatusCode != http.StatusOK {
		return ports.ModelAnswer{}, statusError(res.StatusCode, b)
	}
	var wr wireResponse
	if err := json.Unmarshal(b, &wr); err != nil || len(wr.Choices) == 0 {
		return ports.ModelAnswer{}, &providerError{errs.New(errs.SourceFailed, "the model's answer could not be read", "try again").WithCause(fmt.Errorf("decode completion: %v", err))}
	}
	ch := wr.Choices[0].Message
	ans := ports.ModelAnswer{Model: m.ID, ChatID: wr.ID, InferenceID: res.Header.Get("Inference-Id")}
	if wr.Model != "" {
		ans.Model = wr.Model
	}
	ans.Message.Role = runs.RoleAssistant
	if ch.Content != nil {
		ans.Message.Content = strings.TrimSpace(*ch.Content)
	}
	for _, tc := range ch.ToolCalls {
		args := json.RawMessage(tc.Function.Arguments)
		if !json.Valid(args) {
			args = json.RawMessage(`{}`)
		}
		ans.Message.ToolCalls = append(ans.Message.ToolCalls, runs.ToolCall{ID: tc.ID, Name: tc.Function.Name, Args: args})
	}
	ans.Truncated = wr.Choices[0].FinishReason == "length"
	ans.Tokens = runs.Tokens{In: wr.Usage.PromptTokens, Out: wr.Usage.CompletionTokens}
	if d := wr.Usage.PromptTokensDetails; d != nil {
		ans.Tokens.Cached = d.CachedTokens
	}
	ans.Cost = m.Cost(ans.Tokens)
	return ans, nil
}

// do sends one request and reads its answer whole. A completion names its
// model, and is counted in flight by phase while it waits and answers.
func (c *Client) do(ctx context.Context, method, path string, body []byte, completionOf string) (*http.Response, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.opt.BaseURL+path, r)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.opt.Key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if completionOf != "" {
		c.inFlight.Add(1, completionOf, "waiting")
	}
	res, err := c.opt.HTTP.Do(req)
	if completionOf != "" {
		c.inFlight.Add(-1, completionOf, "waiting")
		if err == nil {
			c.inFlight.Add(1, completionOf, "answering")
			defer c.inFlight.Add(-1, completionOf, "answering")
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, &providerError{errs.New(errs.SourceFailed, "the model did not answer", "try again in a moment").WithCause(err)}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		// The headers came (res is kept for them), the body was cut.
		if ctx.Err() != nil {
			return res, nil, ctx.Err()
		}
		return res, nil, &providerError{errs.New(errs.SourceFailed, "the model's answer was cut off", "try again").WithCause(err)}
	}
	return res, b, nil
}

// isTimeout reports whether err is the HTTP client's own timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Sign implements ports.ModelProvider: the completion's signature, and the
// attestation report of the model's enclave stored by its SHA-256.
func (c *Client) Sign(ctx context.Context, ans ports.ModelAnswer) (*runs.Signature, error) {
	if ans.ChatID == "" {
		return nil, errors.New("nearai: no completion id to sign")
	}
	q := url.Values{"model": {ans.Model}, "signing_algo": {"ecdsa"}}
	res, b, err := c.do(ctx, http.MethodGet, "/signature/"+url.PathEscape(ans.ChatID)+"?"+q.Encode(), nil, "")
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("nearai signature: %d", res.StatusCode)
	}
	var sig runs.Signature
	if err := json.Unmarshal(b, &sig); err != nil || sig.Signature == "" {
		return nil, fmt.Errorf("nearai signature: unreadable answer")
	}
	sig.ChatID, sig.Model = ans.ChatID, ans.Model
	nonce := make([]byte, 32)
	_, _ = rand.Read(nonce)
	q = url.Values{"model": {ans.Model}, "signing_algo": {sig.SigningAlgo}, "nonce": {hex.EncodeToString(nonce)}}
	res, report, err := c.do(ctx, http.MethodGet, "/attestation/report?"+q.Encode(), nil, "")
	if err == nil && res.StatusCode == http.StatusOK && json.Valid(report) {
		if sha, err := c.attest.Put(ctx, report); err == nil {
			sig.ReportSHA256 = sha
		}
	}
	return &sig, nil
}
