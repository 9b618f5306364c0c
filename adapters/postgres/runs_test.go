package postgres_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

func newRun(t *testing.T, s *postgres.RunRepository, id, process string) runs.Run {
	t.Helper()
	r, err := s.Create(t.Context(), runs.Run{ID: id, Model: "recorded", ProcessID: process,
		Thread: []runs.Message{{Role: runs.RoleUser, Content: "draw it"}}},
		runs.Make(runs.KindRun, runs.RunData{RunID: id, ResumeURL: runs.ResumeURL(id)}))
	require.NoError(t, err)
	return r
}

func TestAppendNumbersWithoutGapsUnderConcurrency(t *testing.T) {
	db := pgtest.New(t)
	s := postgres.NewRunRepository(db.DB)
	newRun(t, s, "run_a", "")
	const writers, each = 32, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				_, err := s.Append(context.Background(), "run_a", runs.Make(runs.KindMessage, runs.MessageData{Text: fmt.Sprintf("%d/%d", w, i)}))
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
	evs, err := s.Events(t.Context(), "run_a", 0, 10_000)
	require.NoError(t, err)
	require.Len(t, evs, 1+writers*each)
	seen := map[string]bool{}
	for i, e := range evs {
		require.Equal(t, int64(i), e.Seq, "seq must run 0, 1, 2 … without gaps")
		seen[string(e.Data)] = true
	}
	assert.Len(t, seen, 1+writers*each, "every append is stored once")
	r, err := s.Get(t.Context(), "run_a")
	require.NoError(t, err)
	assert.Equal(t, int64(1+writers*each), r.NextSeq)
}

func TestRunLifecycle(t *testing.T) {
	db := pgtest.New(t)
	s := postgres.NewRunRepository(db.DB)
	ctx := t.Context()
	r := newRun(t, s, "run_b", "proc_1")
	assert.Equal(t, runs.Running, r.Status)
	assert.Equal(t, int64(1), r.NextSeq)

	_, err := s.Get(ctx, "run_nope")
	assert.True(t, errs.Is(err, errs.NotFound))

	thread := append(r.Thread, runs.Message{Role: runs.RoleAssistant, Content: "here"})
	require.NoError(t, s.SaveThread(ctx, "run_b", thread))
	flower := runs.Make(runs.KindFlower, map[string]string{"spec_sha256": "abc"})
	last, err := s.End(ctx, "run_b", runs.Done, flower, runs.Make(runs.KindDone, runs.DoneData{Model: "recorded"}))
	require.NoError(t, err)
	assert.Equal(t, int64(2), last)
	r, err = s.Get(ctx, "run_b")
	require.NoError(t, err)
	assert.Equal(t, runs.Done, r.Status)
	assert.Equal(t, thread, r.Thread)
	assert.JSONEq(t, `{"spec_sha256":"abc"}`, string(r.Flower))

	// A follow-up chat carries the numbering on.
	r, err = s.Resume(ctx, "run_b", "proc_2", append(thread, runs.Message{Role: runs.RoleUser, Content: "again"}),
		runs.Make(runs.KindRun, runs.RunData{RunID: "run_b"}))
	require.NoError(t, err)
	assert.Equal(t, runs.Running, r.Status)
	assert.Equal(t, "proc_2", r.ProcessID)
	assert.Equal(t, int64(4), r.NextSeq)
	_, err = s.Resume(ctx, "run_b", "proc_2", thread)
	assert.True(t, errs.Is(err, errs.Conflict), "a running run can't be resumed: %v", err)

	evs, err := s.Events(ctx, "run_b", 2, 100)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	assert.Equal(t, runs.KindDone, evs[0].Kind)
	assert.Equal(t, runs.KindRun, evs[1].Kind)
}

