// Package nearrpc is petal's NEAR JSON-RPC client: JSON-RPC 2.0 over HTTP,
// a timeout per call, a bounded retry (failing over between a chain's
// endpoints, with jittered backoff) on transport errors, 429s and
// 5xx answers, and NEAR's errors mapped to petal's codes (errs.NotFound,
// errs.CannotRead, errs.SourceFailed) with a *ports.ChainError as cause.
//
// Adding a method: write it in a file of its own (view_account.go, tx.go …)
// on *Client, build its params as a map or struct, and call
//
//	var out T
//	err := c.call(ctx, chain, "query", params, &out)
//
// call does the envelope, retries and error mapping, including the quirk of
// a query answering with a result that carries an `error` string instead of
// a JSON-RPC error (use resultError on the raw result to catch it, as
// CallFunction does). Then add recordings for its tests to the fake server
// (package nearrpctest; its comment says how).
package nearrpc

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	neturl "net/url"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/petal-near/petal/adapters/internal/retryafter"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// Options configure a Client. Zero values take the defaults.
type Options struct {
	// URLs maps a chain (near:mainnet, near:testnet) to its RPC endpoint.
	URLs map[string]string
	// Endpoints maps a chain to several endpoints, tried in order: a call
	// one fails (unreachable, timeout, 5xx, 429) goes on to the next at once,
	// and the one that answered is tried first from then on. A chain in both
	// takes Endpoints.
	Endpoints map[string][]string
	// CallTimeout bounds one HTTP attempt (default 10 s).
	CallTimeout time.Duration
	// Attempts is how many times a call is tried on transport errors and 5xx
	// (default 3; at least once on each endpoint).
	Attempts int
	// Backoff is the wait before the second attempt, doubled after each
	// further one (default 250 ms).
	Backoff    time.Duration
	HTTPClient *http.Client
	// PageSize is how many items a paged view method is asked for at once
	// (proposals, delegators, DAOs; default 100).
	PageSize int
	// Metrics receives each call's outcome and time (nil: none kept).
	Metrics ports.Metrics
}

// Client talks to NEAR's RPC.
type Client struct {
	chains   map[string]*endpoints
	timeout  time.Duration
	attempts int
	backoff  time.Duration
	http     *http.Client
	pageSize int
	calls    ports.Histogram
}

// New makes a client.
func New(o Options) *Client {
	c := &Client{chains: map[string]*endpoints{}, timeout: o.CallTimeout, attempts: o.Attempts, backoff: o.Backoff, http: o.HTTPClient, pageSize: o.PageSize}
	for chain, url := range o.URLs {
		if url != "" {
			c.chains[chain] = &endpoints{urls: []string{url}}
		}
	}
	for chain, urls := range o.Endpoints {
		if urls = slices.DeleteFunc(slices.Clone(urls), func(u string) bool { return u == "" }); len(urls) > 0 {
			c.chains[chain] = &endpoints{urls: urls}
		}
	}
	if c.pageSize <= 0 {
		c.pageSize = 100
	}
	if c.timeout <= 0 {
		c.timeout = 10 * time.Second
	}
	if c.attempts <= 0 {
		c.attempts = 3
	}
	if c.backoff <= 0 {
		c.backoff = 250 * time.Millisecond
	}
	if c.http == nil {
		c.http = &http.Client{Transport: http.DefaultTransport}
	}
	c.calls = ports.MetricsOrNone(o.Metrics).Histogram("petal_near_rpc_call_duration_seconds",
		"NEAR RPC calls by chain, JSON-RPC method and outcome (ok, chain_error: NEAR answered with an error, timeout, transport, http_5xx, bad_answer, refused), with their time, retries included; _count is the calls.",
		nil, "chain", "method", "outcome")
	return c
}

