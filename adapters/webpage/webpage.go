// Package webpage reads a public web page for read_page, and never anything
// else: every name is resolved here and each of its addresses checked
// (Refused) before one is dialled, and the dialler checks the address it
// connects to once more, so no second lookup can swap in another (DNS
// rebinding). Redirects are followed by hand, at most MaxRedirects, each
// checked like the first URL. No proxy from the environment is used.
//
// HTML becomes Markdown through github.com/JohannesKaufmann/html-to-markdown
// (v2): kept up (releases through 2025), CommonMark output that keeps
// headings, lists, tables and links (made absolute against the page), and it
// drops scripts and styles. Plain text, Markdown and JSON pass as they are.
package webpage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// Limits of one read.
const (
	MaxBytes     = 5 << 20 // read at most this much of a body; the rest is cut
	Timeout      = 15 * time.Second
	MaxRedirects = 5
	// MaxElements bounds the HTML elements a page is parsed to; the rest is
	// cut, as bytes past MaxBytes are.
	MaxElements = 100_000
)

// Resolver looks a name up; net.DefaultResolver is one. Tests inject their own.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a Fetcher. Zero values take the defaults.
type Options struct {
	// AllowLoopback lets pages on this machine be read: for tests only
	// (PETAL_READ_PAGE_LOOPBACK, refused by the configuration on an https site).
	AllowLoopback bool
	Resolver      Resolver
	MaxBytes      int64
	Timeout       time.Duration
	UserAgent     string
	Metrics       ports.Metrics
}

// Fetcher reads public pages.
type Fetcher struct {
	allowLoopback bool
	resolver      Resolver
	maxBytes      int64
	timeout       time.Duration
	userAgent     string
	client        *http.Client
	converter     *htmltomarkdown.Converter

	fetches  ports.Counter
	bytes    ports.Counter
	refusals ports.Counter
	took     ports.Histogram
}

var _ ports.WebPages = (*Fetcher)(nil)

// New makes a Fetcher.
func New(o Options) *Fetcher {
	f := &Fetcher{allowLoopback: o.AllowLoopback, resolver: o.Resolver, maxBytes: o.MaxBytes, timeout: o.Timeout, userAgent: o.UserAgent}
	if f.resolver == nil {
		f.resolver = net.DefaultResolver
	}
	if f.maxBytes <= 0 {
		f.maxBytes = MaxBytes
	}
	if f.timeout <= 0 {
		f.timeout = Timeout
	}
	if f.userAgent == "" {
		f.userAgent = "petal-read-page/1 (+https://github.com/petal-near/petal)"
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: f.control}
	transport := &http.Transport{
		Proxy: nil, // never HTTP(S)_PROXY: the proxy would make the connection, unchecked
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return f.dial(ctx, dialer, network, addr)
		},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  f.timeout,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
	}
	f.client = &http.Client{
		Transport: transport,
		Timeout:   f.timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return &refusal{reason: ReasonRedirects, detail: fmt.Sprintf("more than %d redirects", MaxRedirects)}
			}
			if why := CheckURL(req.URL, f.allowLoopback); why != "" {
				return &refusal{reason: why, detail: "a redirect to " + redactedURL(req.URL)}
			}
			return nil
		},
	}
	f.converter = htmltomarkdown.NewConverter(htmltomarkdown.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin()))
	f.converter.Register.Renderer(stopWhenDone, htmltomarkdown.PriorityEarly-100)
	m := ports.MetricsOrNone(o.Metrics)
	f.fetches = m.Counter("petal_web_fetches_total", "Outbound web fetches (read_page, search) by kind and outcome (ok, cut: stopped at the size limit, refused, failed, timeout).", "kind", "outcome")
	f.bytes = m.Counter("petal_web_fetched_bytes_total", "Body bytes read by outbound web fetches, by kind.", "kind")
	f.refusals = m.Counter("petal_web_fetch_refusals_total", "Outbound web fetches refused before or while connecting, by reason (scheme, credentials, loopback, private, link_local, multicast, unspecified, reserved, redirects …).", "reason")
	f.took = m.Histogram("petal_web_fetch_duration_seconds", "Time of outbound web fetches, by kind.", nil, "kind")
	return f
}

// refusal is a request petal won't make; Fetch answers it as bad_input.
type refusal struct{ reason, detail string }

