package agentapp_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/agentapp"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// frameViewer encodes as an SSE stream would and counts its encodes, so a
// test can tell shared frames from each viewer encoding for itself.
type frameViewer struct {
	encodes *atomic.Int64
	w       io.Writer
	mu      sync.Mutex
	seqs    []int64
	wire    [][]byte
	caught  *sync.WaitGroup // Done at the live marker
}

func (v *frameViewer) Encode(e runs.Event) []byte {
	v.encodes.Add(1)
	b := make([]byte, 0, len(e.Data)+48)
	b = append(append(append(b, "id: "...), strconv.FormatInt(e.Seq, 10)...), '\n')
	b = append(append(append(b, "event: "...), e.Kind...), '\n')
	return append(append(append(b, "data: "...), e.Data...), "\n\n"...)
}

func (v *frameViewer) Frame(e runs.Event, wire []byte) error {
	v.mu.Lock()
	v.seqs = append(v.seqs, e.Seq)
	if v.w == nil {
		v.wire = append(v.wire, wire)
	}
	v.mu.Unlock()
	if v.w != nil {
		_, err := v.w.Write(wire)
		return err
	}
	return nil
}

func (v *frameViewer) Event(e runs.Event) error { return v.Frame(e, v.Encode(e)) }
func (v *frameViewer) CaughtUp() error          { v.caught.Done(); return nil }
func (v *frameViewer) Heartbeat() error         { return nil }

// plainViewer is the same viewer without the FrameViewer methods: it encodes
// every event itself.
type plainViewer struct{ f *frameViewer }

func (p plainViewer) Event(e runs.Event) error { return p.f.Event(e) }
func (p plainViewer) CaughtUp() error          { return p.f.CaughtUp() }
func (p plainViewer) Heartbeat() error         { return nil }

func followService(tb testing.TB) (*agentapp.AgentService, ports.RunStore) {
	tb.Helper()
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(tb, err)
	hub := memory.NewEventHub()
	leases := memory.NewLeases(memory.SystemClock{})
	store := memory.NewRunRepository(memory.SystemClock{}, leases, hub)
	process, err := jobsapp.NewProcessID(rand.Reader)
	require.NoError(tb, err)
	limiter := memory.NewRateLimiter(memory.SystemClock{})
	agent := agentapp.NewAgentService(agentapp.AgentDeps{Config: cfg, Runs: store, Bus: hub.Bus(), Leases: leases,
		Registry: toolkit.NewRegistry(cfg, limiter, nil), Limiter: limiter, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Process: process, Random: rand.Reader})
	return agent, store
}

// followAll has viewers follow run id: once every one has caught up, events
// are appended, and it waits until every viewer has the run's end. caught is
// Done by each viewer at its live marker.
func followAll(tb testing.TB, agent *agentapp.AgentService, store ports.RunStore, id string, events int, viewers []agentapp.Viewer, caught *sync.WaitGroup) {
	tb.Helper()
	ctx := context.Background()
	_, err := store.Create(ctx, runs.Run{ID: id, Model: "recorded"}, runs.Make(runs.KindRun, runs.RunData{RunID: id}))
	require.NoError(tb, err)
	var wg sync.WaitGroup
	for _, v := range viewers {
		wg.Go(func() {
			if err := agent.Follow(ctx, id, 0, v); err != nil {
				tb.Error(err)
			}
		})
	}
	caught.Wait() // live: from here every event reaches them through the tail
	for i := range events {
		_, err := store.Append(ctx, id, runs.Make(runs.KindProgress, runs.ProgressData{Stage: runs.StageFetching, Message: fmt.Sprintf("page %d", i)}))
		require.NoError(tb, err)
	}
	_, err = store.End(ctx, id, runs.Done, runs.Make(runs.KindDone, runs.DoneData{Model: "recorded"}))
	require.NoError(tb, err)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		tb.Fatal("viewers did not all see the run's end")
	}
}

// Viewers that can share frames get every event once, in order, byte for byte
// what a viewer encoding for itself gets, with far fewer encodes.
func TestViewersShareOneEncodingOfEachEvent(t *testing.T) {
	agent, store := followService(t)
	var shared, own atomic.Int64
	var viewers []agentapp.Viewer
	var sharers, loners []*frameViewer
	var caught sync.WaitGroup
	for range 20 {
		caught.Add(2)
		f := &frameViewer{encodes: &shared, caught: &caught}
		sharers = append(sharers, f)
		viewers = append(viewers, f)
		p := &frameViewer{encodes: &own, caught: &caught}
		loners = append(loners, p)
		viewers = append(viewers, plainViewer{p})
	}
	const events = 50
	followAll(t, agent, store, "run_frames", events, viewers, &caught)
	want := loners[0]
	require.Len(t, want.seqs, events+2)
	for i, s := range want.seqs {
		require.Equal(t, int64(i), s)
	}
	for _, v := range append(sharers, loners...) {
		require.Equal(t, want.seqs, v.seqs)
		require.Equal(t, want.wire, v.wire)
	}
	require.Equal(t, int64(20*(events+2)), own.Load())
	// The replayed first event may be encoded by each sharer (read from the
	// log before the tail held it); every live event once.
	require.LessOrEqual(t, shared.Load(), int64(20+events+1), "shared frames: %d encodes", shared.Load())
}

// The cost of fanning a run out to 1,000 viewers in one process, with each
// event's frame shared or encoded per viewer (run with -benchtime 3x):
//
//	go test ./app -run '^$' -bench FollowFanout -benchtime 3x
func BenchmarkFollowFanout(b *testing.B) {
	for _, mode := range []string{"shared-frames", "per-viewer"} {
		b.Run(mode, func(b *testing.B) {
			const n, events = 1000, 200
			b.ReportAllocs()
			for i := range b.N {
				agent, store := followService(b)
				var encodes atomic.Int64
				var caught sync.WaitGroup
				caught.Add(n)
				viewers := make([]agentapp.Viewer, n)
				for j := range viewers {
					f := &frameViewer{encodes: &encodes, w: io.Discard, caught: &caught}
					viewers[j] = f
					if mode == "per-viewer" {
						viewers[j] = plainViewer{f}
					}
				}
				followAll(b, agent, store, fmt.Sprintf("run_fan_%d", i), events, viewers, &caught)
				b.ReportMetric(float64(encodes.Load()), "encodes/op")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n*(events+2)), "ns/delivered")
		})
	}
}
