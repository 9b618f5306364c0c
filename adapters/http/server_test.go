package httpapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/toolkit"
)

// slowServer serves one route, /slow, that answers only when released.
type slowServer struct {
	addr    string
	entered chan struct{}
	release chan struct{}
	cancel  context.CancelFunc
	served  chan error
	log     *syncBuffer
}

func startSlowServer(t *testing.T, drain time.Duration) *slowServer {
	t.Helper()
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	ss := &slowServer{entered: make(chan struct{}, 1), release: make(chan struct{}), served: make(chan error, 1), log: &syncBuffer{}}
	log := slog.New(slog.NewJSONHandler(ss.log, nil))
	s := New(Deps{Config: cfg, Log: log, Registry: toolkit.NewRegistry(cfg, memory.NewRateLimiter(memory.SystemClock{}), nil)})
	s.add(Route{Method: http.MethodGet, Path: "/slow", Access: AccessPlain, Handler: func(c echo.Context) error {
		ss.entered <- struct{}{}
		select {
		case <-ss.release:
			return writeJSON(c, http.StatusOK, map[string]string{"answer": "finished"})
		case <-c.Request().Context().Done():
			return c.Request().Context().Err()
		}
	}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ss.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	ss.cancel = cancel
	go func() { ss.served <- s.Serve(ctx, ln, drain) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-ss.release:
		default:
			close(ss.release)
		}
	})
	return ss
}

type slowAnswer struct {
	status int
	body   string
	err    error
}

func (ss *slowServer) askSlow() chan slowAnswer {
	out := make(chan slowAnswer, 1)
	go func() {
		res, err := http.Get("http://" + ss.addr + "/slow")
		if err != nil {
			out <- slowAnswer{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		out <- slowAnswer{status: res.StatusCode, body: string(b), err: err}
	}()
	<-ss.entered
	return out
}

// On shutdown the server stops accepting at once, lets a request in flight
// finish within the drain time, and then returns.
func TestShutdownStopsAcceptingAndDrains(t *testing.T) {
	ss := startSlowServer(t, time.Minute)
	inFlight := ss.askSlow()

	ss.cancel()
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", ss.addr, time.Second)
		if err == nil {
			_ = c.Close()
		}
		return err != nil
	}, 10*time.Second, 10*time.Millisecond, "no new connections once shutting down")
	select {
	case err := <-ss.served:
		t.Fatalf("Serve returned with a request in flight: %v", err)
	default:
	}

	close(ss.release)
	answer := <-inFlight
	require.NoError(t, answer.err)
	assert.Equal(t, http.StatusOK, answer.status)
	assert.JSONEq(t, `{"tools_version":"1.0.0","answer":"finished"}`, answer.body)
	require.NoError(t, <-ss.served)
	assert.Contains(t, ss.log.String(), "shutting down: draining requests")
}

// A request still running when the drain time is over is cut, and Serve
// returns rather than waiting for it.
func TestShutdownCutsWhatOutlivesTheDrain(t *testing.T) {
	ss := startSlowServer(t, 100*time.Millisecond)
	inFlight := ss.askSlow()
	ss.cancel()
	err := <-ss.served
	assert.True(t, err == nil || errors.Is(err, http.ErrServerClosed), "%v", err)
	answer := <-inFlight
	assert.Error(t, answer.err, "the connection is closed under the request")
	assert.Contains(t, ss.log.String(), "drain time over")
}
