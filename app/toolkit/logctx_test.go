package toolkit

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A line logged with a request's context carries its request_id, through
// With and WithGroup too; wrapping twice adds it once; a line without a
// request has none.
func TestLogLinesCarryTheRequestID(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(WithRequestIDs(WithRequestIDs(slog.NewJSONHandler(&buf, nil))))
	ctx := WithRequestID(context.Background(), "req-1")
	lines := func() []map[string]any {
		var out []map[string]any
		dec := json.NewDecoder(&buf)
		for dec.More() {
			var rec map[string]any
			require.NoError(t, dec.Decode(&rec))
			out = append(out, rec)
		}
		buf.Reset()
		return out
	}

	log.InfoContext(ctx, "one")
	log.With("run", "run_1").ErrorContext(ctx, "two")
	log.Info("no request")
	assert.Equal(t, 2, bytes.Count(buf.Bytes(), []byte(`"request_id"`)), "once a line: %s", buf.String())
	got := lines()
	require.Len(t, got, 3)
	assert.Equal(t, "req-1", got[0]["request_id"])
	assert.Equal(t, "req-1", got[1]["request_id"])
	assert.Equal(t, "run_1", got[1]["run"])
	assert.NotContains(t, got[2], "request_id")
	assert.Equal(t, "req-1", RequestID(ctx))
	assert.Empty(t, RequestID(context.Background()))
}
