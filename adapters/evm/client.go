// Package evm reads ERC-20 tokens on EVM chains over JSON-RPC, on
// go-ethereum's own client (ethclient, rpc) and ABI (accounts/abi), behind
// ports.EVMTokens. Each chain has one or more endpoints (PETAL_EVM_RPC_<id>)
// tried in turn: a transport error, 429 or 5xx goes to the next after a
// jittered pause or the Retry-After asked for. Every read is pinned to the
// chain's finalized block (by hash for calls), and logs are read in block
// ranges that shrink when a provider refuses a range as too large or too
// full, and grow back while answers stay light.
package evm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/petal-near/petal/domain/errs"
	domevm "github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/ports"
)

// Options configure a Client. Zero values take the defaults.
type Options struct {
	// Endpoints are each chain's RPC URLs, tried in this order.
	Endpoints map[uint64][]string
	// CallTimeout bounds one JSON-RPC call, its retries included (default 15 s).
	CallTimeout time.Duration
	// Attempts is how many rounds of the endpoints one call may go (default 3):
	// each try goes to the next endpoint.
	Attempts int
	// Backoff is the pause before the second try, doubled after each (default 250 ms).
	Backoff time.Duration
	// HTTPClient's transport carries the requests (default http.DefaultTransport).
	HTTPClient *http.Client
	// FirstRange is how many blocks the first eth_getLogs asks for (default 1:
	// nothing is known of the token's logs yet, and a busy token's first answer
	// over a wide range is one the node builds in vain; the ranges grow up to
	// fourfold per answer from there, so a quiet chain of 40M blocks costs ten
	// calls more);
	// MaxRange the most any asks for (default 1,000,000).
	FirstRange, MaxRange uint64
	// MaxAnswer bounds one answer's bytes (default 16 MiB, about 25,000 logs); a log
	// range past it shrinks.
	MaxAnswer int64
	// Metrics receives each call's outcome and time (nil: none kept).
	Metrics ports.Metrics
}

// Client reads every chain it has endpoints for.
type Client struct {
	chains  map[uint64]*chainClient
	timeout time.Duration
	first   uint64
	most    uint64
	calls   ports.Histogram
}

type chainClient struct {
	id        uint64
	rpc       *rpc.Client
	eth       *ethclient.Client
	transport *failover
}

// New makes a client; an endpoint that is not an http(s) URL is an error
// naming its setting.
func New(o Options) (*Client, error) {
	c := &Client{chains: map[uint64]*chainClient{}, timeout: o.CallTimeout, first: o.FirstRange, most: o.MaxRange}
	if c.timeout <= 0 {
		c.timeout = 15 * time.Second
	}
	if c.first == 0 {
		c.first = 1
	}
	if c.most == 0 {
		c.most = 1_000_000
	}
	c.first = min(c.first, c.most)
	base := http.DefaultTransport
	if o.HTTPClient != nil && o.HTTPClient.Transport != nil {
		base = o.HTTPClient.Transport
	}
	backoff := o.Backoff
	if backoff <= 0 {
		backoff = 250 * time.Millisecond
	}
	maxAnswer := o.MaxAnswer
	if maxAnswer <= 0 {
		maxAnswer = 16 << 20
	}
	for id, urls := range o.Endpoints {
		if len(urls) == 0 {
			continue
		}
		f := &failover{next: base, backoff: backoff, maxAnswer: maxAnswer}
		for _, raw := range urls {
			u, err := url.Parse(strings.TrimSpace(raw))
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, fmt.Errorf("PETAL_EVM_RPC_%d: %q is not an http(s) URL", id, raw)
			}
			f.endpoints = append(f.endpoints, u)
		}
		f.attempts = max(o.Attempts, 3) * len(f.endpoints)
		// The URL dialled is a stand-in: the transport sends each request to
		// one of the chain's endpoints.
		rc, err := rpc.DialOptions(context.Background(), "http://evm-rpc.invalid/", rpc.WithHTTPClient(&http.Client{Transport: f}))
		if err != nil {
			return nil, fmt.Errorf("PETAL_EVM_RPC_%d: %w", id, err)
		}
		c.chains[id] = &chainClient{id: id, rpc: rc, eth: ethclient.NewClient(rc), transport: f}
	}
	c.calls = ports.MetricsOrNone(o.Metrics).Histogram("petal_evm_rpc_call_duration_seconds",
		"EVM JSON-RPC calls by chain, method and outcome (ok, refused_range: a log range the provider refused as too large, rpc_error, timeout, transport), with their time, retries and failover included; _count is the calls.",
		nil, "chain", "method", "outcome")
	return c, nil
}

