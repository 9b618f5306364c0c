// Package nearaitest is a fake NEAR AI for tests: an httptest server that
// speaks the OpenAI-compatible wire protocol with answers in NEAR AI's real
// shapes (testdata), scripted one completion at a time, plus the signature
// and attestation report endpoints.
package nearaitest

import (
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

//go:embed testdata/*.json
var testdata embed.FS

// File is a testdata file's bytes.
func File(name string) []byte {
	b, err := testdata.ReadFile("testdata/" + name)
	if err != nil {
		panic(err)
	}
	return b
}

// Answer is one scripted answer to POST /chat/completions.
type Answer struct {
	Status int
	Body   []byte
}

// Recorded is a completion answer from testdata, 200.
func Recorded(name string) Answer { return Answer{Status: http.StatusOK, Body: File(name)} }

// Fail is an error answer from testdata with its status.
func Fail(status int, name string) Answer { return Answer{Status: status, Body: File(name)} }

// Truncated is completion a stopped at its max_tokens: finish_reason
// "length", as NEAR AI answers a call cut short by it.
func Truncated(a Answer) Answer {
	var c map[string]any
	if json.Unmarshal(a.Body, &c) != nil {
		return a
	}
	if choices, ok := c["choices"].([]any); ok && len(choices) > 0 {
		if ch, ok := choices[0].(map[string]any); ok {
			ch["finish_reason"] = "length"
		}
	}
	a.Body, _ = json.Marshal(c)
	return a
}

// Call is a tool call of a scripted completion.
type Call struct {
	Name string
	Args string // JSON
}

// Completion builds a completion in NEAR AI's real shape.
func Completion(id, model, content string, calls ...Call) Answer {
	var tcs []map[string]any
	for i, c := range calls {
		tcs = append(tcs, map[string]any{"id": fmt.Sprintf("chatcmpl-tool-%s-%d", id, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": c.Args}})
	}
	var contentValue any = content
	if content == "" {
		contentValue = nil
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	if tcs == nil {
		tcs = []map[string]any{}
	}
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-" + id, "object": "chat.completion", "created": 1764460800, "model": model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": contentValue,
			"reasoning_content": nil, "tool_calls": tcs}, "logprobs": nil, "finish_reason": finish, "stop_reason": nil}},
		"usage":           map[string]any{"prompt_tokens": 1000, "total_tokens": 1100, "completion_tokens": 100, "prompt_tokens_details": map[string]any{"cached_tokens": 200}},
		"prompt_logprobs": nil,
	})
	return Answer{Status: http.StatusOK, Body: b}
}

// Request is one request the fake received.
type Request struct {
	Path          string
	Authorization string
	Body          map[string]any
	Bytes         int // the body's length
	// Usage is the usage the fake answered a completion with (200 only).
	Usage Usage
}

// Usage is a completion's usage as the fake counted it.
type Usage struct {
	PromptTokens, CompletionTokens int64
}

// Server is the fake.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	script   []Answer
	requests []Request
	// Hold, when set, is waited on before each completion answers (a slow
	// model), unless the request is cancelled.
	Hold chan struct{}
	// Holding, when set with Hold, gets a value (if it has room) as each
	// completion starts waiting on Hold: a test's sign the call is in flight.
	Holding chan struct{}
	// HeadersFirst, with Hold, sends a completion's 200 and its headers
	// (Inference-Id among them) before waiting, as a server that answers
	// headers early does: a call cut then knows its inference id.
	HeadersFirst bool
	// OneTokenPerByte makes every completion's usage say one prompt token
	// per byte of the request's body, none cached (what a byte-level
	// tokenizer makes of rare scripts): the most an input can be billed.
	OneTokenPerByte bool
	// Tokenize makes every completion's usage count the request as a
	// tokenizer would (Tokens: about four bytes a token, each part of the
	// chat template on its own) and the answer's words and tool calls the
	// same way, none cached: deterministic, and what petal's bounds must hold.
	Tokenize bool
	// overReport is added to every Tokenize'd prompt_tokens (SetOverReport):
	// a provider billing more input than it was sent.
	overReport int64
	// prices is the model list GET /v1/model/list answers (SetPrices).
	prices []ModelPrice
	// listStatus, when set, is the model list's status instead (SetPrices).
	listStatus int
}

