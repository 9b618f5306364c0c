package errs

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBodyShowsOnlyWhatCallersMaySee(t *testing.T) {
	e := New(RateLimited, "too many calls", "wait a minute").WithRetryAfter(42).WithCause(errors.New("SELECT secret FROM internals"))
	e.Extra = map[string]any{"ended": "stopped", "internal": "x"}
	b, err := json.Marshal(e.Body())
	require.NoError(t, err)
	assert.JSONEq(t, `{"error":{"code":"rate_limited","message":"too many calls","hint":"wait a minute","retry_after_s":42,"ended":"stopped"}}`, string(b))
}

func TestCodeOfWrapped(t *testing.T) {
	wrapped := fmt.Errorf("op: %w", New(NotFound, "no run r1"))
	assert.Equal(t, NotFound, CodeOf(wrapped))
	assert.True(t, Is(wrapped, NotFound))
	assert.Equal(t, Internal, CodeOf(errors.New("plain")))
}
