package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/toolkit"
)

type longFailTools struct{}

func (longFailTools) Tools() []toolkit.Tool {
	return []toolkit.Tool{toolkit.WithIO(toolkit.Tool{Name: "long_fail", Long: true},
		func(_ context.Context, call toolkit.Call, _ struct{}) (nothing, error) {
			call.Progress(toolkit.Progress{Stage: "reading"})
			return nothing{}, errors.New("pq: connection to 10.0.0.7 refused")
		})}
}

// logLines are the JSON lines logged with msg.
func logLines(t *testing.T, log, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.Lines(log) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// Errors the caller can no longer be answered with are logged, with the
// request's id: an internal error sent as a stream's error event, and an
// error returned after the answer had begun.
func TestErrorsPastTheStatusLineAreLogged(t *testing.T) {
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	buf := &syncBuffer{}
	reg := toolkit.NewRegistry(cfg, memory.NewRateLimiter(memory.SystemClock{}), []toolkit.ToolSet{longFailTools{}})
	s := New(Deps{Config: cfg, Log: slog.New(slog.NewJSONHandler(buf, nil)), Registry: reg})
	s.add(Route{Method: http.MethodPost, Path: "/test/long", Tool: "long_fail"})
	s.add(Route{Method: http.MethodGet, Path: "/test/half", Access: AccessPlain, Handler: func(c echo.Context) error {
		c.Response().WriteHeader(http.StatusOK)
		_, _ = c.Response().Write([]byte("half"))
		return errors.New("the rest could not be read: disk on fire")
	}})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)

	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/test/long", strings.NewReader(`{}`))
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Request-Id", "stream-err")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, string(body), "event: error")
	assert.Contains(t, string(body), `"code":"internal"`)
	assert.NotContains(t, string(body), "10.0.0.7", "the detail stays in the log")

	req, err = http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/test/half", nil)
	require.NoError(t, err)
	req.Header.Set("X-Request-Id", "half-err")
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()

	streamed := logLines(t, buf.String(), "tool failed inside its stream")
	require.Len(t, streamed, 1, buf.String())
	assert.Equal(t, "stream-err", streamed[0]["request_id"])
	assert.Equal(t, "long_fail", streamed[0]["tool"])
	assert.Contains(t, streamed[0]["err"], "10.0.0.7")

	late := logLines(t, buf.String(), "failed after the answer had begun")
	require.Len(t, late, 1, buf.String())
	assert.Equal(t, "half-err", late[0]["request_id"])
	assert.Contains(t, late[0]["err"], "disk on fire")
	assert.EqualValues(t, 200, late[0]["status"])
}
