package agentapp

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/petal-near/petal/domain/errs"
)

// A chat's trace: the run, one span per model round under it, and each tool
// call under its round, beside the HTTP, model, NEAR and pgx spans the
// adapters make (adapters/tracing). With no tracer provider (tracing off)
// the spans are the OpenTelemetry API's no-op ones, and no attribute is
// computed: a chat pays nothing for them.

const tracerName = "github.com/petal-near/petal/app/agentapp"

func newTracer(p trace.TracerProvider) trace.Tracer {
	if p == nil {
		p = noop.NewTracerProvider()
	}
	return p.Tracer(tracerName)
}

// TraceWith makes the chat's spans with p (nil: none).
func (a *AgentService) TraceWith(p trace.TracerProvider) { a.tracer = newTracer(p) }

// startRunSpan starts the span of a chat's run.
func (a *AgentService) startRunSpan(ctx context.Context, c *chat) (context.Context, trace.Span) {
	ctx, span := a.tracer.Start(ctx, "agent.run")
	if span.IsRecording() {
		span.SetAttributes(attribute.String("petal.run.id", c.run.ID), attribute.String("petal.agent.model", c.model))
	}
	return ctx, span
}

// roundSpan is one round: its model call (and the calls a fallback or a
// truncated answer asks again) and the tools it calls.
type roundSpan struct {
	span   trace.Span
	tokens int64 // the chat's tokens (in and out) when the round began
	taken  int64 // the chat's charges (micro-USD) when the round began
}

func (a *AgentService) startRound(ctx context.Context, c *chat, round int) (context.Context, roundSpan) {
	ctx, span := a.tracer.Start(ctx, "agent.round")
	r := roundSpan{span: span}
	if span.IsRecording() {
		span.SetAttributes(attribute.String("petal.run.id", c.run.ID), attribute.Int("petal.agent.round", round))
		r.tokens, r.taken = c.tokens.In+c.tokens.Out, int64(c.taken)
	}
	return ctx, r
}

// end records what the round used: the model that answered, the output
// tokens its first call held room for, the tokens it used and what it was
// charged.
func (r roundSpan) end(c *chat, outAllowance int, err error) {
	if r.span.IsRecording() {
		r.span.SetAttributes(attribute.String("petal.agent.model", c.model),
			attribute.Int("petal.agent.tokens.out_allowance", outAllowance),
			attribute.Int64("petal.agent.tokens.used", c.tokens.In+c.tokens.Out-r.tokens),
			attribute.Int64("petal.agent.charged_micro_usd", int64(c.taken)-r.taken))
		endWithError(r.span, err)
	}
	r.span.End()
}

func (a *AgentService) startToolSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	ctx, span := a.tracer.Start(ctx, "agent.tool "+name)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("petal.tool.name", name))
	}
	return ctx, span
}

// endToolSpan records a tool call's outcome: ok, refused (waiting for the
// person's yes) or the error's code.
func endToolSpan(span trace.Span, refusal *errs.Error, toolErr, err error) {
	if span.IsRecording() {
		switch {
		case err != nil:
			endWithError(span, err)
		case refusal != nil:
			span.SetAttributes(attribute.String("petal.tool.outcome", "refused"), attribute.String("petal.error.code", string(refusal.Code)))
		case toolErr != nil:
			span.SetAttributes(attribute.String("petal.tool.outcome", "error"))
			endWithError(span, toolErr)
		default:
			span.SetAttributes(attribute.String("petal.tool.outcome", "ok"))
		}
	}
	span.End()
}

func endWithError(span trace.Span, err error) {
	if err == nil {
		return
	}
	code := string(errs.CodeOf(err))
	span.SetAttributes(attribute.String("petal.error.code", code))
	span.SetStatus(codes.Error, code)
}
