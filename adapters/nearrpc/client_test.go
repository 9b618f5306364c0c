package nearrpc

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// newClient's call timeout is only a safety net: a loaded machine (CI has
// two cores) can take well over 200 ms to answer on loopback.
func newClient(t *testing.T) (*Client, *nearrpctest.Server) {
	return newClientTimingOut(t, 30*time.Second)
}

// newClientTimingOut gives up on each call after callTimeout; a test of the
// timeout itself makes the fake hang, so a short one is safe there.
func newClientTimingOut(t *testing.T, callTimeout time.Duration) (*Client, *nearrpctest.Server) {
	fake := nearrpctest.New(t)
	c := New(Options{
		URLs:        map[string]string{"near:mainnet": fake.URL},
		CallTimeout: callTimeout,
		Attempts:    3,
		Backoff:     time.Millisecond,
	})
	return c, fake
}

func chainCause(t *testing.T, err error) string {
	t.Helper()
	ce, ok := errors.AsType[*ports.ChainError](err)
	if !ok {
		t.Fatalf("error %v carries no ChainError", err)
	}
	return ce.Cause
}

func TestFinalBlock(t *testing.T) {
	c, _ := newClient(t)
	b, err := c.FinalBlock(t.Context(), "near:mainnet")
	if err != nil {
		t.Fatal(err)
	}
	if b.Height != nearrpctest.RecordedHeight || b.Hash != nearrpctest.RecordedHash || b.Time != nearrpctest.RecordedTime {
		t.Fatalf("block %+v", b)
	}
}

func TestCallFunctionDecodesTheResultBytes(t *testing.T) {
	c, fake := newClient(t)
	out, err := c.CallFunction(t.Context(), "near:mainnet", nearrpctest.RecordedHeight, "marketing.sputnik-dao.near", "get_config", nil)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct{ Name, Purpose string }
	if err := json.Unmarshal(out, &cfg); err != nil || cfg.Name != "marketing" {
		t.Fatalf("config %s: %v", out, err)
	}
	// Arguments match whatever order the client writes them in.
	out, err = c.CallFunction(t.Context(), "near:mainnet", 0, "usdt.tether-token.near", "ft_balance_of", map[string]string{"account_id": "alice.near"})
	if err != nil || string(out) != `"1250000000"` {
		t.Fatalf("balance %s: %v", out, err)
	}
	calls := fake.Calls()
	if len(calls) != 2 || calls[1].Args != `{"account_id":"alice.near"}` {
		t.Fatalf("calls %+v", calls)
	}
}

func TestErrorsAreMappedToPetalCodes(t *testing.T) {
	cases := []struct {
		name, contract, method string
		code                   errs.Code
		cause                  string
	}{
		{"unknown account, structured error", "nope.sputnik-dao.near", "get_config", errs.NotFound, "UNKNOWN_ACCOUNT"},
		{"no contract, old result-with-error quirk", "alice.near", "get_config", errs.NotFound, "NO_CONTRACT_CODE"},
		{"contract panics, old quirk", "broken.sputnik-dao.near", "get_policy", errs.CannotRead, "CONTRACT_EXECUTION_ERROR"},
		{"contract panics, structured error", "broken.sputnik-dao.near", "get_last_proposal_id", errs.CannotRead, "CONTRACT_EXECUTION_ERROR"},
		{"method not found, structured error", "broken.poolv1.near", "get_number_of_accounts", errs.CannotRead, "CONTRACT_EXECUTION_ERROR"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, fake := newClient(t)
			_, err := c.CallFunction(t.Context(), "near:mainnet", 0, tc.contract, tc.method, nil)
			if !errs.Is(err, tc.code) {
				t.Fatalf("want %s, got %v", tc.code, err)
			}
			if got := chainCause(t, err); got != tc.cause {
				t.Fatalf("cause %s, want %s", got, tc.cause)
			}
			if e, _ := errs.As(err); e.Message == "" || containsAny(e.Message, "wasm", "panicked", "HANDLER_ERROR") {
				t.Fatalf("message must be plain, without upstream detail: %q", e.Message)
			}
			if n := len(fake.Calls()); n != 1 {
				t.Fatalf("a chain answer is not retried: %d calls", n)
			}
		})
	}
}