func TestInterruptOrphansLeavesLiveProcessesAlone(t *testing.T) {
	db := pgtest.New(t)
	s := postgres.NewRunRepository(db.DB)
	leases := postgres.NewLeases(db.DB)
	ctx := t.Context()
	require.NoError(t, leases.Register(ctx, ports.Process{ID: "proc_live", Hostname: "h", PID: 1, BuildID: "dev"}))
	require.NoError(t, leases.Register(ctx, ports.Process{ID: "proc_stale", Hostname: "h", PID: 2, BuildID: "dev"}))
	_, err := db.Pool.Exec(ctx, `UPDATE processes SET heartbeat_at = now() - interval '31 seconds' WHERE id = 'proc_stale'`)
	require.NoError(t, err)
	newRun(t, s, "run_live", "proc_live")
	newRun(t, s, "run_stale", "proc_stale")
	newRun(t, s, "run_gone", "proc_gone") // no lease row at all
	newRun(t, s, "run_ended", "proc_gone")
	_, err = s.End(ctx, "run_ended", runs.Done, runs.Make(runs.KindDone, runs.DoneData{}))
	require.NoError(t, err)

	alive, err := leases.Alive(ctx, "proc_live", 30*time.Second)
	require.NoError(t, err)
	assert.True(t, alive)
	alive, err = leases.Alive(ctx, "proc_stale", 30*time.Second)
	require.NoError(t, err)
	assert.False(t, alive)

	interrupted := runs.Make(runs.KindError, runs.ErrorData{Code: runs.CodeInterrupted, Message: "the server restarted"})
	ids, err := s.InterruptOrphans(ctx, 30*time.Second, interrupted)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"run_stale", "run_gone"}, ids)
	for _, id := range []string{"run_stale", "run_gone"} {
		r, err := s.Get(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, runs.Interrupted, r.Status)
		evs, err := s.Events(ctx, id, 0, 100)
		require.NoError(t, err)
		lastEv := evs[len(evs)-1]
		assert.Equal(t, runs.KindError, lastEv.Kind)
		assert.True(t, lastEv.Terminal(), "interrupted is the last event, no done follows")
	}
	r, err := s.Get(ctx, "run_live")
	require.NoError(t, err)
	assert.Equal(t, runs.Running, r.Status, "a live process's run is left alone")
	r, err = s.Get(ctx, "run_ended")
	require.NoError(t, err)
	assert.Equal(t, runs.Done, r.Status)

	again, err := s.InterruptOrphans(ctx, 30*time.Second, interrupted)
	require.NoError(t, err)
	assert.Empty(t, again, "a second recovery finds nothing")

	// The swept run's job, cut off but still going, adds nothing after the
	// end: neither an event nor a second end.
	before, err := s.Events(ctx, "run_stale", 0, 100)
	require.NoError(t, err)
	_, err = s.Append(ctx, "run_stale", runs.Make(runs.KindMessage, runs.MessageData{Text: "late"}))
	assert.True(t, errs.Is(err, errs.Conflict), "%v", err)
	_, err = s.End(ctx, "run_stale", runs.Done, runs.Make(runs.KindDone, runs.DoneData{}))
	assert.True(t, errs.Is(err, errs.Conflict), "%v", err)
	after, err := s.Events(ctx, "run_stale", 0, 100)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	r, err = s.Get(ctx, "run_stale")
	require.NoError(t, err)
	assert.Equal(t, runs.Interrupted, r.Status)
	_, err = s.Append(ctx, "run_nope", runs.Make(runs.KindMessage, runs.MessageData{Text: "?"}))
	assert.True(t, errs.Is(err, errs.NotFound), "%v", err)
}

func TestAttestationsByteForByte(t *testing.T) {
	db := pgtest.New(t)
	a := postgres.NewAttestations(db.DB)
	body := []byte("{\"signing_address\": \"0xabc\",\n  \"nvidia_payload\": \"…\" }")
	sum := sha256.Sum256(body)
	name, err := a.Put(t.Context(), body)
	require.NoError(t, err)
	assert.Equal(t, hex.EncodeToString(sum[:]), name)
	again, err := a.Put(t.Context(), body)
	require.NoError(t, err)
	assert.Equal(t, name, again)
	got, err := a.Get(t.Context(), name)
	require.NoError(t, err)
	assert.Equal(t, body, got)
	_, err = a.Get(t.Context(), hex.EncodeToString(make([]byte, 32)))
	assert.True(t, errs.Is(err, errs.NotFound))
}

