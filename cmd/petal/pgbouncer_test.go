package main

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

// Two replicas, as OS processes, with DATABASE_URL on Debian's pgbouncer in
// transaction mode (three server connections for both) and
// DATABASE_DIRECT_URL on PostgreSQL: a run started on A is followed by a
// viewer on B as it happens, from B's LISTEN on the direct connection. Were
// B's LISTEN deaf, B would see A's events only at its safety poll (5 s);
// each event is measured from A's own viewer to B's.
func TestTwoReplicasThroughPgBouncerSeeEachOthersEventsAtListenSpeed(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	bouncer := pgtest.StartPgBouncer(t, "transaction", 3)
	env := map[string]string{
		"DATABASE_URL":           bouncer.URL(t, db.URL),
		"DATABASE_DIRECT_URL":    db.URL,
		"PETAL_DB_POOL_SIZE":     "6",
		"PETAL_RECORDED_PACE_MS": "700",
	}
	before := bouncer.Transactions(t, db.Name)
	a := startProcess(t, db, env)
	b := startProcess(t, db, env)
	id := startRun(t, a.testPetal)
	viewers := map[string]*sseStream{
		"A": a.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+id, ""),
		"B": b.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+id, ""),
	}
	type arrival struct {
		at   time.Time
		name string
	}
	var mu sync.Mutex
	seen := map[string]map[string]arrival{"A": {}, "B": {}} // by event id
	first := map[string]time.Time{}
	var order []string // A's event ids, in order
	var wg sync.WaitGroup
	for who, view := range viewers {
		wg.Go(func() {
			timeout := time.After(90 * time.Second)
			for {
				select {
				case ev, ok := <-view.events:
					if !ok {
						return
					}
					now := time.Now()
					mu.Lock()
					if first[who].IsZero() {
						first[who] = now
					}
					if ev.ID != "" {
						seen[who][ev.ID] = arrival{now, ev.Name}
						if who == "A" {
							order = append(order, ev.ID)
						}
					}
					mu.Unlock()
				case <-timeout:
					return
				}
			}
		})
	}
	wg.Wait()

	require.NotEmpty(t, order)
	assert.Equal(t, "done", seen["A"][order[len(order)-1]].name, "A's viewer saw the run end")
	var lags []time.Duration
	for _, ev := range order {
		atA := seen["A"][ev]
		atB, ok := seen["B"][ev]
		if !assert.True(t, ok, "B's viewer missed %s (%s)", ev, atA.name) {
			continue
		}
		// Only what both viewers saw live, after each read the run's start.
		if atA.at.After(first["A"]) && atA.at.After(first["B"]) && atB.at.After(first["B"]) {
			lags = append(lags, atB.at.Sub(atA.at))
		}
	}
	require.GreaterOrEqual(t, len(lags), 3, "too few events followed live to compare")
	slices.Sort(lags)
	median, worst := lags[len(lags)/2], lags[len(lags)-1]
	t.Logf("B behind A through pgbouncer: %d live events, median %s, worst %s", len(lags), median, worst)
	// Poll speed would put the median near half the 5 s safety poll.
	assert.Less(t, median, 500*time.Millisecond, "B follows A's run at poll speed, not LISTEN speed")
	assert.Eventually(t, func() bool { return bouncer.Transactions(t, db.Name)-before > 50 }, 10*time.Second, 100*time.Millisecond,
		"the replicas' statements went through pgbouncer")
}
