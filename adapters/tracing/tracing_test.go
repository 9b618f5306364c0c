package tracing_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/petal-near/petal/adapters/tracing"
)

func TestEnabledFollowsTheSDKsVariables(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "TRUE"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_TRACES_EXPORTER": "none"}, false},
	} {
		assert.Equal(t, c.want, tracing.Enabled(func(k string) string { return c.env[k] }), "%v", c.env)
	}
}

// Off wraps nothing: the handler is the same handler, no transport, no
// tracer, no provider.
func TestOffWrapsNothing(t *testing.T) {
	off, err := tracing.Start(context.Background(), func(string) string { return "" }, "dev")
	require.NoError(t, err)
	assert.False(t, off.On())
	h := &http.ServeMux{}
	assert.Same(t, h, off.Handler(h))
	assert.Nil(t, off.Transport())
	assert.Nil(t, off.QueryTracer())
	assert.Nil(t, off.Provider())
	require.NoError(t, off.Shutdown(context.Background()))
}

func TestLogLinesInATraceNameIt(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(tracing.WithTraceIDs(slog.NewJSONHandler(&buf, nil)))
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
	log.InfoContext(ctx, "traced")
	log.Info("untraced")
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	require.Len(t, lines, 2)
	assert.Contains(t, string(lines[0]), `"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7"`)
	assert.NotContains(t, string(lines[1]), "trace_id")
}