func TestEventBusCarriesAppendsAndStopsAcrossConnections(t *testing.T) {
	db := pgtest.New(t)
	s := postgres.NewRunRepository(db.DB)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Two buses on two pools stand for two processes.
	busA := postgres.NewEventBus(db.DB, log)
	dbB, err := postgres.Connect(t.Context(), db.URL)
	require.NoError(t, err)
	t.Cleanup(dbB.Close)
	busB := postgres.NewEventBus(dbB, log)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = busA.Run(ctx) }()
	go func() { _ = busB.Run(ctx) }()
	<-busA.Ready()
	<-busB.Ready()

	newRun(t, s, "run_c", "proc_a")
	updates, stopWatch := busB.Watch("run_c")
	defer stopWatch()
	last, err := s.Append(t.Context(), "run_c", runs.Make(runs.KindMessage, runs.MessageData{Text: "hi"}))
	require.NoError(t, err)
	got := waitFor(t, updates, func(v int64) bool { return v == last })
	assert.Equal(t, last, got)

	// Appends through a publishing store: batched NOTIFYs still reach the
	// other process, and this process's watchers hear at once.
	local, stopLocal := busA.Watch("run_c")
	defer stopLocal()
	pub := postgres.NewRunRepository(db.DB).PublishingThrough(busA)
	for i := range 20 {
		last, err = pub.Append(t.Context(), "run_c", runs.Make(runs.KindMessage, runs.MessageData{Text: fmt.Sprint(i)}))
		require.NoError(t, err)
	}
	assert.Equal(t, last, waitFor(t, updates, func(v int64) bool { return v == last }))
	assert.Equal(t, last, waitFor(t, local, func(v int64) bool { return v == last }))

	stops := make(chan string, 1)
	busA.OnStop(func(id string) { stops <- id })
	require.NoError(t, busB.RequestStop(t.Context(), "run_c"))
	select {
	case id := <-stops:
		assert.Equal(t, "run_c", id)
	case <-time.After(10 * time.Second):
		t.Fatal("the stop never reached the other bus")
	}
}

func waitFor(t *testing.T, ch <-chan int64, ok func(int64) bool) int64 {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case v := <-ch:
			if ok(v) {
				return v
			}
		case <-deadline:
			t.Fatal("no notification arrived")
		}
	}
}

// A bus whose listening connection is cut reconnects, tells its watchers to
// look again (notifications sent meanwhile are lost), and carries the next
// append as before.
func TestEventBusReconnectsAndWakesItsWatchers(t *testing.T) {
	db := pgtest.New(t)
	s := postgres.NewRunRepository(db.DB)
	bus := postgres.NewEventBus(db.DB, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = bus.Run(ctx) }()
	<-bus.Ready()
	newRun(t, s, "run_r", "proc_a")
	updates, stop := bus.Watch("run_r")
	defer stop()

	var cut int
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE datname = current_database() AND query = 'LISTEN petal_runs'`).Scan(&cut))
	require.Equal(t, 1, cut, "one listening connection")
	assert.Equal(t, int64(-1), waitFor(t, updates, func(v int64) bool { return v == -1 }), "told to look again")

	// Appended from another store, so only the NOTIFY can say so.
	last, err := postgres.NewRunRepository(db.DB).Append(t.Context(), "run_r", runs.Make(runs.KindMessage, runs.MessageData{Text: "after"}))
	require.NoError(t, err)
	assert.Equal(t, last, waitFor(t, updates, func(v int64) bool { return v == last }))
}
