// Package nearrpctest is a fake NEAR RPC server for tests: an httptest server
// speaking NEAR's JSON-RPC, answering from recordings in the real wire shape
// (testdata/*.json, embedded, so any package's tests can use them), and able
// to misbehave on demand (HTTP errors, hanging until the caller gives up).
//
// The recordings are hand-made in the real shape documented by NEAR (the RPC
// docs and NEAR.md), not captured from a live node: this build has no
// network besides package registries.
//
// A recording is one file, testdata/<name>.json:
//
//	{ "method": "query",
//	  "params": { "request_type": "call_function", "account_id": "x.near",
//	              "method_name": "get_policy", "args_base64": "e30=", "finality": "final" },
//	  "response": { "jsonrpc": "2.0", "id": "dontcare", "result": { … } } }
//
// "response" is the whole JSON-RPC answer as a node sends it (its id is
// replaced by the request's). A request matches a recording on its method
// and params, ignoring finality and block_id, and comparing call arguments as
// canonical JSON rather than as base64 text. "status" (optional) sets the
// HTTP status the answer goes with.
//
// Writing call_function recordings by hand is tedious (the result is an
// array of byte values), so each one has a readable source,
// testdata/sources/<name>.json:
//
//	{ "contract": "x.near", "method": "get_policy", "args": {…},
//	  "result": <the method's JSON answer>            // or
//	  "result_base64": "AQID…"                        // bytes that aren't JSON, or
//	  "result_error": "wasm execution failed …"       // the old quirk, or
//	  "rpc_error": { "name": "HANDLER_ERROR", "cause": {…}, … } }
//
// and `go test ./adapters/nearrpc/nearrpctest -run TestRecordingsUpToDate
// -write-recordings` regenerates testdata/<name>.json from it (the test fails
// when they differ). Recordings of other methods (block, view_account, tx,
// view_access_key …) are written directly in testdata/ in the wire shape.
package nearrpctest

import (
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/canon"
)

//go:embed testdata/*.json
var recorded embed.FS

// Recording is one recorded exchange.
type Recording struct {
	Name     string          `json:"-"`
	Method   string          `json:"method"`
	Params   json.RawMessage `json:"params"`
	Response json.RawMessage `json:"response"`
	Status   int             `json:"status,omitempty"`
}

// Call is one request the fake received.
type Call struct {
	Method   string
	Contract string // account_id of a query
	Function string // method_name of a call_function
	Args     string // a call_function's arguments, decoded
	BlockID  string // the block_id asked for, as sent ("" for a finality)
	Key      string
}

// Fault makes matching requests misbehave. Empty match fields match anything.
type Fault struct {
	Method   string // JSON-RPC method
	Contract string // a query's account_id
	Function string // a call_function's method_name
	// Times is how many matching requests it affects; 0 means all of them.
	Times int
	// Status answers with this HTTP status and a plain body (a 5xx from a
	// proxy in front of the node, say).
	Status int
	// RetryAfter, with Status, is the Retry-After header's seconds (a 429
	// from a rate-limited node).
	RetryAfter string
	// Hang holds the request until the caller gives up (its timeout).
	Hang bool
	// Hold keeps the request until the channel is closed, then answers it
	// from the recordings as if there were no fault: a call the test keeps
	// in flight for as long as it needs.
	Hold <-chan struct{}
}

// Server is the fake. Its URL goes where the real RPC's would.
type Server struct {
	URL     string
	t       testing.TB
	srv     *httptest.Server
	mu      sync.Mutex
	answers map[string]Recording
	faults  []*Fault
	calls   []Call
	missing []string
	stop    chan struct{}
	// SocialDB's data by contract, written by SocialSet (socialdb.go).
	social      map[string]*socialNode
	socialBlock uint64
}

// New starts a fake loaded with every embedded recording, closed when t ends.
// A request with no recording fails the test at its end.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, answers: map[string]Recording{}, stop: make(chan struct{})}
	for _, r := range Embedded(t) {
		s.Add(r)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(func() {
		close(s.stop) // let hanging requests go before Close waits for them
		s.srv.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		if len(s.missing) > 0 {
			t.Errorf("nearrpctest: no recording for %d request(s): %s", len(s.missing), strings.Join(s.missing, "; "))
		}
	})
	return s
}

// Embedded is every recording shipped in testdata.
func Embedded(t testing.TB) []Recording {
	t.Helper()
	var out []Recording
	files, _ := fs.Glob(recorded, "testdata/*.json")
	for _, f := range files {
		b, err := recorded.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r Recording
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("nearrpctest: %s: %v", f, err)
		}
		r.Name = strings.TrimSuffix(path.Base(f), ".json")
		out = append(out, r)
	}
	return out
}

// Add adds (or replaces) a recording.
func (s *Server) Add(r Recording) {
	key, err := requestKey(r.Method, r.Params)
	if err != nil {
		s.t.Fatalf("nearrpctest: recording %s: %v", r.Name, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[key] = r
}

// Inject adds a fault; the newest matching fault wins.
func (s *Server) Inject(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &f)
}

// Calls is every request received so far, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CountCalls counts the requests for one function (or JSON-RPC method when
// the function is empty).
func (s *Server) CountCalls(function string) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Function == function || (c.Function == "" && c.Method == function) {
			n++
		}
	}
	return n
}

