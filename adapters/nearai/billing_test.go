package nearai

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/credit"
)

// fakeBilling answers POST /v1/billing/costs in NEAR AI's shape.
func fakeBilling(t *testing.T, costs map[string]any, status int) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/billing/costs" || r.Method != http.MethodPost || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.NotFound(w, r)
			return
		}
		if status != 0 {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"error":{"message":"down","type":"server_error"}}`))
			return
		}
		b, _ := io.ReadAll(r.Body)
		var req struct {
			RequestIDs []string `json:"requestIds"`
		}
		require.NoError(t, json.Unmarshal(b, &req))
		var out []map[string]any
		for _, id := range req.RequestIDs {
			if c, ok := costs[id]; ok {
				out = append(out, map[string]any{"requestId": id, "costNanoUsd": c})
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"requests": out})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestBilled(t *testing.T) {
	srv := fakeBilling(t, map[string]any{"inf-1": 18_000_000, "inf-2": 1_500}, 0)
	c, err := New(Options{BaseURL: srv.URL + "/v1", Key: "sk-test", Model: Catalogue[0].ID, Fallback: Catalogue[0].ID}, nil)
	require.NoError(t, err)
	got, err := c.Billed(t.Context(), []string{"inf-1", "inf-2", "inf-unknown"})
	require.NoError(t, err)
	assert.Equal(t, map[string]credit.Micros{"inf-1": 18_000, "inf-2": 2}, got, "nano-dollars rounded up to micro-dollars; unknown ids absent")

	down := fakeBilling(t, nil, http.StatusBadGateway)
	c, _ = New(Options{BaseURL: down.URL + "/v1", Key: "sk-test", Model: Catalogue[0].ID, Fallback: Catalogue[0].ID}, nil)
	_, err = c.Billed(t.Context(), []string{"inf-1"})
	assert.Error(t, err)
}
