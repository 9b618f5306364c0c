package oneclick

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fake1Click answers GET /v0/tokens with testdata/tokens.json (1Click's
// TokenResponse shape), or with status when it is set.
func fake1Click(t *testing.T, status *atomic.Int32, calls *atomic.Int32) *httptest.Server {
	body, err := os.ReadFile("testdata/tokens.json")
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/v0/tokens" || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		if s := status.Load(); s != 0 {
			http.Error(w, "down", int(s))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestNearPriceFromTheTokenList(t *testing.T) {
	var status, calls atomic.Int32
	srv := fake1Click(t, &status, &calls)
	f := NewPriceFeed(srv.URL+"/", nil)
	now := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	f.now = func() time.Time { return now }

	p, ok, err := f.NearUSD(t.Context())
	require.NoError(t, err)
	require.True(t, ok)
	assert.EqualValues(t, 3_123_456, p, "$3.1234567 truncated to micro-dollars")

	status.Store(http.StatusBadGateway)
	p, ok, _ = f.NearUSD(t.Context())
	assert.True(t, ok, "cached for a minute")
	assert.EqualValues(t, 3_123_456, p)
	assert.EqualValues(t, 1, calls.Load())

	now = now.Add(2 * time.Minute)
	_, ok, err = f.NearUSD(t.Context())
	require.NoError(t, err, "an unreadable list is unknown, not an error")
	assert.False(t, ok)
}

func TestNearPriceUnknownWhenUnreachable(t *testing.T) {
	f := NewPriceFeed("http://127.0.0.1:1", nil)
	_, ok, err := f.NearUSD(t.Context())
	require.NoError(t, err)
	assert.False(t, ok)
}

// A failed fetch is still "unknown" to the caller, and the operator is told
// why.
func TestAFailedPriceFetchIsLogged(t *testing.T) {
	var buf bytes.Buffer
	f := NewPriceFeed("http://127.0.0.1:1", nil).LoggingTo(slog.New(slog.NewTextHandler(&buf, nil)))
	_, ok, err := f.NearUSD(t.Context())
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Contains(t, buf.String(), "level=WARN")
	assert.Contains(t, buf.String(), "reading the NEAR price from 1Click failed")
	assert.Contains(t, buf.String(), "127.0.0.1:1")
}

func TestDecimalUSD(t *testing.T) {
	for in, want := range map[string]int64{"3": 3_000_000, "3.1": 3_100_000, "0.000001": 1, "0.0000009": 0, "2.9999999": 2_999_999} {
		got, err := decimalUSD(in)
		require.NoError(t, err, in)
		assert.EqualValues(t, want, got, in)
	}
	for _, bad := range []string{"3e2", "abc", ""} {
		_, err := decimalUSD(bad)
		assert.Error(t, err, bad)
	}
}