func TestRetriesOn5xxThenSucceeds(t *testing.T) {
	c, fake := newClient(t)
	fake.Inject(nearrpctest.Fault{Method: "block", Times: 2, Status: http.StatusBadGateway})
	if _, err := c.FinalBlock(t.Context(), "near:mainnet"); err != nil {
		t.Fatalf("third attempt should succeed: %v", err)
	}
	if n := fake.CountCalls("block"); n != 3 {
		t.Fatalf("%d calls, want 3", n)
	}
}

func TestRetriesAreBounded(t *testing.T) {
	c, fake := newClient(t)
	fake.Inject(nearrpctest.Fault{Method: "block", Status: http.StatusServiceUnavailable})
	_, err := c.FinalBlock(t.Context(), "near:mainnet")
	if !errs.Is(err, errs.SourceFailed) || chainCause(t, err) != "HTTP_5XX" {
		t.Fatalf("want source_failed HTTP_5XX, got %v", err)
	}
	if n := fake.CountCalls("block"); n != 3 {
		t.Fatalf("%d calls, want 3 attempts", n)
	}
}

func TestATimeoutIsSourceFailed(t *testing.T) {
	c, fake := newClientTimingOut(t, 200*time.Millisecond)
	fake.Inject(nearrpctest.Fault{Function: "get_policy", Hang: true})
	_, err := c.CallFunction(t.Context(), "near:mainnet", 0, "marketing.sputnik-dao.near", "get_policy", nil)
	if !errs.Is(err, errs.SourceFailed) || chainCause(t, err) != "TIMEOUT" {
		t.Fatalf("want source_failed TIMEOUT, got %v", err)
	}
	if n := fake.CountCalls("get_policy"); n != 3 {
		t.Fatalf("a timed-out call is retried: %d calls, want 3", n)
	}
}

func TestUnknownChainIsBadInput(t *testing.T) {
	c, _ := newClient(t)
	if _, err := c.FinalBlock(t.Context(), "near:betanet"); !errs.Is(err, errs.BadInput) {
		t.Fatalf("got %v", err)
	}
}