func (r *refusal) Error() string { return "refused (" + r.reason + "): " + r.detail }

// dial resolves addr's host once, refuses it when any of its addresses is
// refused (a name that points at this machine or a private network is not a
// public page), and dials the checked addresses themselves, in turn.
func (f *Fetcher) dial(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		lookup := "ip"
		switch network {
		case "tcp4":
			lookup = "ip4"
		case "tcp6":
			lookup = "ip6"
		}
		addrs, err = f.resolver.LookupNetIP(ctx, lookup, host)
		if err != nil {
			return nil, &refusal{reason: ReasonNotResolving, detail: "the name " + host + " could not be resolved"}
		}
		if len(addrs) == 0 {
			return nil, &refusal{reason: ReasonNoAddress, detail: "the name " + host + " has no address"}
		}
	}
	for _, a := range addrs {
		if why := Refused(a, f.allowLoopback); why != "" {
			return nil, &refusal{reason: why, detail: host + " is at " + a.String()}
		}
	}
	var last error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(a.WithZone("").Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		if r, ok := errors.AsType[*refusal](err); ok {
			return nil, r
		}
		last = err
	}
	return nil, last
}

// control checks the very address the socket connects to: whatever a
// resolver said, a connection to a refused address is never made.
func (f *Fetcher) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &refusal{reason: ReasonBadURL, detail: "an address petal can't read: " + address}
	}
	if why := Refused(ap.Addr(), f.allowLoopback); why != "" {
		return &refusal{reason: why, detail: "the address " + ap.Addr().String()}
	}
	return nil
}

// Fetch reads rawURL and gives its readable text.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (ports.WebPage, error) {
	start := time.Now()
	page, n, err := f.fetch(ctx, rawURL)
	f.took.Observe(time.Since(start).Seconds(), "page")
	f.bytes.Add(float64(n), "page")
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "failed"
		if r, ok := errors.AsType[*refusal](err); ok {
			outcome = "refused"
			f.refusals.Add(1, r.reason)
			err = errs.Newf(errs.BadInput, "url: petal reads only public pages: %s", r.Error()).
				WithHint("give a public http or https address, without a user name or password")
		} else if errs.Is(err, errs.SourceFailed) && errors.Is(err, context.DeadlineExceeded) {
			outcome = "timeout"
		}
	case page.Cut:
		outcome = "cut"
	}
	f.fetches.Add(1, "page", outcome)
	return page, err
}

