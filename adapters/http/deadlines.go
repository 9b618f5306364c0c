package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

// bodyDeadline gives a request's body d to arrive, from the end of its
// headers (http.Server's ReadHeaderTimeout bounds those): a client sending a
// byte every few seconds is cut at d, and its connection closed. Once the body
// has been read the deadline is lifted, so an answer that streams for minutes
// after it (SSE, a long poll, MCP's streamed progress) is never cut. Requests
// without a body (every GET, the event streams among them) have no deadline
// but the idle one between requests.
func bodyDeadline(c echo.Context, d time.Duration) {
	r := c.Request()
	if d <= 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	ctl := http.NewResponseController(c.Response())
	if err := ctl.SetReadDeadline(time.Now().Add(d)); err != nil {
		// Only a test's recorder can't; a real connection always can.
		return
	}
	body := &deadlineBody{rc: r.Body, ctl: ctl, limit: d, left: r.ContentLength}
	r.Body = body
	c.Set(bodyKey, body)
}

const bodyKey = "petal.body"

// bodyUnread reports whether the request's body has not been read to its
// end. An answer to such a request closes the connection: net/http would
// otherwise read (up to 256 KiB of) the rest of the body before writing the
// status, so a refusal given before the body is read reached a client
// sending slowly only when its body or its deadline ran out (30 s).
func bodyUnread(c echo.Context) bool {
	if b, ok := c.Get(bodyKey).(*deadlineBody); ok {
		return !b.lifted
	}
	r := c.Request()
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// deadlineBody lifts the read deadline once its body has been read (its
// declared length reached, or its end), and turns the deadline's error into
// the contract's shape. A JSON decoder stops at the value's last byte without
// asking for the end, so the length is what tells a streamed answer after a
// decoded body (MCP's) that the body is in.
type deadlineBody struct {
	rc     io.ReadCloser
	ctl    *http.ResponseController
	limit  time.Duration
	left   int64 // bytes still declared; -1 when the length is unknown (chunked)
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if b.left > 0 {
		b.left -= int64(n)
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return n, errs.Newf(errs.BadInput, "the body took longer than %d s to arrive", int(b.limit.Seconds())).
			WithHint("send the whole body at once")
	case (err != nil || b.left == 0) && !b.lifted:
		b.lifted = true
		_ = b.ctl.SetReadDeadline(time.Time{})
	}
	return n, err
}

func (b *deadlineBody) Close() error { return b.rc.Close() }

// streamCount counts the event streams each address holds open on this
// process. It guards this process's connections and goroutines, which is
// why it lives in memory: behind a load balancer an address may hold up to
// the cap on each replica.
type streamCount struct {
	mu   sync.Mutex
	open map[string]int
}

// streamRetryAfter is what an address past its stream cap is told to wait.
const streamRetryAfter = 5 * time.Second

// openStream takes one of address's event streams, or refuses with 429 when
// it holds PETAL_SSE_PER_ADDRESS already. done gives it back.
func (s *Server) openStream(address string) (done func(), err error) {
	limit := s.deps.Config.SSEPerAddress
	if limit <= 0 {
		return func() {}, nil
	}
	sc := &s.streams
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.open == nil {
		sc.open = map[string]int{}
	}
	if sc.open[address] >= limit {
		return nil, toolkit.RateLimited(fmt.Sprintf("%d event streams are open from this address already; close one, or ask with Accept: application/json", limit), streamRetryAfter)
	}
	sc.open[address]++
	var once sync.Once
	return func() {
		once.Do(func() {
			sc.mu.Lock()
			defer sc.mu.Unlock()
			if sc.open[address]--; sc.open[address] <= 0 {
				delete(sc.open, address)
			}
		})
	}, nil
}