// Both shapes of the unknown-key quirk: a result carrying an error string
// (older nodes) and a structured UNKNOWN_ACCESS_KEY error (newer ones).
func TestUnknownAccessKeyBothShapes(t *testing.T) {
	c, fake := newClient(t)
	params := json.RawMessage(`{"request_type":"view_access_key","account_id":"alice.near","public_key":"ed25519:DcA2MzgpJbrUATQLLceocVckhhAqrkingax4oJ9kZ847"}`)
	fake.Add(nearrpctest.Recording{Method: "query", Params: params, Response: json.RawMessage(`{"jsonrpc":"2.0","id":"dontcare","result":{"error":"access key ed25519:DcA2MzgpJbrUATQLLceocVckhhAqrkingax4oJ9kZ847 does not exist while viewing","logs":[],"block_height":131000000,"block_hash":"4kbcD3NeZ7Gf8VQ5cFmLQAk1VtUTXK6wzCZnhZqK1nUj"}}`)})
	var raw json.RawMessage
	if err := c.call(t.Context(), "near:mainnet", "query", params, &raw); err != nil {
		t.Fatal(err)
	}
	err := resultError(raw)
	if !errs.Is(err, errs.NotFound) || chainCause(t, err) != "UNKNOWN_ACCESS_KEY" {
		t.Fatalf("old shape: %v", err)
	}

	fake.Add(nearrpctest.Recording{Method: "query", Params: params, Response: json.RawMessage(`{"jsonrpc":"2.0","id":"dontcare","error":{"name":"HANDLER_ERROR","cause":{"name":"UNKNOWN_ACCESS_KEY","info":{"public_key":"ed25519:DcA2MzgpJbrUATQLLceocVckhhAqrkingax4oJ9kZ847","block_height":131000000,"block_hash":"4kbcD3NeZ7Gf8VQ5cFmLQAk1VtUTXK6wzCZnhZqK1nUj"}},"code":-32000,"message":"Server error","data":"Access key for public key ed25519:DcA2MzgpJbrUATQLLceocVckhhAqrkingax4oJ9kZ847 has never been observed on the node"}}`)})
	err = c.call(t.Context(), "near:mainnet", "query", params, &raw)
	if !errs.Is(err, errs.NotFound) || chainCause(t, err) != "UNKNOWN_ACCESS_KEY" {
		t.Fatalf("structured shape: %v", err)
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// A chain that can't be reached says which address failed and why, and its
// hint names the setting: a wrong address or DNS is not "NEAR is busy".
func TestAnUnreachableChainSaysWhereAndWhy(t *testing.T) {
	refused := net.ListenConfig{}
	ln, err := refused.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close() // nothing listens there now: the connection is refused

	hang, err := refused.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hang.Close() // accepts (the kernel's backlog) and never answers

	// A resolver that knows no such host, as DNS answers for a typo.
	noHost := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, _ := net.SplitHostPort(addr)
		return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
	}}}
	cases := []struct {
		name, url, want, cause string
		client                 *http.Client
		timeout                time.Duration
	}{
		{"refused", "http://" + closedAddr + "/rpc?key=secret", "NEAR's RPC at http://" + closedAddr + " could not be reached: the connection was refused", "TRANSPORT", http.DefaultClient, 5 * time.Second},
		{"no such host", "https://rpc.mainnet.nera.org", "NEAR's RPC at https://rpc.mainnet.nera.org could not be reached: no such host (rpc.mainnet.nera.org)", "TRANSPORT", noHost, 5 * time.Second},
		{"timeout", "http://" + hang.Addr().String(), "NEAR's RPC at http://" + hang.Addr().String() + " did not answer in time", "TIMEOUT", http.DefaultClient, 100 * time.Millisecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := New(Options{URLs: map[string]string{"near:mainnet": tc.url}, CallTimeout: tc.timeout, Attempts: 1, HTTPClient: tc.client})
			_, err := c.FinalBlock(t.Context(), "near:mainnet")
			e, ok := errs.As(err)
			if !ok {
				t.Fatalf("%v is not petal's error", err)
			}
			if e.Code != errs.SourceFailed || e.Message != tc.want || chainCause(t, err) != tc.cause {
				t.Fatalf("got %s %q (%s), want %q (%s)", e.Code, e.Message, chainCause(t, err), tc.want, tc.cause)
			}
			if !strings.Contains(e.Hint, "PETAL_NEAR_RPC_MAINNET") || strings.Contains(e.Message+e.Hint, "secret") {
				t.Fatalf("hint %q", e.Hint)
			}
		})
	}
}

// A 429 is retried, after the Retry-After the node asked for.
func TestA429IsRetriedAfterItsRetryAfter(t *testing.T) {
	c, fake := newClient(t)
	fake.Inject(nearrpctest.Fault{Method: "block", Times: 1, Status: http.StatusTooManyRequests, RetryAfter: "1"})
	started := time.Now()
	if _, err := c.FinalBlock(t.Context(), "near:mainnet"); err != nil {
		t.Fatalf("the second attempt should succeed: %v", err)
	}
	if n := fake.CountCalls("block"); n != 2 {
		t.Fatalf("%d calls, want 2", n)
	}
	if took := time.Since(started); took < time.Second {
		t.Fatalf("retried after %s: the node asked for 1 s", took)
	}
}

