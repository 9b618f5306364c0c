package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// Body limits from the contract's rules.
const (
	DefaultBodyLimit = 256 << 10
	ChatBodyLimit    = 512 << 10
)

var saneRequestID = regexp.MustCompile(`^[A-Za-z0-9._:\-]{1,128}$`)

// requestIDPrefix is this process's random half of every id it makes; the
// other half counts, so ids are unique without reading randomness per request.
var (
	requestIDPrefix = func() [6]byte {
		var b [6]byte
		_, _ = rand.Read(b[:])
		return b
	}()
	requestIDCount atomic.Uint64
)

// newRequestID is 24 hex digits: the process's prefix and its count.
func newRequestID() string {
	var b [12]byte
	copy(b[:6], requestIDPrefix[:])
	n := requestIDCount.Add(1)
	for i := 11; i >= 6; i-- {
		b[i] = byte(n)
		n >>= 8
	}
	return hex.EncodeToString(b[:])
}

// assignRequestID keeps a client's own X-Request-Id when it is sane, else
// makes one.
func assignRequestID(c echo.Context) {
	id := c.Request().Header.Get(echo.HeaderXRequestID)
	if !saneRequestID.MatchString(id) {
		id = newRequestID()
	}
	c.Response().Header().Set(echo.HeaderXRequestID, id)
	// Every log line written with the request's context carries the id.
	c.SetRequest(c.Request().WithContext(toolkit.WithRequestID(c.Request().Context(), id)))
}

// everyRequest is the rules every request meets, in order: its body's
// deadline (bodyDeadline), its request id, the access line and metrics
// (logRequest) and a panic turned into 500 (callRecovering). One middleware,
// not four: Echo composes its global middleware on every request, a closure
// each.
func everyRequest(bodyTimeout time.Duration, log *slog.Logger, m requestMetrics) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			bodyDeadline(c, bodyTimeout)
			assignRequestID(c)
			start := time.Now()
			m.inFlight.Add(1)
			defer m.inFlight.Add(-1)
			if err := unreadableQuery(c); err != nil {
				c.Error(err)
			} else if err := callRecovering(c, log, next); err != nil {
				// Answer now so the line below sees the real status.
				c.Error(err)
			}
			logRequest(c, log, m, start)
			return nil
		}
	}
}

// unreadableQuery refuses a query string that does not parse (cursor=%%%, a
// stray semicolon): Echo's QueryParams drops what it can't read, so the route
// would answer as if it had not been asked, page one for a broken cursor.
func unreadableQuery(c echo.Context) error {
	raw := c.Request().URL.RawQuery
	if raw == "" {
		return nil
	}
	if _, err := url.ParseQuery(raw); err != nil {
		return errs.Newf(errs.BadInput, "the query string could not be read: %v", err).
			WithHint("percent-encode each name and value (%%25 for %%), and separate them with &")
	}
	return nil
}

// nameSpanByRoute names the request's server span by its route pattern,
// known only once Echo has routed it (the raw path would name a span per
// id), and gives the span the route.
func nameSpanByRoute(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		route := c.Path()
		if route == "" {
			route = "unmatched"
		}
		span := trace.SpanFromContext(c.Request().Context())
		span.SetName(c.Request().Method + " " + route)
		span.SetAttributes(attribute.String("http.route", route))
		return next(c)
	}
}

// requestMetrics are the door's own metrics: every request by route pattern,
// method and status, with its latency, and the requests in flight.
type requestMetrics struct {
	duration ports.Histogram
	inFlight ports.Gauge
}

func newRequestMetrics(m ports.Metrics) requestMetrics {
	return requestMetrics{
		duration: m.Histogram("petal_http_request_duration_seconds",
			"HTTP requests by route pattern, method and status, with the time to answer them (an SSE stream: its whole life); _count is the requests.",
			nil, "route", "method", "code"),
		inFlight: m.Gauge("petal_http_requests_in_flight", "HTTP requests being answered now, SSE streams included."),
	}
}

// logRequest writes the request's one line once it has been answered, and
// counts it.
func logRequest(c echo.Context, log *slog.Logger, m requestMetrics, start time.Time) {
	res := c.Response()
	end := time.Now()
	elapsed := end.Sub(start)
	route := c.Path()
	if route == "" {
		route = "unmatched"
	}
	m.duration.Observe(elapsed.Seconds(), route, c.Request().Method, statusText(res.Status))
	ctx := c.Request().Context()
	if h := log.Handler(); h.Enabled(ctx, slog.LevelInfo) {
		// The record by hand: Logger.LogAttrs would read the clock again and
		// walk the stack for a source line nobody logs.
		r := slog.NewRecord(end, slog.LevelInfo, "request", 0)
		r.AddAttrs(
			slog.String("method", c.Request().Method),
			slog.String("path", c.Request().URL.Path),
			slog.String("route", c.Path()),
			slog.Int("status", res.Status),
			slog.Int64("bytes", res.Size),
			// Whole microseconds: slog writes a float through encoding/json,
			// as dear as the rest of the line.
			slog.Int64("us", elapsed.Microseconds()),
		)
		_ = h.Handle(ctx, r)
	}
}