type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      string `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type response struct {
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// rpcError is NEAR's structured error (the verror shape); code, message and
// data are the legacy fields, read only when there is no cause.
type rpcError struct {
	Name  string `json:"name"`
	Cause *struct {
		Name string          `json:"name"`
		Info json.RawMessage `json:"info"`
	} `json:"cause"`
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// call sends one JSON-RPC request and decodes its result into out, and
// counts it.
func (c *Client) call(ctx context.Context, chain, method string, params, out any) error {
	return c.callLimited(ctx, chain, method, params, out, maxAnswer)
}

// maxAnswer bounds any one answer read from the RPC, in bytes on the wire.
const maxAnswer = 64 << 20

// callLimited is call reading at most limit bytes of the answer; a longer
// answer is cannot_read and is not retried.
func (c *Client) callLimited(ctx context.Context, chain, method string, params, out any, limit int64) error {
	start := time.Now()
	err := c.callOnce(ctx, chain, method, params, out, limit)
	if _, known := c.chains[chain]; known {
		c.calls.Observe(time.Since(start).Seconds(), chain, method, callOutcome(err))
	}
	return err
}

// callOutcome is a call's outcome as a metric label, from a small fixed set.
func callOutcome(err error) string {
	if err == nil {
		return "ok"
	}
	if ce, ok := errors.AsType[*ports.ChainError](err); ok {
		switch ce.Cause {
		case "TIMEOUT", "TRANSPORT", "HTTP_5XX", "BAD_ANSWER":
			return strings.ToLower(ce.Cause)
		}
		return "chain_error"
	}
	return "refused"
}

func (c *Client) callOnce(ctx context.Context, chain, method string, params, out any, limit int64) error {
	eps, ok := c.chains[chain]
	if !ok {
		return errs.Newf(errs.BadInput, "chain must be near:mainnet or near:testnet, not %q", chain)
	}
	body, err := json.Marshal(request{JSONRPC: "2.0", ID: "petal", Method: method, Params: params})
	if err != nil {
		return errs.New(errs.Internal, "a chain request could not be encoded").WithCause(err)
	}
	var last error
	wait, asked := c.backoff, time.Duration(0)
	first, n := eps.first(), len(eps.urls)
	for attempt := 1; attempt <= max(c.attempts, n); attempt++ {
		at := (first + attempt - 1) % n
		// The next endpoint is another node: asked at once. Back on one
		// already tried this call, the backoff applies.
		if attempt > n {
			// Jittered (half to all of the doubled wait), so the callers a
			// busy node turned away don't come back at the same instant;
			// a Retry-After the node gave wins, up to maxRetryAfter.
			pause := wait/2 + rand.N(wait/2+1)
			if asked > 0 {
				pause = asked
			}
			select {
			case <-ctx.Done():
				return sourceFailed(ctx.Err(), "TIMEOUT", "the chain did not answer in time")
			case <-time.After(pause):
			}
			wait *= 2
		}
		raw, retry, retryAfter, err := c.post(ctx, chain, eps.urls[at], body, limit)
		if err == nil {
			eps.answered(at)
			return decode(raw, out)
		}
		last, asked = err, retryAfter
		if !retry || ctx.Err() != nil {
			break
		}
	}
	if busy, ok := last.(*busyError); ok {
		return busy.err
	}
	return last
}

// endpoints are one chain's RPC addresses, and which one to ask first: the
// last to answer, so a dead first endpoint costs one failed attempt, not
// one per call.
type endpoints struct {
	urls      []string
	preferred atomic.Int32
}

func (e *endpoints) first() int { return int(e.preferred.Load()) % len(e.urls) }

func (e *endpoints) answered(at int) { e.preferred.Store(int32(at)) }

// maxRetryAfter bounds the wait a node's Retry-After asks for: longer, and
// the call fails now rather than hold its caller.
const maxRetryAfter = 10 * time.Second

// retryAfterOf is a 429's Retry-After, 0 when absent or past the bound.
func retryAfterOf(res *http.Response) time.Duration {
	d, ok := retryafter.Parse(res.Header.Get("Retry-After"))
	if !ok || d > maxRetryAfter {
		return 0
	}
	return d
}

// post makes one attempt. retry says whether another attempt may help.
func (c *Client) post(ctx context.Context, chain, url string, body []byte, limit int64) (json.RawMessage, bool, time.Duration, error) {
	raw, retry, err := c.postOnce(ctx, chain, url, body, limit)
	return raw, retry, c.lastRetryAfter(err), err
}

func (c *Client) lastRetryAfter(err error) time.Duration {
	var busy *busyError
	if errors.As(err, &busy) {
		return busy.after
	}
	return 0
}

// busyError is a 429: retried, after its Retry-After when it gave one.
type busyError struct {
	err   *errs.Error
	after time.Duration
}

func (b *busyError) Error() string { return b.err.Error() }
func (b *busyError) Unwrap() error { return b.err }

func (c *Client) postOnce(ctx context.Context, chain, url string, body []byte, limit int64) (json.RawMessage, bool, error) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, false, errs.New(errs.Internal, "a chain request could not be made").WithCause(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		return nil, true, unreachable(err, chain, url)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return nil, true, sourceFailed(err, "TRANSPORT", "the chain's answer was cut off")
	}
	if int64(len(raw)) > limit {
		return nil, false, chainErr(errs.CannotRead, "TOO_LARGE", "the chain's answer is larger than petal reads",
			fmt.Sprintf("more than %d bytes", limit))
	}
	var r response
	jsonErr := json.Unmarshal(raw, &r)
	// NEAR answers some errors with 4xx/5xx and a structured body: read the
	// body first when it parses, the status otherwise.
	if jsonErr == nil && r.Error != nil {
		e := mapRPCError(r.Error)
		return nil, res.StatusCode >= 500 && errs.Is(e, errs.SourceFailed), e
	}
	if res.StatusCode >= 500 {
		return nil, true, sourceFailed(fmt.Errorf("HTTP %d", res.StatusCode), "HTTP_5XX", "the chain's RPC failed")
	}
	if res.StatusCode == http.StatusTooManyRequests {
		return nil, true, &busyError{err: sourceFailed(errors.New("HTTP 429"), "HTTP_429", "the chain's RPC is busy"), after: retryAfterOf(res)}
	}
	if res.StatusCode != http.StatusOK || jsonErr != nil {
		return nil, false, sourceFailed(fmt.Errorf("HTTP %d: %v", res.StatusCode, jsonErr), "BAD_ANSWER", "the chain's RPC gave an answer petal can't read")
	}
	if len(r.Result) == 0 || string(r.Result) == "null" {
		return nil, false, sourceFailed(errors.New("no result"), "BAD_ANSWER", "the chain's RPC gave an empty answer")
	}
	return r.Result, false, nil
}

func decode(raw json.RawMessage, out any) error {
	if out == nil {
		return nil
	}
	if p, ok := out.(*json.RawMessage); ok {
		*p = raw
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return sourceFailed(err, "BAD_ANSWER", "the chain's RPC gave an answer petal can't read")
	}
	return nil
}

func chainErr(code errs.Code, cause, message string, detail string) *errs.Error {
	return errs.New(code, message).WithCause(&ports.ChainError{Cause: cause, Message: detail})
}

func sourceFailed(err error, cause, message string) *errs.Error {
	return chainErr(errs.SourceFailed, cause, message, err.Error()).
		WithHint("NEAR's RPC may be busy; try again in a little while")
}

// mapRPCError maps NEAR's error causes onto petal's codes.
func mapRPCError(e *rpcError) *errs.Error {
	cause := e.Name
	if e.Cause != nil && e.Cause.Name != "" {
		cause = e.Cause.Name
	}
	detail := strings.Trim(string(e.Data), `"`)
	if detail == "" {
		detail = e.Message
	}
	switch cause {
	case "UNKNOWN_ACCOUNT", "INVALID_ACCOUNT", "NO_CONTRACT_CODE", "UNKNOWN_ACCESS_KEY", "UNKNOWN_TRANSACTION":
		return chainErr(errs.NotFound, cause, notFoundMessage(cause), detail)
	case "CONTRACT_EXECUTION_ERROR", "TOO_LARGE_CONTRACT_STATE":
		return chainErr(errs.CannotRead, cause, "the contract could not be read: its view call failed", detail).
			WithHint("check that the account is the kind of contract this reader reads")
	case "INVALID_TRANSACTION":
		return chainErr(errs.BadInput, cause, "the chain refused the transaction", detail)
	case "UNKNOWN_BLOCK", "UNAVAILABLE_SHARD", "NO_SYNCED_BLOCKS", "NOT_SYNCED_YET", "INTERNAL_ERROR", "TIMEOUT_ERROR":
		return chainErr(errs.SourceFailed, cause, "the chain's RPC could not answer", detail).
			WithHint("NEAR's RPC may be busy; try again in a little while")
	}
	// REQUEST_VALIDATION_ERROR, PARSE_ERROR and anything new: the request
	// itself was refused, so it's ours to fix, and retrying won't help.
	return chainErr(errs.SourceFailed, cause, "the chain's RPC refused the request", detail)
}

