// Package tracing is petal's OpenTelemetry traces: the HTTP door, pgx and
// the outbound clients (model, NEAR RPC, 1Click) as spans, exported over
// OTLP/HTTP when the SDK's own variables name an endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; the
// exporter, the batch processor, the sampler and the resource read the rest:
// OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, OTEL_BSP_*, headers, timeout).
// Off, nothing is wrapped at all: the door, the pool and the clients are
// exactly what they are without this package.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is on (spans exported) or off (the zero value and nil: nothing).
type Tracing struct {
	provider   *sdktrace.TracerProvider
	propagator propagation.TextMapPropagator
}

// Enabled reports whether getenv's variables turn tracing on: an OTLP
// endpoint named, and neither OTEL_SDK_DISABLED=true nor
// OTEL_TRACES_EXPORTER=none.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Start turns tracing on when Enabled(getenv), else returns it off. The
// exporter reads the process's environment itself, as the SDK documents.
// Shutdown flushes what is batched.
func Start(ctx context.Context, getenv func(string) string, buildID string) (*Tracing, error) {
	if !Enabled(getenv) {
		return &Tracing{}, nil
	}
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
	}
	// The SDK's resource from the environment (OTEL_SERVICE_NAME,
	// OTEL_RESOURCE_ATTRIBUTES) over petal's own defaults.
	res, err := resource.Merge(
		resource.NewSchemaless(semconv.ServiceName("petal"), semconv.ServiceVersion(buildID)),
		resource.Environment())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	return &Tracing{provider: provider,
		propagator: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}, nil
}

// On reports whether spans are made.
func (t *Tracing) On() bool { return t != nil && t.provider != nil }

// Shutdown flushes the spans batched and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if !t.On() {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// Provider is the tracer provider (nil when off).
func (t *Tracing) Provider() trace.TracerProvider {
	if !t.On() {
		return nil
	}
	return t.provider
}

// Handler wraps the HTTP door: a server span per request, continuing the
// caller's traceparent. Off, h itself.
func (t *Tracing) Handler(h http.Handler) http.Handler {
	if !t.On() {
		return h
	}
	return otelhttp.NewHandler(h, "http", otelhttp.WithTracerProvider(t.provider), otelhttp.WithPropagators(t.propagator),
		// The route is named once routed (httpapi renames the span); until
		// then the method alone, never the raw path (unbounded names).
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method }))
}

// Transport is the round tripper of an outbound client: a client span per
// call, carrying traceparent to the service. Off, nil: the client's default.
func (t *Tracing) Transport() http.RoundTripper {
	if !t.On() {
		return nil
	}
	return otelhttp.NewTransport(http.DefaultTransport, otelhttp.WithTracerProvider(t.provider), otelhttp.WithPropagators(t.propagator))
}

// QueryTracer traces pgx's queries, batches and connects (the SQL text, never
// its parameters). Off, nil.
func (t *Tracing) QueryTracer() pgx.QueryTracer {
	if !t.On() {
		return nil
	}
	return otelpgx.NewTracer(otelpgx.WithTracerProvider(t.provider)) // span names trimmed: otelpgx's default
}

// WithTraceIDs adds trace_id and span_id to each line logged in a traced
// context; serve wraps its logger in it only when Enabled, so untraced logs
// pay nothing.
func WithTraceIDs(h slog.Handler) slog.Handler {
	if _, ok := h.(traceIDs); ok {
		return h
	}
	return traceIDs{h}
}

type traceIDs struct{ slog.Handler }

func (h traceIDs) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceIDs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceIDs{h.Handler.WithAttrs(attrs)}
}

func (h traceIDs) WithGroup(name string) slog.Handler { return traceIDs{h.Handler.WithGroup(name)} }
