package toolkit

import "context"

type callerKey struct{}

// WithCaller carries who is calling through a door whose library hands the
// tool handler only a context (MCP over HTTP): the HTTP door knows the
// address, the MCP door runs the tool.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom is the caller WithCaller put in ctx.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}