func notFoundMessage(cause string) string {
	switch cause {
	case "NO_CONTRACT_CODE":
		return "that account has no contract on this chain"
	case "INVALID_ACCOUNT":
		return "that is not a valid account id on this chain"
	case "UNKNOWN_ACCESS_KEY":
		return "that access key does not exist on the account"
	case "UNKNOWN_TRANSACTION":
		return "the chain has no such transaction"
	}
	return "that account does not exist on this chain"
}

// resultError catches the older shape of a failed query: a result carrying
// an `error` string (and logs) instead of a JSON-RPC error. It maps the
// string as mapRPCError maps the newer structured causes.
func resultError(raw json.RawMessage) error {
	var probe struct {
		Error *string `json:"error"`
	}
	if json.Unmarshal(raw, &probe) != nil || probe.Error == nil {
		return nil
	}
	msg := *probe.Error
	switch {
	case strings.Contains(msg, "does not exist while viewing") && strings.Contains(msg, "access key"):
		return chainErr(errs.NotFound, "UNKNOWN_ACCESS_KEY", notFoundMessage("UNKNOWN_ACCESS_KEY"), msg)
	case strings.Contains(msg, "does not exist while viewing"), strings.Contains(msg, "AccountDoesNotExist"):
		return chainErr(errs.NotFound, "UNKNOWN_ACCOUNT", notFoundMessage("UNKNOWN_ACCOUNT"), msg)
	case strings.Contains(msg, "CodeDoesNotExist"):
		return chainErr(errs.NotFound, "NO_CONTRACT_CODE", notFoundMessage("NO_CONTRACT_CODE"), msg)
	case strings.Contains(msg, "MethodNotFound"):
		return chainErr(errs.CannotRead, "CONTRACT_EXECUTION_ERROR", "the contract has no such view method: it is not the kind this reader reads", msg)
	}
	return chainErr(errs.CannotRead, "CONTRACT_EXECUTION_ERROR", "the contract could not be read: its view call failed", msg).
		WithHint("check that the account is the kind of contract this reader reads")
}

