// Package fastneartest is a fake of FastNEAR's API in its wire shape
// (GET /v1/ft/{token_id}/top), answering from what a test sets.
package fastneartest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// Holder is one account and the balance the index last knew.
type Holder struct {
	AccountID string  `json:"account_id"`
	Balance   *string `json:"balance"`
}

// Server is the fake.
type Server struct {
	*httptest.Server
	mu     sync.Mutex
	tokens map[string][]Holder
	calls  atomic.Int64
}

// New starts a fake; it stops when the test ends.
func New(t testing.TB) *Server {
	s := &Server{tokens: map[string][]Holder{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Set makes token's top holders these, in this order.
func (s *Server) Set(token string, holders ...Holder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = holders
}

// Calls is how many requests the fake answered.
func (s *Server) Calls() int64 { return s.calls.Load() }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	token, ok := strings.CutPrefix(r.URL.Path, "/v1/ft/")
	token, ok2 := strings.CutSuffix(token, "/top")
	if r.Method != http.MethodGet || !ok || !ok2 {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	holders := s.tokens[token]
	s.mu.Unlock()
	// FastNEAR answers an unknown token with an empty list.
	if holders == nil {
		holders = []Holder{}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"token_id": token, "accounts": holders})
}
