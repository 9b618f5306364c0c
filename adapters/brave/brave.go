// Package brave is petal's web search (ports.WebSearch) on the Brave Search
// API: one plain GET (res/v1/web/search?q=&count=) with the key in the
// X-Subscription-Token header, and JSON back. Brave was chosen because it
// runs its own index (not a reseller of another engine's results), its API
// is a documented, stable REST endpoint that needs no SDK, and its free plan
// is enough for a site's agent. bravetest is a fake server in its wire shape.
package brave

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// DefaultURL is the Brave Search API's base.
const DefaultURL = "https://api.search.brave.com"

// maxAnswer bounds the bytes of one search answer read.
const maxAnswer = 2 << 20

// Client is the Brave Search API client. A client without a key is
// unconfigured: it says so and asks nothing.
type Client struct {
	base string
	key  string
	http *http.Client

	fetches ports.Counter
	bytes   ports.Counter
	took    ports.Histogram
}

var _ ports.WebSearch = (*Client)(nil)

// New makes a client for base (DefaultURL when empty) with key.
func New(base, key string, m ports.Metrics) *Client {
	if base == "" {
		base = DefaultURL
	}
	c := &Client{base: strings.TrimRight(base, "/"), key: key, http: &http.Client{Timeout: 15 * time.Second}}
	mm := ports.MetricsOrNone(m)
	c.fetches = mm.Counter("petal_web_fetches_total", "Outbound web fetches (read_page, search) by kind and outcome (ok, cut: stopped at the size limit, refused, failed, timeout).", "kind", "outcome")
	c.bytes = mm.Counter("petal_web_fetched_bytes_total", "Body bytes read by outbound web fetches, by kind.", "kind")
	c.took = mm.Histogram("petal_web_fetch_duration_seconds", "Time of outbound web fetches, by kind.", nil, "kind")
	return c
}

// Configured implements ports.WebSearch.
func (c *Client) Configured() bool { return c.key != "" }

// answer is the part of Brave's WebSearchApiResponse petal reads.
type answer struct {
	Web *struct {
		Results []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
			Age         string `json:"age"`
		} `json:"results"`
	} `json:"web"`
}

// Search implements ports.WebSearch.
func (c *Client) Search(ctx context.Context, query string, max int) ([]ports.WebResult, error) {
	start := time.Now()
	out, n, err := c.search(ctx, query, max)
	c.took.Observe(time.Since(start).Seconds(), "search")
	c.bytes.Add(float64(n), "search")
	outcome := "ok"
	if err != nil {
		outcome = "failed"
		if errors.Is(err, context.DeadlineExceeded) {
			outcome = "timeout"
		}
	}
	c.fetches.Add(1, "search", outcome)
	return out, err
}

func (c *Client) search(ctx context.Context, query string, max int) ([]ports.WebResult, int, error) {
	if !c.Configured() {
		return nil, 0, errs.New(errs.SourceFailed, "web search is not set up on this site", "set PETAL_SEARCH_API_KEY")
	}
	q := url.Values{"q": {query}, "count": {strconv.Itoa(max)}, "safesearch": {"moderate"}, "text_decorations": {"false"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/res/v1/web/search?"+q.Encode(), nil)
	if err != nil {
		return nil, 0, errs.New(errs.Internal, "a search request could not be made").WithCause(err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", c.key)
	res, err := c.http.Do(req)
	if err != nil {
		return nil, 0, failed("the search provider could not be reached", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer+1))
	n := len(body)
	if err != nil {
		return nil, n, failed("the search provider's answer was cut off", err)
	}
	switch {
	case res.StatusCode == http.StatusTooManyRequests:
		return nil, n, errs.New(errs.SourceFailed, "the search provider is busy (its rate limit)", "try again in a minute").WithRetryAfter(retryAfter(res))
	case res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden:
		return nil, n, errs.New(errs.SourceFailed, "the search provider refused this site's key", "the site's operator checks PETAL_SEARCH_API_KEY")
	case res.StatusCode != http.StatusOK:
		return nil, n, failed(fmt.Sprintf("the search provider answered HTTP %d", res.StatusCode), nil)
	case n > maxAnswer:
		return nil, n, failed("the search provider's answer was too large", nil)
	}
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, n, failed("the search provider gave an answer petal can't read", err)
	}
	out := []ports.WebResult{}
	if a.Web == nil {
		return out, n, nil
	}
	for _, r := range a.Web.Results {
		if len(out) == max {
			break
		}
		if u, err := url.Parse(r.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		out = append(out, ports.WebResult{Title: plain(r.Title, 300), URL: r.URL, Snippet: plain(r.Description, 600), Age: plain(r.Age, 60)})
	}
	return out, n, nil
}

func failed(message string, cause error) *errs.Error {
	e := errs.New(errs.SourceFailed, message, "try again in a little while")
	if cause != nil {
		e = e.WithCause(cause)
	}
	return e
}

func retryAfter(res *http.Response) int {
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && s > 0 && s < 3600 {
		return s
	}
	return 60
}

var tags = regexp.MustCompile(`<[^>]*>`)

// plain is s without markup (Brave marks matches with <strong>), its
// entities decoded, its spaces collapsed, at most max bytes.
func plain(s string, max int) string {
	s = strings.Join(strings.Fields(html.UnescapeString(tags.ReplaceAllString(s, ""))), " ")
	if len(s) > max {
		s = s[:max]
	}
	return strings.ToValidUTF8(s, "")
}
