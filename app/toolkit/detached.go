package toolkit

import (
	"context"
	"time"
)

// detachedWriteTimeout bounds a write that must land after its caller has
// gone (a stopped chat's end, a fresh read's snapshot, an idempotent answer):
// it outlives the request, but not a database that stopped answering.
const DetachedWriteTimeout = 30 * time.Second

// detached is ctx's values without its cancellation, under a deadline of its
// own, for writes that must land after the client leaves.
func Detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), DetachedWriteTimeout)
}