// blockResult is the part of `block` petal reads.
type blockResult struct {
	Header struct {
		Height           uint64 `json:"height"`
		Hash             string `json:"hash"`
		TimestampNanosec string `json:"timestamp_nanosec"`
	} `json:"header"`
}

// FinalBlock reads the newest final block.
func (c *Client) FinalBlock(ctx context.Context, chain string) (snapshots.Block, error) {
	var b blockResult
	if err := c.call(ctx, chain, "block", map[string]string{"finality": "final"}, &b); err != nil {
		return snapshots.Block{}, err
	}
	var ns int64
	if _, err := fmt.Sscan(b.Header.TimestampNanosec, &ns); err != nil || b.Header.Hash == "" {
		return snapshots.Block{}, sourceFailed(fmt.Errorf("block header %+v", b.Header), "BAD_ANSWER", "the chain's RPC gave a block petal can't read")
	}
	return snapshots.Block{
		Height: b.Header.Height,
		Hash:   b.Header.Hash,
		Time:   time.Unix(0, ns).UTC().Format(time.RFC3339Nano),
	}, nil
}

// callResult is a call_function answer: the method's result as an array of
// byte values, with the logs and the block it was read at.
type callResult struct {
	ResultBytes []int    `json:"result"`
	Logs        []string `json:"logs"`
	BlockHeight uint64   `json:"block_height"`
	BlockHash   string   `json:"block_hash"`
}