// statusText is a status code as a label, without an allocation for the
// usual ones.
func statusText(code int) string {
	switch code {
	case http.StatusOK:
		return "200"
	case http.StatusNoContent:
		return "204"
	case http.StatusBadRequest:
		return "400"
	case http.StatusNotFound:
		return "404"
	}
	return strconv.Itoa(code)
}

// callRecovering runs next, turning a panic into 500 internal, with the
// stack in the log only.
func callRecovering(c echo.Context, log *slog.Logger, next echo.HandlerFunc) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if r == http.ErrAbortHandler {
				panic(r)
			}
			log.ErrorContext(c.Request().Context(), "panic", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = errs.New(errs.Internal, "something went wrong on our side", "try again; if it keeps happening, tell us the X-Request-Id")
		}
	}()
	return next(c)
}

var (
	corsAnyOrigin = []string{"*"}
	corsExposed   = []string{"X-Request-Id, Retry-After, ETag"}
)

// openCORS lets any site call a tool or agent route. It never sends
// Access-Control-Allow-Credentials, so a browser never carries a session across
// origins.
func openCORS(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		// Shared, never-changed values: Set would allocate a slice for each.
		h["Access-Control-Allow-Origin"] = corsAnyOrigin
		h["Access-Control-Expose-Headers"] = corsExposed
		if c.Request().Method == http.MethodOptions {
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, Accept, Last-Event-ID, X-Request-Id, Idempotency-Key, Mcp-Session-Id, Mcp-Protocol-Version")
			h.Set("Access-Control-Max-Age", "600")
			return c.NoContent(http.StatusNoContent)
		}
		return next(c)
	}
}

// noStore marks answers that read the session cookie as never cacheable.
func noStore(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		c.Response().Header().Set("Cache-Control", "no-store")
		return next(c)
	}
}

// limitBody caps a request body at limit bytes. A declared length past the cap
// is refused before reading; otherwise the reader fails at the cap, and strict
// decoding turns that into 400 bad_input.
func limitBody(limit int64) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			if r.ContentLength > limit {
				return errs.Newf(errs.BadInput, "the body is larger than %s", humanBytes(limit)).WithHint("send a smaller body")
			}
			if r.Body != nil && r.Body != http.NoBody {
				r.Body = &cappedBody{rc: r.Body, left: limit, limit: limit}
			}
			return next(c)
		}
	}
}

type cappedBody struct {
	rc    io.ReadCloser
	left  int64
	limit int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body that ends exactly at the cap from a longer one.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, bodyTooLarge(humanBytes(b.limit))
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

func humanBytes(n int64) string {
	switch {
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// decodeBody reads the request body strictly into v. A body must be JSON: a
// declared Content-Type other than JSON is refused, which also keeps a
// cross-site form from posting to us without a preflight.
func decodeBody(c echo.Context, v any) error {
	if ct := c.Request().Header.Get(echo.HeaderContentType); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return errs.Newf(errs.BadInput, "the body must be JSON, not %s", ct).WithHint("send Content-Type: application/json")
		}
	}
	// UTF-8 is checked as the body streams in: a bad one stops at its first
	// bad byte, not at the cap.
	return toolkit.DecodeStrict(&utf8Reader{r: c.Request().Body}, v)
}

// ClientAddress is the rate-limit key for a request. cf-connecting-ip is
// believed only from a socket peer in trusted (PETAL_TRUSTED_PROXIES), so a
// client that sets it itself changes nothing; X-Forwarded-For and X-Real-IP
// never count. A request that came through a trusted proxy without the
// header, and on a public site any request whose header isn't believed,
// shares one key ("shared"). Otherwise the key is the socket's peer. An IPv6
// address counts as its /64.
func ClientAddress(r *http.Request, public bool, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, perr := netip.ParseAddr(host)
	viaProxy := perr == nil && trustedPeer(peer.Unmap(), trusted)
	if viaProxy {
		if v := strings.TrimSpace(r.Header.Get("Cf-Connecting-Ip")); v != "" {
			if ip := net.ParseIP(v); ip != nil {
				return addressKey(ip)
			}
		}
	}
	if public || viaProxy {
		return "shared"
	}
	if perr == nil {
		if peer.Is4() {
			return host // ParseAddr took it, so it is the canonical dotted quad already
		}
		return addressKey(net.IP(peer.AsSlice()))
	}
	return host
}

func trustedPeer(peer netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(peer) {
			return true
		}
	}
	return false
}

func addressKey(ip net.IP) string {
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}
