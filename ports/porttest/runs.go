package porttest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// Runs is what the run store's suites need of one adapter: its run store,
// the leases it reads, and a way to make time pass for a lease.
type Runs struct {
	Store  ports.RunStore
	Leases ports.Leases
	// Age makes processID's last heartbeat d older than it is, standing for
	// time passing without a heartbeat.
	Age func(t *testing.T, processID string, d time.Duration)
	// AgeRun makes a run's last write d older than it is.
	AgeRun func(t *testing.T, runID string, d time.Duration)
}

func newRun(t *testing.T, s ports.RunStore, id, process string) runs.Run {
	t.Helper()
	r, err := s.Create(t.Context(), runs.Run{ID: id, Model: "recorded", ProcessID: process,
		Thread: []runs.Message{{Role: runs.RoleUser, Content: "draw it"}}},
		runs.Make(runs.KindRun, runs.RunData{RunID: id, ResumeURL: runs.ResumeURL(id)}))
	if err != nil {
		t.Fatalf("create %s: %v", id, err)
	}
	return r
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// RunStoreContract runs the RunStore contract against the stores newRuns
// makes (fresh and empty per call).
func RunStoreContract(t *testing.T, newRuns func(t *testing.T) Runs) {
	t.Run("appends are numbered without gaps however many race", func(t *testing.T) {
		s := newRuns(t).Store
		newRun(t, s, "run_a", "")
		const writers, each = 20, 10
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					if _, err := s.Append(context.Background(), "run_a", runs.Make(runs.KindMessage, runs.MessageData{Text: fmt.Sprintf("%d/%d", w, i)})); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		evs, err := s.Events(t.Context(), "run_a", 0, 10_000)
		must(t, err)
		if len(evs) != 1+writers*each {
			t.Fatalf("%d events, want %d", len(evs), 1+writers*each)
		}
		seen := map[string]bool{}
		for i, e := range evs {
			if e.Seq != int64(i) {
				t.Fatalf("event %d has seq %d: seq must run 0, 1, 2 … without gaps", i, e.Seq)
			}
			seen[string(e.Data)] = true
		}
		if len(seen) != 1+writers*each {
			t.Fatalf("%d distinct events: every append is stored once", len(seen))
		}
		r, err := s.Get(t.Context(), "run_a")
		must(t, err)
		if r.NextSeq != int64(1+writers*each) {
			t.Fatalf("next seq %d", r.NextSeq)
		}
	})

	racingAppendCases(t, newRuns)

	t.Run("a run's life: save, end, resume, read back", func(t *testing.T) {
		s := newRuns(t).Store
		ctx := t.Context()
		r := newRun(t, s, "run_b", "proc_1")
		if r.Status != runs.Running || r.NextSeq != 1 || r.ProcessID != "proc_1" || r.CreatedAt.IsZero() {
			t.Fatalf("created: %+v", r)
		}
		if _, err := s.Get(ctx, "run_nope"); !errs.Is(err, errs.NotFound) {
			t.Fatalf("unknown run: %v", err)
		}
		thread := append(r.Thread, runs.Message{Role: runs.RoleAssistant, Content: "here"})
		must(t, s.SaveThread(ctx, "run_b", thread))
		must(t, s.SetExploration(ctx, "run_b", "exp_1"))
		flower := runs.Make(runs.KindFlower, map[string]string{"spec_sha256": "abc"})
		last, err := s.End(ctx, "run_b", runs.Done, flower, runs.Make(runs.KindDone, runs.DoneData{Model: "recorded"}))
		must(t, err)
		if last != 2 {
			t.Fatalf("end: last seq %d", last)
		}
		r, err = s.Get(ctx, "run_b")
		must(t, err)
		if r.Status != runs.Done || len(r.Thread) != 2 || r.Thread[1].Content != "here" || r.Exploration != "exp_1" {
			t.Fatalf("ended: %+v", r)
		}
		var f map[string]string
		if err := json.Unmarshal(r.Flower, &f); err != nil || f["spec_sha256"] != "abc" {
			t.Fatalf("the last flower is kept on the run: %s", r.Flower)
		}

		// A follow-up chat carries the numbering on.
		r, err = s.Resume(ctx, "run_b", "proc_2", append(thread, runs.Message{Role: runs.RoleUser, Content: "again"}),
			runs.Make(runs.KindRun, runs.RunData{RunID: "run_b"}))
		must(t, err)
		if r.Status != runs.Running || r.ProcessID != "proc_2" || r.NextSeq != 4 || len(r.Thread) != 3 {
			t.Fatalf("resumed: %+v", r)
		}
		if _, err := s.Resume(ctx, "run_b", "proc_2", thread); !errs.Is(err, errs.Conflict) {
			t.Fatalf("a running run can't be resumed: %v", err)
		}
		if _, err := s.Resume(ctx, "run_nope", "proc_2", thread); !errs.Is(err, errs.NotFound) {
			t.Fatalf("resume of an unknown run: %v", err)
		}
		evs, err := s.Events(ctx, "run_b", 2, 100)
		must(t, err)
		if len(evs) != 2 || evs[0].Kind != runs.KindDone || evs[1].Kind != runs.KindRun || evs[1].Seq != 3 {
			t.Fatalf("events from 2: %+v", evs)
		}
		evs, err = s.Events(ctx, "run_b", 0, 2)
		must(t, err)
		if len(evs) != 2 || evs[1].Seq != 1 {
			t.Fatalf("at most limit events: %+v", evs)
		}
		if evs, err := s.Events(ctx, "run_nope", 0, 10); err != nil || len(evs) != 0 {
			t.Fatalf("an unknown run has no events: %v %v", evs, err)
		}
	})

	t.Run("a run's name and settings are kept and read back", func(t *testing.T) {
		s := newRuns(t).Store
		ctx := t.Context()
		r, err := s.Create(ctx, runs.Run{ID: "run_n", Model: "recorded", Settings: runs.Settings{Model: "m/one", Effort: "low"}})
		must(t, err)
		if r.Title != "" || r.Settings != (runs.Settings{Model: "m/one", Effort: "low"}) {
			t.Fatalf("created: %+v", r)
		}
		must(t, s.SetTitle(ctx, "run_n", "Who holds the marketing DAO"))
		must(t, s.SetSettings(ctx, "run_n", runs.Settings{Model: "m/two"}))
		r, err = s.Get(ctx, "run_n")
		must(t, err)
		if r.Title != "Who holds the marketing DAO" || r.Settings != (runs.Settings{Model: "m/two"}) {
			t.Fatalf("read back: %+v", r)
		}
		must(t, s.SetSettings(ctx, "run_n", runs.Settings{}))
		if r, _ = s.Get(ctx, "run_n"); r.Settings != (runs.Settings{}) {
			t.Fatalf("settings cleared: %+v", r.Settings)
		}
	})

	t.Run("writes to an unknown run are not_found", func(t *testing.T) {
		s := newRuns(t).Store
		ctx := t.Context()
		if _, err := s.Append(ctx, "run_nope", runs.Make(runs.KindMessage, runs.MessageData{Text: "x"})); !errs.Is(err, errs.NotFound) {
			t.Fatalf("append: %v", err)
		}
		if err := s.SaveThread(ctx, "run_nope", nil); !errs.Is(err, errs.NotFound) {
			t.Fatalf("save thread: %v", err)
		}
		if err := s.SetExploration(ctx, "run_nope", "exp"); !errs.Is(err, errs.NotFound) {
			t.Fatalf("set exploration: %v", err)
		}
		if err := s.SetTitle(ctx, "run_nope", "a name"); !errs.Is(err, errs.NotFound) {
			t.Fatalf("set title: %v", err)
		}
		if err := s.SetSettings(ctx, "run_nope", runs.Settings{}); !errs.Is(err, errs.NotFound) {
			t.Fatalf("set settings: %v", err)
		}
	})

	t.Run("appending nothing tells the last seq and changes nothing", func(t *testing.T) {
		s := newRuns(t).Store
		newRun(t, s, "run_c", "")
		last, err := s.Append(t.Context(), "run_c")
		if err != nil || last != 0 {
			t.Fatalf("empty append: %d %v", last, err)
		}
		if _, err := s.Append(t.Context(), "run_c", runs.NewEvent{Kind: runs.KindHeartbeat, Data: json.RawMessage(`{}`)}); err == nil {
			t.Fatal("heartbeats are never stored")
		}
		if _, err := s.End(t.Context(), "run_c", runs.Running); err == nil {
			t.Fatal("running is not an ending status")
		}
	})

	t.Run("runs stuck past any chat's time are interrupted, whatever their process", func(t *testing.T) {
		h := newRuns(t)
		s := h.Store
		ctx := t.Context()
		must(t, h.Leases.Register(ctx, ports.Process{ID: "proc_live", Hostname: "h", PID: 1, BuildID: "dev"}))
		newRun(t, s, "run_stuck", "proc_live")
		newRun(t, s, "run_going", "proc_live")
		h.AgeRun(t, "run_stuck", 10*time.Minute)
		interrupted := runs.Make(runs.KindError, runs.ErrorData{Code: runs.CodeInterrupted, Message: "its end was lost"})
		if ids, err := s.InterruptOrphans(ctx, 30*time.Second, interrupted); err != nil || len(ids) != 0 {
			t.Fatalf("a live process's runs are no orphans: %v %v", ids, err)
		}
		ids, err := s.InterruptStuck(ctx, 6*time.Minute, interrupted)
		must(t, err)
		if len(ids) != 1 || ids[0] != "run_stuck" {
			t.Fatalf("interrupted %v, want run_stuck alone", ids)
		}
		for id, want := range map[string]runs.Status{"run_stuck": runs.Interrupted, "run_going": runs.Running} {
			r, err := s.Get(ctx, id)
			must(t, err)
			if r.Status != want {
				t.Fatalf("%s is %s, want %s", id, r.Status, want)
			}
		}
		evs, err := s.Events(ctx, "run_stuck", 0, 100)
		must(t, err)
		if last := evs[len(evs)-1]; last.Kind != runs.KindError || !last.Terminal() {
			t.Fatalf("interrupted is the stuck run's last event: %+v", last)
		}
		if again, err := s.InterruptStuck(ctx, 6*time.Minute, interrupted); err != nil || len(again) != 0 {
			t.Fatalf("a second sweep finds nothing: %v %v", again, err)
		}
	})

	t.Run("orphans of lapsed processes are interrupted; live ones are left alone", func(t *testing.T) {
		h := newRuns(t)
		s, leases := h.Store, h.Leases
		ctx := t.Context()
		must(t, leases.Register(ctx, ports.Process{ID: "proc_live", Hostname: "h", PID: 1, BuildID: "dev"}))
		must(t, leases.Register(ctx, ports.Process{ID: "proc_stale", Hostname: "h", PID: 2, BuildID: "dev"}))
		h.Age(t, "proc_stale", 31*time.Second)
		newRun(t, s, "run_live", "proc_live")
		newRun(t, s, "run_stale", "proc_stale")
		newRun(t, s, "run_gone", "proc_gone") // no lease at all
		newRun(t, s, "run_ended", "proc_gone")
		_, err := s.End(ctx, "run_ended", runs.Done, runs.Make(runs.KindDone, runs.DoneData{}))
		must(t, err)

		interrupted := runs.Make(runs.KindError, runs.ErrorData{Code: runs.CodeInterrupted, Message: "the server stopped"})
		ids, err := s.InterruptOrphans(ctx, 30*time.Second, interrupted)
		must(t, err)
		got := map[string]bool{}
		for _, id := range ids {
			got[id] = true
		}
		if len(ids) != 2 || !got["run_stale"] || !got["run_gone"] {
			t.Fatalf("interrupted %v, want run_stale and run_gone", ids)
		}
		for _, id := range ids {
			r, err := s.Get(ctx, id)
			must(t, err)
			if r.Status != runs.Interrupted {
				t.Fatalf("%s: %s", id, r.Status)
			}
			evs, err := s.Events(ctx, id, 0, 100)
			must(t, err)
			if last := evs[len(evs)-1]; last.Kind != runs.KindError || !last.Terminal() {
				t.Fatalf("%s: interrupted is the last event, no done follows: %+v", id, last)
			}
		}
		for id, want := range map[string]runs.Status{"run_live": runs.Running, "run_ended": runs.Done} {
			r, err := s.Get(ctx, id)
			must(t, err)
			if r.Status != want {
				t.Fatalf("%s is %s, want %s", id, r.Status, want)
			}
		}
		again, err := s.InterruptOrphans(ctx, 30*time.Second, interrupted)
		if err != nil || len(again) != 0 {
			t.Fatalf("a second recovery finds nothing: %v %v", again, err)
		}

		// The swept run's job, cut off but still going, adds nothing after
		// the end: neither an event nor a second end.
		before, err := s.Events(ctx, "run_stale", 0, 100)
		must(t, err)
		if _, err := s.Append(ctx, "run_stale", runs.Make(runs.KindMessage, runs.MessageData{Text: "late"})); !errs.Is(err, errs.Conflict) {
			t.Fatalf("an append after the end: %v", err)
		}
		if _, err := s.End(ctx, "run_stale", runs.Done, runs.Make(runs.KindDone, runs.DoneData{})); !errs.Is(err, errs.Conflict) {
			t.Fatalf("a second end: %v", err)
		}
		after, err := s.Events(ctx, "run_stale", 0, 100)
		must(t, err)
		if len(after) != len(before) {
			t.Fatalf("%d events after the end, %d before", len(after), len(before))
		}
		if r, _ := s.Get(ctx, "run_stale"); r.Status != runs.Interrupted {
			t.Fatalf("the swept run is %s", r.Status)
		}
	})
}

// LeasesContract runs the Leases contract.
func LeasesContract(t *testing.T, newRuns func(t *testing.T) Runs) {
	t.Run("a lease is alive until it lapses or is removed", func(t *testing.T) {
		h := newRuns(t)
		l := h.Leases
		ctx := t.Context()
		alive := func(id string) bool {
			t.Helper()
			ok, err := l.Alive(ctx, id, 30*time.Second)
			must(t, err)
			return ok
		}
		if alive("proc_a") {
			t.Fatal("a process never registered is not alive")
		}
		must(t, l.Register(ctx, ports.Process{ID: "proc_a", Hostname: "h", PID: 1, BuildID: "dev"}))
		if !alive("proc_a") {
			t.Fatal("a registered process is alive")
		}
		h.Age(t, "proc_a", 31*time.Second)
		if alive("proc_a") {
			t.Fatal("a lease past its stale time is not alive")
		}
		must(t, l.Heartbeat(ctx, "proc_a"))
		if !alive("proc_a") {
			t.Fatal("a heartbeat renews the lease")
		}
		must(t, l.Remove(ctx, "proc_a"))
		if alive("proc_a") {
			t.Fatal("a removed lease is not alive")
		}
		if err := l.Heartbeat(ctx, "proc_a"); !errs.Is(err, errs.NotFound) {
			t.Fatalf("a heartbeat of a removed lease says so: %v", err)
		}
		must(t, l.Remove(ctx, "proc_a")) // removing twice is fine
		must(t, l.Register(ctx, ports.Process{ID: "proc_a", Hostname: "h", PID: 1, BuildID: "dev"}))
		must(t, l.Register(ctx, ports.Process{ID: "proc_a", Hostname: "h", PID: 1, BuildID: "dev"}))
		if !alive("proc_a") {
			t.Fatal("registering again renews the lease")
		}
	})
}

// AttestationsContract runs the Attestations contract.
func AttestationsContract(t *testing.T, newStore func(t *testing.T) ports.Attestations) {
	t.Run("reports are kept byte for byte under their SHA-256", func(t *testing.T) {
		a := newStore(t)
		body := []byte("{\"signing_address\": \"0xabc\",\n  \"nvidia_payload\": \"…\" }")
		sum := sha256.Sum256(body)
		name, err := a.Put(t.Context(), body)
		must(t, err)
		if name != hex.EncodeToString(sum[:]) {
			t.Fatalf("name %s", name)
		}
		again, err := a.Put(t.Context(), body)
		if err != nil || again != name {
			t.Fatalf("storing twice is one: %s %v", again, err)
		}
		got, err := a.Get(t.Context(), name)
		if err != nil || string(got) != string(body) {
			t.Fatalf("got %q %v", got, err)
		}
		if _, err := a.Get(t.Context(), hex.EncodeToString(make([]byte, 32))); !errs.Is(err, errs.NotFound) {
			t.Fatalf("unknown report: %v", err)
		}
	})
}

// Buses is what the event bus suite needs of one adapter: a run store whose
// appends the buses carry, and two buses standing for two processes that
// share it.
type Buses struct {
	Store ports.RunStore
	A, B  ports.EventBus
}

// EventBusContract runs the EventBus contract.
func EventBusContract(t *testing.T, newBuses func(t *testing.T) Buses) {
	t.Run("appends reach watchers of the run in every process", func(t *testing.T) {
		h := newBuses(t)
		newRun(t, h.Store, "run_c", "proc_a")
		there, stopThere := h.B.Watch("run_c")
		defer stopThere()
		here, stopHere := h.A.Watch("run_c")
		defer stopHere()
		other, stopOther := h.B.Watch("run_other")
		defer stopOther()
		var last int64
		for i := range 20 {
			var err error
			last, err = h.Store.Append(t.Context(), "run_c", runs.Make(runs.KindMessage, runs.MessageData{Text: fmt.Sprint(i)}))
			must(t, err)
		}
		waitForSeq(t, there, last)
		waitForSeq(t, here, last)
		select {
		case v := <-other:
			if v != -1 {
				t.Fatalf("a watcher of another run heard %d", v)
			}
		default:
		}
	})

	t.Run("a stop asked anywhere reaches every process's handler", func(t *testing.T) {
		h := newBuses(t)
		stops := make(chan string, 2)
		h.A.OnStop(func(id string) { stops <- id })
		must(t, h.B.RequestStop(t.Context(), "run_d"))
		select {
		case id := <-stops:
			if id != "run_d" {
				t.Fatalf("stop of %s", id)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the stop never reached the other process")
		}
	})

	t.Run("a watcher stopped hears no more", func(t *testing.T) {
		h := newBuses(t)
		newRun(t, h.Store, "run_e", "proc_a")
		ch, stop := h.B.Watch("run_e")
		stop()
		stop() // twice is fine
		_, err := h.Store.Append(t.Context(), "run_e", runs.Make(runs.KindMessage, runs.MessageData{Text: "x"}))
		must(t, err)
		select {
		case v := <-ch:
			if v != -1 {
				t.Fatalf("a stopped watcher heard %d", v)
			}
		default:
		}
	})
}

// waitForSeq reads a watcher until it says seq (a slow watcher sees only the
// newest; -1 means look again), for at most 10 s.
func waitForSeq(t *testing.T, ch <-chan int64, seq int64) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case v := <-ch:
			if v == seq {
				return
			}
		case <-deadline:
			t.Fatalf("seq %d never arrived", seq)
		}
	}
}