// CallFunction calls a view method with JSON args (nil sends {}) at block
// height at (0: the final block) and returns the method's raw result,
// usually UTF-8 JSON.
func (c *Client) CallFunction(ctx context.Context, chain string, at uint64, contract, method string, args any) ([]byte, error) {
	return c.callFunction(ctx, chain, at, contract, method, args, maxAnswer)
}

// callFunction is CallFunction reading at most limit bytes of the node's
// answer (the result's bytes travel as numbers, up to four bytes each).
func (c *Client) callFunction(ctx context.Context, chain string, at uint64, contract, method string, args any, limit int64) ([]byte, error) {
	argBytes := []byte("{}")
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return nil, errs.New(errs.Internal, "call arguments could not be encoded").WithCause(err)
		}
		argBytes = b
	}
	params := map[string]any{
		"request_type": "call_function",
		"account_id":   contract,
		"method_name":  method,
		"args_base64":  base64.StdEncoding.EncodeToString(argBytes),
	}
	if at > 0 {
		params["block_id"] = at
	} else {
		params["finality"] = "final"
	}
	var raw json.RawMessage
	if err := c.callLimited(ctx, chain, "query", params, &raw, limit); err != nil {
		return nil, err
	}
	if err := resultError(raw); err != nil {
		return nil, err
	}
	var r callResult
	if err := json.Unmarshal(raw, &r); err != nil || r.ResultBytes == nil {
		return nil, sourceFailed(fmt.Errorf("call_function result: %v", err), "BAD_ANSWER", "the chain's RPC gave an answer petal can't read")
	}
	out := make([]byte, len(r.ResultBytes))
	for i, v := range r.ResultBytes {
		if v < 0 || v > 255 {
			return nil, sourceFailed(fmt.Errorf("byte %d out of range", v), "BAD_ANSWER", "the chain's RPC gave an answer petal can't read")
		}
		out[i] = byte(v)
	}
	return out, nil
}

// unreachable says which address failed and why (it timed out, it refused
// the connection, its name has no host), with the setting that names it:
// a wrong address or DNS reads differently from a busy chain. The address is
// shown as scheme and host only, since a provider's key may ride in its path
// or query.
func unreachable(err error, chain, rawURL string) *errs.Error {
	where := rawURL
	if u, perr := neturl.Parse(rawURL); perr == nil && u.Host != "" {
		where = u.Scheme + "://" + u.Host
	}
	setting := "PETAL_NEAR_RPC_" + strings.ToUpper(strings.TrimPrefix(chain, "near:"))
	cause, why := "TRANSPORT", "could not be reached"
	var ne net.Error
	var dns *net.DNSError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		cause, why = "TIMEOUT", "did not answer in time"
	case errors.As(err, &dns) && dns.IsNotFound:
		why = "could not be reached: no such host (" + dns.Name + ")"
	case errors.As(err, &dns):
		why = "could not be reached: its name could not be looked up (" + dns.Name + ")"
	case errors.Is(err, syscall.ECONNREFUSED):
		why = "could not be reached: the connection was refused"
	case errors.Is(err, syscall.ECONNRESET):
		why = "could not be reached: the connection was reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		why = "could not be reached: no route to it"
	}
	return chainErr(errs.SourceFailed, cause, "NEAR's RPC at "+where+" "+why, err.Error()).
		WithHint("check " + setting + " (the RPC address for " + chain + ") and this machine's network; if the address is right, NEAR's RPC may be busy: try again in a little while")
}
