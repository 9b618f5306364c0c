package peopleapp

import (
	"bytes"
	"crypto/rand"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/app/config"
)

func TestWalletKeyStartUpRules(t *testing.T) {
	gatedWithModel := config.Config{AgentAccess: "gated", ModelKey: "sk-x"}
	_, err := NewWalletKeys(gatedWithModel, rand.Reader, nil)
	assert.ErrorIs(t, err, ErrWalletKeyRequired, "a gated server with a model key refuses to start without it")

	withKey := gatedWithModel
	withKey.WalletKey = strings.Repeat("ab", 32)
	k, err := NewWalletKeys(withKey, rand.Reader, nil)
	require.NoError(t, err)
	_, err = k.Key(t.Context())
	assert.NoError(t, err)

	bad := gatedWithModel
	bad.WalletKey = "abc"
	_, err = NewWalletKeys(bad, rand.Reader, nil)
	assert.Error(t, err, "a malformed key stops the start")

	for _, cfg := range []config.Config{{AgentAccess: "open", ModelKey: "sk-x"}, {AgentAccess: "gated"}} {
		var logs bytes.Buffer
		k, err := NewWalletKeys(cfg, rand.Reader, slog.New(slog.NewTextHandler(&logs, nil)))
		require.NoError(t, err, "%+v", cfg)
		assert.Empty(t, logs.String(), "nothing said until the first sign-in")
		k1, err := k.Key(t.Context())
		require.NoError(t, err)
		k2, err := k.Key(t.Context())
		require.NoError(t, err)
		assert.Equal(t, k1, k2, "one throwaway key for the process")
		assert.Equal(t, 1, strings.Count(logs.String(), "PETAL_WALLET_KEY"), "one warning line")
	}
}
