// Package fastnear reads a NEAR fungible token's largest holders from
// FastNEAR's public API (GET /v1/ft/{token_id}/top: its top 100 accounts by
// balance, answered as {"token_id", "accounts": [{"account_id", "balance"}]}),
// behind ports.FTHolderIndex. The balances it gives are the index's last
// known ones; petal reads each again on chain, so only the names are kept.
package fastnear

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// Options configure a Client.
type Options struct {
	// Bases maps a chain (near:mainnet, near:testnet) to the API's base URL.
	Bases map[string]string
	// Timeout bounds one request (default 10 s).
	Timeout    time.Duration
	HTTPClient *http.Client
	Metrics    ports.Metrics
}

// Client is FastNEAR's API.
type Client struct {
	bases   map[string]string
	timeout time.Duration
	http    *http.Client
	calls   ports.Histogram
}

// MaxHolders is the most accounts the index answers with (its top 100), and
// the most petal reads from one answer.
const MaxHolders = 100

// maxAnswer bounds an answer's bytes: 100 accounts fit in a few KiB.
const maxAnswer = 256 << 10

// New makes a client.
func New(o Options) *Client {
	c := &Client{bases: o.Bases, timeout: o.Timeout, http: o.HTTPClient}
	if c.timeout <= 0 {
		c.timeout = 10 * time.Second
	}
	if c.http == nil {
		c.http = &http.Client{Transport: http.DefaultTransport}
	}
	c.calls = ports.MetricsOrNone(o.Metrics).Histogram("petal_fastnear_call_duration_seconds",
		"FastNEAR API calls by chain and outcome (ok, not_found, refused, timeout, transport, bad_answer), with their time; _count is the calls.",
		nil, "chain", "outcome")
	return c
}

type topAnswer struct {
	TokenID  string `json:"token_id"`
	Accounts []struct {
		AccountID string  `json:"account_id"`
		Balance   *string `json:"balance"`
	} `json:"accounts"`
}

// TopHolders asks the index for token's largest holders on chain.
func (c *Client) TopHolders(ctx context.Context, chain, token string) ([]string, error) {
	base, ok := c.bases[chain]
	if !ok || base == "" {
		return nil, errs.Newf(errs.BadInput, "no holder index is set for %s", chain).WithHint("set PETAL_FASTNEAR_MAINNET / PETAL_FASTNEAR_TESTNET")
	}
	start := time.Now()
	holders, outcome, err := c.top(ctx, base, token)
	c.calls.Observe(time.Since(start).Seconds(), chain, outcome)
	return holders, err
}

func (c *Client) top(ctx context.Context, base, token string) ([]string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	u := base + "/v1/ft/" + url.PathEscape(token) + "/top"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "transport", errs.New(errs.Internal, "the holder index's request could not be made").WithCause(err)
	}
	req.Header.Set("Accept", "application/json")
	res, err := c.http.Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, "timeout", errs.New(errs.SourceFailed, "FastNEAR's holder index did not answer in time").WithCause(err)
		}
		return nil, "transport", errs.New(errs.SourceFailed, "FastNEAR's holder index could not be reached").WithCause(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer+1))
	switch {
	case err != nil:
		return nil, "transport", errs.New(errs.SourceFailed, "FastNEAR's holder index's answer could not be read").WithCause(err)
	case res.StatusCode == http.StatusNotFound:
		return nil, "not_found", errs.Newf(errs.NotFound, "FastNEAR's holder index knows no token %s", token)
	case res.StatusCode != http.StatusOK:
		return nil, "refused", errs.Newf(errs.SourceFailed, "FastNEAR's holder index answered %d", res.StatusCode).WithHint("try again later")
	case len(body) > maxAnswer:
		return nil, "bad_answer", errs.New(errs.SourceFailed, "FastNEAR's holder index answered more than petal reads")
	}
	var ans topAnswer
	if err := json.Unmarshal(body, &ans); err != nil {
		return nil, "bad_answer", errs.New(errs.SourceFailed, "FastNEAR's holder index answered something unreadable").WithCause(err)
	}
	if ans.TokenID != token {
		return nil, "bad_answer", errs.Newf(errs.SourceFailed, "FastNEAR's holder index answered for %q, not %s", ans.TokenID, token)
	}
	seen := map[string]bool{}
	var out []string
	for _, a := range ans.Accounts {
		if len(out) == MaxHolders {
			break
		}
		// An account the index names oddly, or twice, is left out: every
		// balance is read again on chain anyway.
		if !snapshots.ValidNearAccount(a.AccountID) || seen[a.AccountID] {
			continue
		}
		seen[a.AccountID] = true
		out = append(out, a.AccountID)
	}
	if len(out) == 0 {
		return nil, "not_found", errs.Newf(errs.NotFound, "FastNEAR's holder index lists no holders of %s", token)
	}
	return out, "ok", nil
}
