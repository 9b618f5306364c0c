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
}

// New starts the fake with scripted completions, answered in order; past the
// script every completion is a plain text answer.
func New(t testing.TB, script ...Answer) *Server {
	s := &Server{script: script}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.completions)
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

func (s *Server) record(r *http.Request, body map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), Body: body})
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error","param":null,"code":null}}`, http.StatusBadRequest)
		return
	}
	s.record(r, body)
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
	perByte := s.OneTokenPerByte
	s.mu.Unlock()
	if perByte && a.Status == http.StatusOK {
		a.Body = withPromptTokens(a.Body, int64(len(raw)))
	}
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

// withPromptTokens rewrites a completion's usage to prompt tokens, none
// cached, keeping its completion tokens.
func withPromptTokens(body []byte, prompt int64) []byte {
	var c map[string]json.RawMessage
	var u struct {
		CompletionTokens int64 `json:"completion_tokens"`
	}
	if json.Unmarshal(body, &c) != nil {
		return body
	}
	_ = json.Unmarshal(c["usage"], &u)
	c["usage"], _ = json.Marshal(map[string]any{"prompt_tokens": prompt, "completion_tokens": u.CompletionTokens,
		"total_tokens": prompt + u.CompletionTokens, "prompt_tokens_details": map[string]any{"cached_tokens": 0}})
	out, err := json.Marshal(c)
	if err != nil {
		return body
	}
	return out
}
