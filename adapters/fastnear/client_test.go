package fastnear_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/fastnear"
	"github.com/petal-near/petal/adapters/fastnear/fastneartest"
	"github.com/petal-near/petal/domain/errs"
)

func balance(s string) *string { return &s }

func TestTopHoldersAreTheIndexsNames(t *testing.T) {
	fake := fastneartest.New(t)
	fake.Set("usdt.tether-token.near",
		fastneartest.Holder{AccountID: "whale.near", Balance: balance("900")},
		fastneartest.Holder{AccountID: "NOT AN ACCOUNT", Balance: balance("5")},
		fastneartest.Holder{AccountID: "alice.near", Balance: nil},
		fastneartest.Holder{AccountID: "whale.near", Balance: balance("900")},
	)
	c := fastnear.New(fastnear.Options{Bases: map[string]string{"near:mainnet": fake.URL}})
	got, err := c.TopHolders(t.Context(), "near:mainnet", "usdt.tether-token.near")
	require.NoError(t, err)
	assert.Equal(t, []string{"whale.near", "alice.near"}, got, "odd and repeated names left out, the order kept")

	_, err = c.TopHolders(t.Context(), "near:mainnet", "nothing.near")
	assert.Equal(t, errs.NotFound, errs.CodeOf(err))
	_, err = c.TopHolders(t.Context(), "near:testnet", "usdt.tether-token.near")
	assert.Equal(t, errs.BadInput, errs.CodeOf(err))
}

func TestAnIndexThatFailsIsSourceFailed(t *testing.T) {
	for name, h := range map[string]http.HandlerFunc{
		"503":      func(w http.ResponseWriter, r *http.Request) { http.Error(w, "busy", http.StatusServiceUnavailable) },
		"not json": func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>")) },
		"other token": func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"token_id":"x.near","accounts":[]}`))
		},
		"too large": func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"token_id":"t.near","accounts":[` + strings.Repeat(`{"account_id":"a.near","balance":"1"},`, 10000) + `]}`))
		},
	} {
		srv := httptest.NewServer(h)
		c := fastnear.New(fastnear.Options{Bases: map[string]string{"near:mainnet": srv.URL}})
		_, err := c.TopHolders(t.Context(), "near:mainnet", "t.near")
		assert.Equal(t, errs.SourceFailed, errs.CodeOf(err), name)
		srv.Close()
	}
}
