// Package bravetest is a fake Brave Search API for tests: an httptest server
// answering GET /res/v1/web/search in the real wire shape (a
// WebSearchApiResponse: type, query, web.results with title, url,
// description — matches marked with <strong> — and age), checking the
// X-Subscription-Token header as the real one does.
package bravetest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
)

// Key is the key the fake accepts.
const Key = "BSA-test-key"

// Result is one web result as Brave sends it.
type Result struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	Description string `json:"description"`
	Age         string `json:"age,omitempty"`
	Type        string `json:"type"`
}

// Server is the fake.
type Server struct {
	URL string
	mu  sync.Mutex
	// Answers maps a query (as sent) to its results; any other query has none.
	answers map[string][]Result
	limited bool
	queries []string
}

// New starts a fake, closed when t ends, answering "near dao" with three
// results.
func New(t testing.TB) *Server {
	s := &Server{answers: map[string][]Result{
		"near dao": {
			{Title: "Sputnik <strong>DAO</strong> on <strong>NEAR</strong>", URL: "https://example.org/sputnik", Description: "How <strong>DAOs</strong> on NEAR keep their members &amp; proposals.", Age: "2 days ago", Type: "search_result"},
			{Title: "AstroDAO", URL: "https://example.org/astro", Description: "A front end for Sputnik DAOs.", Type: "search_result"},
			{Title: "not the web", URL: "javascript:alert(1)", Description: "dropped", Type: "search_result"},
		},
	}}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = srv.URL
	t.Cleanup(srv.Close)
	return s
}

// Answer sets the results for a query.
func (s *Server) Answer(query string, results []Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[query] = results
}

// Limit makes every request answer 429 (the plan's rate limit).
func (s *Server) Limit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited = true
}

// Queries is every query received.
func (s *Server) Queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.queries...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path != "/res/v1/web/search" || r.Method != http.MethodGet {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"type":"ErrorResponse","error":{"code":"RESOURCE_NOT_FOUND","status":404}}`))
		return
	}
	if r.Header.Get("X-Subscription-Token") != Key {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"type":"ErrorResponse","error":{"id":"x","status":401,"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid."}}`))
		return
	}
	q := r.URL.Query().Get("q")
	s.mu.Lock()
	s.queries = append(s.queries, q)
	limited, results := s.limited, s.answers[q]
	s.mu.Unlock()
	if limited {
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"type":"ErrorResponse","error":{"id":"x","status":429,"code":"RATE_LIMITED","detail":"Request rate limit exceeded for plan."}}`))
		return
	}
	if q == "" || len(q) > 400 {
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = w.Write([]byte(`{"type":"ErrorResponse","error":{"id":"x","status":422,"code":"VALIDATION","detail":"Unable to validate request parameter(s)"}}`))
		return
	}
	if n, err := strconv.Atoi(r.URL.Query().Get("count")); err == nil && n < len(results) {
		results = results[:n]
	}
	if results == nil {
		results = []Result{}
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"type":  "search",
		"query": map[string]any{"original": q, "show_strict_warning": false, "is_navigational": false, "spellcheck_off": true, "country": "us"},
		"mixed": map[string]any{"type": "mixed", "main": []any{}},
		"web":   map[string]any{"type": "search", "family_friendly": true, "results": results},
	})
}
