package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

// statusOf is the one table from the contract's error codes to HTTP statuses.
var statusOf = map[errs.Code]int{
	errs.BadInput:         http.StatusBadRequest,
	errs.Unauthorised:     http.StatusUnauthorized,
	errs.InviteRequired:   http.StatusForbidden,
	errs.NotFound:         http.StatusNotFound,
	errs.CannotRead:       http.StatusUnprocessableEntity,
	errs.InvalidSpec:      http.StatusUnprocessableEntity,
	errs.RateLimited:      http.StatusTooManyRequests,
	errs.BudgetExhausted:  http.StatusTooManyRequests,
	errs.PaymentRequired:  http.StatusPaymentRequired,
	errs.NotOnThisSite:    http.StatusForbidden,
	errs.SourceFailed:     http.StatusServiceUnavailable, // 503, never 502: Cloudflare hides an origin's 502
	errs.Conflict:         http.StatusConflict,
	errs.MethodNotAllowed: http.StatusMethodNotAllowed,
	errs.Internal:         http.StatusInternalServerError,
}

// StatusOf is the HTTP status for an error code.
func StatusOf(code errs.Code) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// jsonContentType names UTF-8 outright, as the contract's rules do, though
// RFC 8259 makes it the only encoding of JSON.
const jsonContentType = "application/json; charset=UTF-8"

var jsonContentTypeValue = []string{jsonContentType}

var toolsVersionPrefix = []byte(`{"tools_version":"` + toolkit.ToolsVersion + `"`)

// withToolsVersion splices tools_version into a JSON object's bytes, so every
// JSON answer carries it without each handler remembering to.
func withToolsVersion(body []byte) []byte {
	if len(body) < 2 || body[0] != '{' {
		return body
	}
	out := make([]byte, 0, len(body)+len(toolsVersionPrefix)+1)
	out = append(out, toolsVersionPrefix...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...)
}

// writeJSON answers v as JSON with tools_version.
func writeJSON(c echo.Context, status int, v any) error {
	if e, ok := v.(toolkit.EncodedAnswer); ok {
		// An answer its tool encoded once and keeps (list_networks).
		return writeJSONBytes(c, status, e.JSON())
	}
	if raw, ok := v.(json.RawMessage); ok {
		return writeJSONBytes(c, status, raw)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return errs.New(errs.Internal, "the answer could not be encoded").WithCause(err)
	}
	return writeJSONBytes(c, status, b)
}

func writeJSONBytes(c echo.Context, status int, b []byte) error {
	if len(b) < splicedWriteOver || b[0] != '{' {
		return c.Blob(status, jsonContentType, withToolsVersion(b))
	}
	// A large answer is written in two parts under its known length rather
	// than copied whole to splice tools_version in.
	res := c.Response()
	h := res.Header()
	h[echo.HeaderContentType] = jsonContentTypeValue // shared: Set would allocate
	h.Set(echo.HeaderContentLength, strconv.Itoa(len(toolsVersionPrefix)+1+len(b)-1))
	res.WriteHeader(status)
	var head [64]byte
	if _, err := res.Write(append(append(head[:0], toolsVersionPrefix...), ',')); err != nil {
		return err
	}
	_, err := res.Write(b[1:])
	return err
}

// splicedWriteOver is the answer size from which writeJSONBytes writes in
// two parts instead of copying: past a few hundred bytes the copy (and the
// garbage it leaves) costs more than a second write into the response's
// buffer (GET /api/v1/networks, 2.7 KB, was most of its allocated bytes).
const splicedWriteOver = 512

// toPetalError turns anything a handler or Echo returned into petal's error.
// What is not petal's own is internal, and its detail stays in the logs.
func toPetalError(err error) *errs.Error {
	if e, ok := errs.As(err); ok {
		return e
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		switch he.Code {
		case http.StatusNotFound:
			return errs.New(errs.NotFound, "no such route", "see /api/v1/openapi.json for the routes")
		case http.StatusMethodNotAllowed:
			return errs.New(errs.MethodNotAllowed, "this route does not take that method", "see the Allow header")
		case http.StatusRequestEntityTooLarge:
			return errs.New(errs.BadInput, "the body is too large", "send a smaller body")
		case http.StatusBadRequest:
			return errs.New(errs.BadInput, "the request could not be read")
		}
	}
	return errs.New(errs.Internal, "something went wrong on our side", "try again; if it keeps happening, tell us the X-Request-Id").WithCause(err)
}

// errorHandler writes every error in the contract's shape and logs the ones
// that are ours.
func errorHandler(log *slog.Logger) echo.HTTPErrorHandler {
	return func(err error, c echo.Context) {
		if c.Response().Committed {
			// Too late to answer with it (an SSE stream, a body half
			// written), but not too late to tell the operator.
			logAfterCommit(log, c, err)
			return
		}
		e := toPetalError(err)
		status := StatusOf(e.Code)
		if status >= 500 && e.Code != errs.SourceFailed {
			log.ErrorContext(c.Request().Context(), "request failed",
				"method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
		} else if e.Cause != nil {
			log.WarnContext(c.Request().Context(), "request refused", "code", e.Code, "err", e.Cause)
		}
		if e.RetryAfterS > 0 {
			c.Response().Header().Set("Retry-After", strconv.Itoa(e.RetryAfterS))
		}
		unread := bodyUnread(c)
		if unread {
			c.Response().Header().Set(echo.HeaderConnection, "close")
			// Reading the rest after the answer is written needs full duplex.
			_ = http.NewResponseController(c.Response()).EnableFullDuplex()
		}
		if c.Request().Method == http.MethodHead {
			_ = c.NoContent(status)
		} else {
			_ = writeJSON(c, status, e.Body())
		}
		if unread {
			lingerOnUnreadBody(c)
		}
	}
}

// A refusal's connection is closed with some of its body unread. Closed at
// once, the kernel answers the bytes still arriving with a reset, and a
// reset can reach the client before it has read the refusal, which it then
// never sees (the client reads "connection reset" instead). So, once the
// refusal is flushed, the rest of the body is read and dropped for a short
// while: the client has its answer already, and the close ends cleanly.
const (
	lingerFor   = time.Second
	lingerBytes = 4 << 20 // twice the wire limit of the largest body petal takes
)

func lingerOnUnreadBody(c echo.Context) {
	body := c.Request().Body
	if b, ok := c.Get(bodyKey).(*deadlineBody); ok {
		body = b.rc // under the caps, whose errors would stop the drain early
	}
	if body == nil || body == http.NoBody {
		return
	}
	ctl := http.NewResponseController(c.Response())
	if ctl.Flush() != nil || ctl.SetReadDeadline(time.Now().Add(lingerFor)) != nil {
		return
	}
	_, _ = io.CopyN(io.Discard, body, lingerBytes)
}

// logAfterCommit logs an error that came after the answer had begun. A client
// that went away is ordinary (a viewer closing its tab); anything else is ours.
func logAfterCommit(log *slog.Logger, c echo.Context, err error) {
	ctx := c.Request().Context()
	if ctx.Err() != nil || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
		log.DebugContext(ctx, "the client left before the answer ended", "route", c.Path(), "err", err)
		return
	}
	log.ErrorContext(ctx, "failed after the answer had begun", "method", c.Request().Method, "route", c.Path(),
		"status", c.Response().Status, "err", err)
}
