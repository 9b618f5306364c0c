package agentapp

import (
	"sync"

	"github.com/petal-near/petal/domain/runs"
)

// FrameViewer is a Viewer whose wire form of an event is the same for every
// viewer of the run (an SSE frame). A run's viewers in this process then
// share one encoding of each event, made by whichever viewer needs it first,
// instead of each encoding it again: a thousand viewers cost one encode and a
// thousand writes per event.
type FrameViewer interface {
	Viewer
	// Encode is the event's wire form; it must not depend on the viewer.
	Encode(runs.Event) []byte
	// Frame writes e, already encoded as wire.
	Frame(e runs.Event, wire []byte) error
}

// frame is one event's shared wire form, made once.
type frame struct {
	once sync.Once
	b    []byte
}

// deliver sends e to v, through the tail's shared frame when v can take one
// and the tail holds e.
func deliver(tail *runTail, v Viewer, e runs.Event) error {
	fv, ok := v.(FrameViewer)
	if !ok {
		return v.Event(e)
	}
	f := tail.frameOf(e.Seq)
	if f == nil {
		return fv.Frame(e, fv.Encode(e))
	}
	f.once.Do(func() { f.b = fv.Encode(e) })
	return fv.Frame(e, f.b)
}

// frameOf is the shared frame of event seq, or nil when the tail doesn't hold
// it (a replay from far back).
func (t *runTail) frameOf(seq int64) *frame {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i := seq - (t.next - int64(len(t.frames)))
	if t.next < 0 || i < 0 || i >= int64(len(t.frames)) {
		return nil
	}
	return t.frames[i]
}