// EVMChains are the chains with endpoints, in id order.
func (c *Client) EVMChains() []uint64 {
	ids := make([]uint64, 0, len(c.chains))
	for id := range c.chains {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Requests is how many HTTP requests went to chain's endpoints, retries included.
func (c *Client) Requests(chain uint64) int64 {
	if cc, ok := c.chains[chain]; ok {
		return cc.transport.requests.Load()
	}
	return 0
}

// Close closes every chain's client.
func (c *Client) Close() {
	for _, cc := range c.chains {
		cc.rpc.Close()
	}
}

func (c *Client) chain(chain string) (*chainClient, error) {
	id, ok := domevm.ChainID(chain)
	if !ok {
		return nil, errs.Newf(errs.BadInput, "chain %q is not an EVM chain id such as eip155:100", chain)
	}
	cc, ok := c.chains[id]
	if !ok {
		return nil, NoEndpoint(id)
	}
	return cc, nil
}

// NoEndpoint is the refusal of a chain without an RPC setting.
func NoEndpoint(id uint64) *errs.Error {
	return errs.Newf(errs.BadInput, "chain %s (%s) can't be read here: it has no RPC endpoint", domevm.Chain(id), domevm.ChainName(id)).
		WithHint(fmt.Sprintf("set PETAL_EVM_RPC_%d to its JSON-RPC URL (several, comma-separated, fail over)", id))
}

// observe times one call into the metrics.
func (c *Client) observe(chain uint64, method string, start time.Time, err error) {
	c.calls.Observe(time.Since(start).Seconds(), domevm.Chain(chain), method, outcomeOf(err))
}

func outcomeOf(err error) string {
	var rpcErr rpc.Error
	switch {
	case err == nil:
		return "ok"
	case refusedRange(err):
		return "refused_range"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.As(err, &rpcErr):
		return "rpc_error"
	}
	return "transport"
}

// sourceFailed is an endpoint that could not answer.
func sourceFailed(chain uint64, what string, err error) error {
	var httpErr rpc.HTTPError
	msg := fmt.Sprintf("%s's RPC could not be read (%s)", domevm.Chain(chain), what)
	switch {
	case errors.As(err, &httpErr) && httpErr.StatusCode == http.StatusTooManyRequests:
		msg = fmt.Sprintf("%s's RPC is turning petal away (429, %s)", domevm.Chain(chain), what)
	case errors.As(err, &httpErr):
		msg = fmt.Sprintf("%s's RPC answered %d (%s)", domevm.Chain(chain), httpErr.StatusCode, what)
	case errors.Is(err, context.DeadlineExceeded):
		msg = fmt.Sprintf("%s's RPC did not answer in time (%s)", domevm.Chain(chain), what)
	}
	return errs.New(errs.SourceFailed, msg, "try again later; PETAL_EVM_RPC_<chain id> may list several endpoints, which fail over").WithCause(err)
}

// PinEVM reads chain's newest finalized block and starts a reading there.
func (c *Client) PinEVM(ctx context.Context, chain string) (ports.EVMReading, error) {
	cc, err := c.chain(chain)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	start := time.Now()
	head, err := cc.eth.HeaderByNumber(cctx, finalizedTag)
	c.observe(cc.id, "eth_getBlockByNumber", start, err)
	if err != nil {
		var rpcErr rpc.Error
		if errors.As(err, &rpcErr) {
			return nil, errs.Newf(errs.CannotRead, "%s's RPC gives no finalized block: %s", chain, clip(err.Error())).WithCause(err)
		}
		return nil, sourceFailed(cc.id, "its finalized block", err)
	}
	return newReading(c, cc, head), nil
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
