package evm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petal-near/petal/adapters/internal/retryafter"
)

// failover is the HTTP transport under one chain's JSON-RPC client: each
// request goes to the endpoint that last answered, and on a transport error,
// a 429 or a 5xx it goes again, to the next endpoint, after a jittered pause
// or the Retry-After the endpoint asked for. go-ethereum's rpc client makes
// one POST per call (or batch), so retrying here retries whole calls and
// keeps JSON-RPC to the library.
type failover struct {
	endpoints []*url.URL
	next      http.RoundTripper
	attempts  int // tries of one request, across endpoints
	backoff   time.Duration
	maxAnswer int64

	mu        sync.Mutex
	preferred int // the endpoint that answered last

	requests atomic.Int64 // HTTP requests sent, retries included
}

// maxRetryAfter bounds the wait an endpoint's Retry-After asks for: longer,
// and the next endpoint is tried after the usual pause instead.
const maxRetryAfter = 10 * time.Second

// errAnswerTooLarge ends an answer past maxAnswer bytes; a log range's
// answer that large is a range to shrink.
var errAnswerTooLarge = errors.New("the RPC's answer is larger than petal reads")

func (f *failover) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(io.LimitReader(req.Body, 16<<20))
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	f.mu.Lock()
	start := f.preferred
	f.mu.Unlock()
	wait := f.backoff
	var lastErr error
	var lastRes *http.Response
	for try := 0; try < f.attempts; try++ {
		if try > 0 {
			// Jittered (half to all of the doubled wait), so callers a busy
			// provider turned away don't come back at once; a Retry-After
			// the provider gave wins, up to maxRetryAfter.
			pause := wait/2 + rand.N(wait/2+1)
			if lastRes != nil {
				if asked, ok := retryafter.Parse(lastRes.Header.Get("Retry-After")); ok && asked <= maxRetryAfter {
					pause = asked
				}
				drain(lastRes)
				lastRes = nil
			}
			wait *= 2
			select {
			case <-req.Context().Done():
				return nil, req.Context().Err()
			case <-time.After(pause):
			}
		}
		i := (start + try) % len(f.endpoints)
		out := req.Clone(req.Context())
		out.URL = f.endpoints[i]
		out.Host = ""
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		out.ContentLength = int64(len(body))
		f.requests.Add(1)
		res, err := f.next.RoundTrip(out)
		switch {
		case err != nil:
			if req.Context().Err() != nil {
				return nil, err
			}
			// The endpoint's address is not in the error: it may hold a key.
			lastErr = fmt.Errorf("endpoint %d of %d: %w", i+1, len(f.endpoints), unwrapURLError(err))
			continue
		case res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500:
			lastErr, lastRes = nil, res
			continue
		}
		f.mu.Lock()
		f.preferred = i
		f.mu.Unlock()
		res.Body = &limitedBody{r: res.Body, left: f.maxAnswer}
		return res, nil
	}
	if lastRes != nil {
		// The last refusal goes up as it came (the rpc client makes it an
		// HTTPError with its status), its body bounded.
		lastRes.Body = &limitedBody{r: lastRes.Body, left: 64 << 10}
		return lastRes, nil
	}
	return nil, lastErr
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func drain(res *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
}

// limitedBody fails past left bytes rather than read an answer without end.
type limitedBody struct {
	r    io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// At the limit: an answer that ends here is whole.
		var one [1]byte
		if n, err := b.r.Read(one[:]); n == 0 && err != nil {
			return 0, err
		}
		return 0, errAnswerTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.r.Close() }
