package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/domain/runs"
)

// These tests run real `petal serve` processes on one database with the
// production lease timing (heartbeat every 5 s, lapsed after 30 s, swept
// every 5 s), so each takes about 40 s; they run in parallel.

// heldModel is a fake NEAR AI whose completions never answer on their own:
// a chat's model call stays in flight, with its hold on the ledger.
func heldModel(t *testing.T) (*nearaitest.Server, map[string]string) {
	fake := nearaitest.New(t)
	fake.Hold = make(chan struct{})
	fake.Holding = make(chan struct{}, 8)
	return fake, modelEnv(fake)
}

// chatInFlight starts a chat on p and waits until its model call has reached
// the fake model; it returns the run and the session cookie that owns it.
func chatInFlight(t *testing.T, p *testPetal, fake *nearaitest.Server) (id, cookie string) {
	t.Helper()
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	cookie = sessionCookie(t, res)
	var started map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	select {
	case <-fake.Holding:
	case <-time.After(60 * time.Second):
		t.Fatal("the model call never arrived")
	}
	require.Positive(t, heldOnLedger(t, p), "the call in flight holds its worst case")
	return started["run_id"], cookie
}

// untilEnd reads a viewer's stream until the server ends it and returns the
// stored events it saw (heartbeats and the live marker left out). It gives
// up after a bound far past the 45 s goal, so a broken sweep fails instead of
// hanging; how long it took is the caller's to log, never to assert.
func untilEnd(t *testing.T, s *sseStream) []sseEvent {
	t.Helper()
	bound := time.After(3 * time.Minute)
	var out []sseEvent
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return out
			}
			if ev.Name != "heartbeat" && ev.Name != "live" {
				out = append(out, ev)
			}
		case <-bound:
			t.Fatalf("the viewer was never told the run ended; it saw %v", out)
		}
	}
}

// endsInterrupted checks a viewer's events end with the interrupted error and
// no done, and returns the error's message.
func endsInterrupted(t *testing.T, evs []sseEvent) string {
	t.Helper()
	require.NotEmpty(t, evs)
	last := evs[len(evs)-1]
	require.Equal(t, "error", last.Name, "the last event is the error, no done follows it")
	assert.Equal(t, "interrupted", last.json(t)["code"])
	for _, e := range evs {
		assert.NotEqual(t, "done", e.Name)
	}
	msg, _ := last.json(t)["message"].(string)
	return msg
}

func watch(t *testing.T, p *testPetal, id, cookie string) *sseStream {
	return p.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+id, "", "Cookie", cookie)
}

func TestAKilledReplicasRunEndsForViewersOnTheOthers(t *testing.T) {
	t.Parallel()
	fake, env := heldModel(t)
	db := pgtest.New(t)
	a := startProcess(t, db, env)
	b := startProcess(t, db, env)
	c := startProcess(t, db, env)
	id, cookie := chatInFlight(t, a.testPetal, fake)
	onB, onC := watch(t, b.testPetal, id, cookie), watch(t, c.testPetal, id, cookie)

	killed := time.Now()
	a.kill(t) // and never restarted
	for name, view := range map[string]*sseStream{"B": onB, "C": onC} {
		msg := endsInterrupted(t, untilEnd(t, view))
		t.Logf("the viewer on %s was told %.1f s after the kill: %s", name, time.Since(killed).Seconds(), msg)
	}
	run, err := postgres.NewRunRepository(db.DB).Get(t.Context(), id)
	require.NoError(t, err)
	assert.Equal(t, runs.Interrupted, run.Status)
	// The sweep gives the dead call's hold back right after ending its run.
	require.Eventually(t, func() bool { return heldOnLedger(t, b.testPetal) == 0 }, time.Minute, 100*time.Millisecond,
		"the dead process's hold goes back")
	var swept int
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM credit_holds WHERE run_id = $1 AND swept_at IS NOT NULL`, id).Scan(&swept))
	assert.Equal(t, 1, swept, "released by the sweep, not by its own process")

	// A late viewer anywhere reads the same end.
	endsInterrupted(t, untilEnd(t, watch(t, c.testPetal, id, cookie)))
}

func TestAReplicaRestartedAtOnceStillEndsTheDeadOnesRun(t *testing.T) {
	t.Parallel()
	fake, env := heldModel(t)
	db := pgtest.New(t)
	a := startProcess(t, db, env)
	b := startProcess(t, db, env)
	id, cookie := chatInFlight(t, a.testPetal, fake)
	onB := watch(t, b.testPetal, id, cookie)

	killed := time.Now()
	a.kill(t)
	// As an orchestrator does: a new process at once, whose start finds the
	// dead one's lease still current and leaves its run alone.
	again := startProcess(t, db, env)
	onAgain := watch(t, again.testPetal, id, cookie)
	for name, view := range map[string]*sseStream{"B": onB, "the restarted A": onAgain} {
		endsInterrupted(t, untilEnd(t, view))
		t.Logf("the viewer on %s was told %.1f s after the kill", name, time.Since(killed).Seconds())
	}
	require.Eventually(t, func() bool { return heldOnLedger(t, b.testPetal) == 0 }, time.Minute, 100*time.Millisecond,
		"the dead process's hold goes back")
	// The restarted process takes chats as usual.
	res, body := again.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	assert.Equal(t, http.StatusAccepted, res.StatusCode, body)
}

// A replica whose heartbeats stop landing (here its lease row is locked, so
// every heartbeat times out, while the rest of the database answers) ends its
// own run before its lease lapses and a peer's sweep could, refuses new chats
// while fenced, and takes them again once its heartbeat lands.
func TestALapsedLeaseFencesItsOwnJobs(t *testing.T) {
	t.Parallel()
	fake, env := heldModel(t)
	db := pgtest.New(t)
	a := startProcess(t, db, env)
	b := startProcess(t, db, env)
	id, cookie := chatInFlight(t, a.testPetal, fake)
	onB := watch(t, b.testPetal, id, cookie)
	run, err := postgres.NewRunRepository(db.DB).Get(t.Context(), id)
	require.NoError(t, err)

	tx, err := db.Pool.BeginTx(context.Background(), pgx.TxOptions{})
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(context.Background()) }()
	var beat time.Time
	require.NoError(t, tx.QueryRow(t.Context(), `SELECT heartbeat_at FROM processes WHERE id = $1 FOR UPDATE`, run.ProcessID).Scan(&beat))
	locked := time.Now()

	msg := endsInterrupted(t, untilEnd(t, onB))
	t.Logf("A fenced its run %.1f s after its heartbeats stopped landing: %s", time.Since(locked).Seconds(), msg)
	assert.Contains(t, msg, "lost its lease", "A ended it itself, before any sweep")
	var endedAt time.Time
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT max(at) FROM run_events WHERE run_id = $1`, id).Scan(&endedAt))
	assert.Less(t, endedAt.Sub(beat), 30*time.Second, "ended while A's lease was still current in the database")
	assert.Zero(t, heldOnLedger(t, b.testPetal), "the cut call's hold went back")

	res, body := a.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
	assert.Contains(t, body, "lost its lease")

	require.NoError(t, tx.Rollback(context.Background()))
	require.Eventually(t, func() bool {
		res, _ := a.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
		return res.StatusCode == http.StatusAccepted
	}, time.Minute, 500*time.Millisecond, "A takes chats again once its heartbeat lands")
}