// A 429 without Retry-After is retried with the backoff, and bounded.
func TestA429IsRetriedAndBounded(t *testing.T) {
	c, fake := newClient(t)
	fake.Inject(nearrpctest.Fault{Method: "block", Status: http.StatusTooManyRequests})
	_, err := c.FinalBlock(t.Context(), "near:mainnet")
	if !errs.Is(err, errs.SourceFailed) || chainCause(t, err) != "HTTP_429" {
		t.Fatalf("want source_failed HTTP_429, got %v", err)
	}
	if n := fake.CountCalls("block"); n != 3 {
		t.Fatalf("%d calls, want 3 attempts", n)
	}
}

// Several endpoints for a chain (issue 33 #14): a call the first fails goes
// on to the second at once, and the second, having answered, is asked first
// from then on; a node that answers with a chain error is an answer, not a
// failure to fail over from.
func TestAFailingEndpointFailsOverToTheNext(t *testing.T) {
	cases := []struct {
		name  string
		fault nearrpctest.Fault
	}{
		{"5xx", nearrpctest.Fault{Method: "block", Status: http.StatusBadGateway}},
		{"429", nearrpctest.Fault{Method: "block", Status: http.StatusTooManyRequests, RetryAfter: "10"}},
		{"timeout", nearrpctest.Fault{Method: "block", Hang: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			down, up := nearrpctest.New(t), nearrpctest.New(t)
			down.Inject(tc.fault)
			c := New(Options{Endpoints: map[string][]string{"near:mainnet": {down.URL, up.URL}},
				CallTimeout: 500 * time.Millisecond, Attempts: 3, Backoff: time.Hour})
			for range 3 {
				b, err := c.FinalBlock(t.Context(), "near:mainnet")
				if err != nil || b.Height != nearrpctest.RecordedHeight {
					t.Fatalf("block %+v: %v", b, err)
				}
			}
			// An hour's backoff and a 10 s Retry-After: had the client waited
			// for the failing node, the call would not have returned.
			if n := down.CountCalls("block"); n != 1 {
				t.Fatalf("the failing node was asked %d times, want once", n)
			}
			if n := up.CountCalls("block"); n != 3 {
				t.Fatalf("the second node answered %d calls, want 3", n)
			}
		})
	}

	t.Run("unreachable, then both down", func(t *testing.T) {
		var lc net.ListenConfig
		ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "http://" + ln.Addr().String()
		ln.Close()
		up := nearrpctest.New(t)
		c := New(Options{Endpoints: map[string][]string{"near:mainnet": {closed, up.URL}}, Attempts: 3, Backoff: time.Millisecond})
		if _, err := c.FinalBlock(t.Context(), "near:mainnet"); err != nil {
			t.Fatalf("the second endpoint should answer: %v", err)
		}
		up.Inject(nearrpctest.Fault{Method: "block", Status: http.StatusServiceUnavailable})
		_, err = c.FinalBlock(t.Context(), "near:mainnet")
		if !errs.Is(err, errs.SourceFailed) {
			t.Fatalf("both down: %v", err)
		}
		// Three attempts: the preferred (second) node, the first, the second again.
		if n := up.CountCalls("block"); n != 1+2 {
			t.Fatalf("the second node was asked %d times, want 3", n)
		}
	})

	t.Run("a chain error is an answer", func(t *testing.T) {
		first, second := nearrpctest.New(t), nearrpctest.New(t)
		c := New(Options{Endpoints: map[string][]string{"near:mainnet": {first.URL, second.URL}}, Attempts: 3, Backoff: time.Millisecond})
		_, err := c.CallFunction(t.Context(), "near:mainnet", 0, "nope.sputnik-dao.near", "get_config", nil)
		if !errs.Is(err, errs.NotFound) {
			t.Fatalf("want not_found, got %v", err)
		}
		if len(second.Calls()) != 0 {
			t.Fatalf("a node's answer was asked again elsewhere: %+v", second.Calls())
		}
	})
}
