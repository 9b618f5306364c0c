package toolkit

import (
	"context"
	"testing"
)

type ctxKey struct{}

// A detached write outlives its request's cancellation, keeps the request's
// values, and still has a deadline of its own.
func TestDetachedWritesHaveTheirOwnDeadline(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "request 1"))
	wctx, wcancel := Detached(parent)
	defer wcancel()
	cancel()
	if err := wctx.Err(); err != nil {
		t.Fatalf("the request's end cancelled the write: %v", err)
	}
	if got := wctx.Value(ctxKey{}); got != "request 1" {
		t.Fatalf("the request's values are gone: %v", got)
	}
	if _, ok := wctx.Deadline(); !ok {
		t.Fatal("a detached write has no deadline")
	}
}