// SetOverReport makes every later Tokenize'd completion report n more
// prompt tokens than its request has.
func (s *Server) SetOverReport(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.overReport = n
}

// New starts the fake with scripted completions, answered in order; past the
// script every completion is a plain text answer.
func New(t testing.TB, script ...Answer) *Server {
	s := &Server{script: script}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.completions)
	mux.HandleFunc("GET /v1/model/list", s.modelList)
	mux.HandleFunc("GET /v1/signature/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.record(r, nil)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(File("signature.json"))
	})
	mux.HandleFunc("GET /v1/attestation/report", func(w http.ResponseWriter, r *http.Request) {
		s.record(r, nil)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(File("attestation_report.json"))
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// BaseURL is NEAR_AI_BASE_URL for this fake.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Requests is what the fake received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Completions counts the completion requests received.
func (s *Server) Completions() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) record(r *http.Request, body map[string]any) { s.recordBytes(r, body, 0) }

// recordBytes keeps a request and answers its place, for its usage later.
func (s *Server) recordBytes(r *http.Request, body map[string]any, n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), Body: body, Bytes: n})
	return len(s.requests) - 1
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error","param":null,"code":null}}`, http.StatusBadRequest)
		return
	}
	at := s.recordBytes(r, body, len(raw))
	early := false
	if s.Hold != nil {
		if s.HeadersFirst {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Inference-Id", InferenceID)
			w.WriteHeader(http.StatusOK)
			_ = http.NewResponseController(w).Flush()
			early = true
		}
		select {
		case s.Holding <- struct{}{}:
		default:
		}
		select {
		case <-s.Hold:
		case <-r.Context().Done():
			return
		}
	}
	s.mu.Lock()
	a := Completion("fallthrough", "deepseek-ai/DeepSeek-V3.1", "That is all I can say.")
	if len(s.script) > 0 {
		a, s.script = s.script[0], s.script[1:]
	}
	perByte, tokenize, over := s.OneTokenPerByte, s.Tokenize, s.overReport
	s.mu.Unlock()
	var usage Usage
	switch {
	case a.Status != http.StatusOK:
	case perByte:
		usage = Usage{PromptTokens: int64(len(raw))}
		a.Body, usage.CompletionTokens = withUsage(a.Body, usage.PromptTokens, -1)
	case tokenize:
		usage = Usage{PromptTokens: Tokens(raw) + over, CompletionTokens: answerTokens(a.Body)}
		a.Body, _ = withUsage(a.Body, usage.PromptTokens, usage.CompletionTokens)
	default:
		usage = Usage{PromptTokens: 1000, CompletionTokens: 100}
	}
	s.mu.Lock()
	s.requests[at].Usage = usage
	s.mu.Unlock()
	if !early {
		w.Header().Set("Content-Type", "application/json")
		if a.Status == http.StatusOK {
			w.Header().Set("Inference-Id", InferenceID)
		}
		w.WriteHeader(a.Status)
	}
	_, _ = w.Write(a.Body)
}

// InferenceID is the Inference-Id header of every answer the fake gives.
const InferenceID = "5f0c6d1e-2b3a-5c4d-8e9f-0a1b2c3d4e5f"

// withUsage rewrites a completion's usage to prompt tokens, none cached,
// and completion tokens (below zero: the completion's own, kept), and
// answers the completion tokens it wrote.
func withUsage(body []byte, prompt, completion int64) ([]byte, int64) {
	var c map[string]json.RawMessage
	var u struct {
		CompletionTokens int64 `json:"completion_tokens"`
	}
	if json.Unmarshal(body, &c) != nil {
		return body, 0
	}
	_ = json.Unmarshal(c["usage"], &u)
	if completion < 0 {
		completion = u.CompletionTokens
	}
	c["usage"], _ = json.Marshal(map[string]any{"prompt_tokens": prompt, "completion_tokens": completion,
		"total_tokens": prompt + completion, "prompt_tokens_details": map[string]any{"cached_tokens": 0}})
	out, err := json.Marshal(c)
	if err != nil {
		return body, completion
	}
	return out, completion
}

// Script adds completions to the end of the fake's script, for a test that
// builds them after the fake has started.
func (s *Server) Script(answers ...Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, answers...)
}