func (f *Fetcher) fetch(ctx context.Context, rawURL string) (ports.WebPage, int64, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ports.WebPage{}, 0, &refusal{reason: ReasonBadURL, detail: "not a URL"}
	}
	if why := CheckURL(u, f.allowLoopback); why != "" {
		return ports.WebPage{}, 0, &refusal{reason: why, detail: redactedURL(u)}
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return ports.WebPage{}, 0, &refusal{reason: ReasonBadURL, detail: "not a URL petal can ask for"}
	}
	req.Header.Set("User-Agent", f.userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,text/markdown;q=0.9,application/json;q=0.8,*/*;q=0.1")
	res, err := f.client.Do(req)
	if err != nil {
		if r, ok := errors.AsType[*refusal](err); ok {
			return ports.WebPage{}, 0, r
		}
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			return ports.WebPage{}, 0, errs.Newf(errs.SourceFailed, "the page did not answer within %s", f.timeout).WithCause(context.DeadlineExceeded).
				WithHint("try again later, or another page")
		}
		return ports.WebPage{}, 0, errs.New(errs.SourceFailed, "the page could not be reached", "check the address, or try another page").WithCause(err)
	}
	defer res.Body.Close()
	final := res.Request.URL
	if res.StatusCode < 200 || res.StatusCode > 299 {
		code := errs.SourceFailed
		if res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusGone {
			code = errs.NotFound
		}
		return ports.WebPage{}, 0, errs.Newf(code, "the page answered HTTP %d", res.StatusCode).WithHint("check the address, or try another page")
	}
	mediaType, params, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	if mediaType == "" {
		mediaType = "text/html"
	}
	kind := textKind(mediaType)
	if kind == "" {
		return ports.WebPage{}, 0, errs.Newf(errs.CannotRead, "the page is %s, not text petal can read", mediaType).
			WithHint("read_page reads HTML, plain text, Markdown and JSON")
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, f.maxBytes+1))
	n := int64(len(body))
	if err != nil {
		if ctx.Err() != nil {
			return ports.WebPage{}, n, errs.Newf(errs.SourceFailed, "the page did not arrive within %s", f.timeout).WithCause(context.DeadlineExceeded)
		}
		return ports.WebPage{}, n, errs.New(errs.SourceFailed, "the page was cut off while it was read", "try again").WithCause(err)
	}
	cut := n > f.maxBytes
	if cut {
		body = body[:f.maxBytes]
		n = f.maxBytes
	}
	page := ports.WebPage{URL: redactedURL(final), ContentType: mediaType, Cut: cut}
	utf8Body, err := toUTF8(body, params["charset"], mediaType)
	if err != nil {
		return ports.WebPage{}, n, errs.New(errs.CannotRead, "the page's text could not be decoded").WithCause(err)
	}
	if kind == "html" {
		var more bool
		if utf8Body, more = boundElements(utf8Body, MaxElements); more {
			page.Cut = true
		}
		doc, err := html.Parse(bytes.NewReader(utf8Body))
		if err != nil {
			return ports.WebPage{}, n, errs.New(errs.CannotRead, "the page's HTML could not be read").WithCause(err)
		}
		page.Title = title(doc)
		if boundTree(doc, MaxTextBytes) {
			page.Cut = true
		}
		md, err := f.converter.ConvertNode(doc, htmltomarkdown.WithContext(ctx), htmltomarkdown.WithDomain(final.Scheme+"://"+final.Host))
		if err != nil {
			return ports.WebPage{}, n, errs.New(errs.CannotRead, "the page's HTML could not be turned into text").WithCause(err)
		}
		if ctx.Err() != nil {
			return ports.WebPage{}, n, errs.Newf(errs.SourceFailed, "the page could not be turned into text within %s", f.timeout).WithCause(context.DeadlineExceeded).
				WithHint("try another page")
		}
		page.Text = string(md)
	} else {
		page.Text = string(utf8Body)
	}
	page.Text = strings.ToValidUTF8(page.Text, "\uFFFD")
	return page, n, nil
}

// boundElements is body up to its maxth element, and whether it had more:
// the parsed tree and its conversion cost about 1 KiB per element (measured:
// 5 MiB of <b>x</b>, 655,000 elements, allocated 544 MB and took 2 s; cut
// at 100,000, 102 MB and 0.33 s), so a page of tiny elements is cut by
// count, not only by bytes. The tokenizer streams, so counting costs little.
func boundElements(body []byte, max int) ([]byte, bool) {
	z := html.NewTokenizer(bytes.NewReader(body))
	n, offset := 0, 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return body, false
		}
		if tt == html.StartTagToken || tt == html.SelfClosingTagToken {
			if n++; n > max {
				return body[:offset], true
			}
		}
		offset += len(z.Raw())
	}
}

// textKind is how a media type is read: "html", "text", or "" for none.
func textKind(mediaType string) string {
	switch {
	case mediaType == "text/html", mediaType == "application/xhtml+xml":
		return "html"
	case strings.HasPrefix(mediaType, "text/"), mediaType == "application/json", strings.HasSuffix(mediaType, "+json"),
		mediaType == "application/xml", strings.HasSuffix(mediaType, "+xml"):
		return "text"
	}
	return ""
}

// toUTF8 decodes body from its charset (the header's, else what the bytes
// and an HTML <meta> say) to UTF-8.
func toUTF8(body []byte, declared, mediaType string) ([]byte, error) {
	if (declared == "" || strings.EqualFold(declared, "utf-8")) && utf8.Valid(body) {
		return body, nil
	}
	ct := mediaType
	if declared != "" {
		ct += "; charset=" + declared
	}
	r, err := charset.NewReader(bytes.NewReader(body), ct)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// title is the text of the document's first <title>, trimmed.
func title(n *html.Node) string {
	if n.Type == html.ElementNode && n.Data == "title" {
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		}
		t := strings.Join(strings.Fields(b.String()), " ")
		if len(t) > 300 {
			t = t[:300]
		}
		return strings.ToValidUTF8(t, "")
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := title(c); t != "" {
			return t
		}
	}
	return ""
}

// redactedURL is u without credentials, safe to show and log.
func redactedURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	s := c.String()
	if len(s) > 2048 {
		s = s[:2048]
	}
	return s
}