type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req rpcRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeRPCError(w, http.StatusBadRequest, `null`, "REQUEST_VALIDATION_ERROR", "PARSE_ERROR", "Parse error")
		return
	}
	call := describe(req.Method, req.Params)
	key, err := requestKey(req.Method, req.Params)
	if err != nil {
		writeRPCError(w, http.StatusBadRequest, string(req.ID), "REQUEST_VALIDATION_ERROR", "PARSE_ERROR", err.Error())
		return
	}
	call.Key = key
	s.mu.Lock()
	s.calls = append(s.calls, call)
	fault := s.fault(call)
	rec, ok := s.answers[key]
	var social []byte
	var socialErr error
	if req.Method == "query" {
		var isSocial bool
		social, isSocial, socialErr = s.socialAnswer(req.Params)
		ok = ok || isSocial
	}
	if !ok && (fault == nil || fault.Hold != nil) {
		s.missing = append(s.missing, key)
	}
	s.mu.Unlock()

	if fault != nil && fault.Hold != nil {
		select {
		case <-fault.Hold:
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		}
		fault = nil
	}
	if fault != nil {
		if fault.Hang {
			select {
			case <-r.Context().Done():
			case <-s.stop:
			case <-time.After(time.Minute):
			}
			return
		}
		if fault.RetryAfter != "" {
			w.Header().Set("Retry-After", fault.RetryAfter)
		}
		http.Error(w, http.StatusText(fault.Status), fault.Status)
		return
	}
	if !ok {
		writeRPCError(w, http.StatusOK, string(req.ID), "HANDLER_ERROR", "PETAL_FAKE_NO_RECORDING", "nearrpctest has no recording for "+key)
		return
	}
	if socialErr != nil {
		writeRPCError(w, http.StatusOK, string(req.ID), "HANDLER_ERROR", "CONTRACT_EXECUTION_ERROR", socialErr.Error())
		return
	}
	if social != nil {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(callResultAnswer(req.ID, social))
		return
	}
	status := rec.Status
	if status == 0 {
		status = http.StatusOK
	}
	var resp map[string]json.RawMessage
	_ = json.Unmarshal(rec.Response, &resp)
	if len(req.ID) > 0 {
		resp["id"] = req.ID
	}
	out, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// fault finds the newest live fault matching call and uses it up. Callers
// hold mu.
func (s *Server) fault(c Call) *Fault {
	for i := len(s.faults) - 1; i >= 0; i-- {
		f := s.faults[i]
		if (f.Method != "" && f.Method != c.Method) || (f.Contract != "" && f.Contract != c.Contract) ||
			(f.Function != "" && f.Function != c.Function) {
			continue
		}
		if f.Times < 0 {
			continue // used up
		}
		if f.Times > 0 {
			f.Times--
			if f.Times == 0 {
				f.Times = -1
			}
		}
		return f
	}
	return nil
}

func writeRPCError(w http.ResponseWriter, status int, id, name, cause, data string) {
	if id == "" {
		id = `"dontcare"`
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	d, _ := json.Marshal(data)
	fmt.Fprintf(w, `{"jsonrpc":"2.0","error":{"name":%q,"cause":{"name":%q,"info":{}},"code":-32000,"message":"Server error","data":%s},"id":%s}`,
		name, cause, d, id)
}

func describe(method string, params json.RawMessage) Call {
	c := Call{Method: method}
	var p struct {
		AccountID  string          `json:"account_id"`
		MethodName string          `json:"method_name"`
		ArgsBase64 string          `json:"args_base64"`
		BlockID    json.RawMessage `json:"block_id"`
	}
	_ = json.Unmarshal(params, &p)
	c.Contract, c.Function, c.BlockID = p.AccountID, p.MethodName, string(p.BlockID)
	if b, err := base64.StdEncoding.DecodeString(p.ArgsBase64); err == nil {
		c.Args = string(b)
	}
	return c
}

// requestKey is what a request is matched on: its method and params without
// finality or block_id, with call arguments decoded and canonical.
func requestKey(method string, params json.RawMessage) (string, error) {
	var p map[string]any
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return "", fmt.Errorf("params: %w", err)
		}
	}
	delete(p, "finality")
	delete(p, "block_id")
	if a, ok := p["args_base64"].(string); ok {
		raw, err := base64.StdEncoding.DecodeString(a)
		if err != nil {
			return "", fmt.Errorf("args_base64: %w", err)
		}
		if len(raw) == 0 {
			raw = []byte("{}")
		}
		args, err := canon.Transform(raw)
		if err != nil {
			return "", fmt.Errorf("args: %w", err)
		}
		delete(p, "args_base64")
		p["args"] = string(args)
	}
	c, err := canon.Marshal(p)
	if err != nil {
		return "", err
	}
	return method + " " + string(c), nil
}
