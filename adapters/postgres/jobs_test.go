package postgres_test

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/ports"
)

func quietLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Three replicas' schedulers on one database, polling a job due every few
// milliseconds: never two runs at once, and they all get to run it.
func TestScheduledJobRunsOnOneReplicaAtATime(t *testing.T) {
	db := pgtest.New(t)
	leases := postgres.NewJobLeases(db.DB)
	var inFlight, most, runs atomic.Int64
	job := jobsapp.Job{Name: "busy", Every: 10 * time.Millisecond, Deadline: 5 * time.Second,
		Run: func(ctx context.Context) (int64, error) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			runs.Add(1)
			time.Sleep(20 * time.Millisecond)
			return 1, nil
		}}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	scheds := make([]*jobsapp.Scheduler, 3)
	for i := range scheds {
		scheds[i] = jobsapp.NewScheduler(leases, processID(t), quietLog())
		scheds[i].Add(job)
		wg.Go(func() {
			// Each replica hammers the lease, as many replicas' polls would.
			for ctx.Err() == nil {
				_, err := scheds[i].RunDue(ctx, "busy")
				if err != nil && ctx.Err() == nil {
					t.Error(err)
				}
			}
		})
	}
	require.Eventually(t, func() bool { return runs.Load() >= 20 }, time.Minute, 10*time.Millisecond)
	cancel()
	wg.Wait()
	assert.Equal(t, int64(1), most.Load(), "never two runs of one job at once")
	var sum int64
	for _, s := range scheds {
		sum += s.Stats()["busy"].Runs
	}
	assert.Equal(t, runs.Load(), sum, "every run was counted by the replica that ran it")
	state, err := leases.Jobs(t.Context())
	require.NoError(t, err)
	require.Len(t, state, 1)
	assert.Equal(t, sum, state[0].Runs)
	assert.Empty(t, state[0].Holder, "nobody holds it once the runs are done")
}

// The schedule lives in the database: three replicas with an hourly job run it
// once between them, not once each.
func TestScheduledJobScheduleIsSharedByReplicas(t *testing.T) {
	db := pgtest.New(t)
	leases := postgres.NewJobLeases(db.DB)
	var runs atomic.Int64
	for range 3 {
		s := jobsapp.NewScheduler(leases, processID(t), quietLog())
		s.Add(jobsapp.Job{Name: "hourly", Every: time.Hour, Deadline: time.Second,
			Run: func(context.Context) (int64, error) { runs.Add(1); return 0, nil }})
		for range 2 {
			_, err := s.RunDue(t.Context(), "hourly")
			require.NoError(t, err)
		}
	}
	assert.Equal(t, int64(1), runs.Load())
	state, err := leases.Jobs(t.Context())
	require.NoError(t, err)
	require.Len(t, state, 1)
	assert.WithinDuration(t, state[0].FinishedAt.Add(time.Hour), state[0].NextAt, time.Second)
}

// A replica that claimed a job and died holds it only until its lease runs
// out; then a peer runs it, and the dead one's late finish changes nothing.
func TestScheduledJobMovesOnWhenItsReplicaDies(t *testing.T) {
	db := pgtest.New(t)
	leases := postgres.NewJobLeases(db.DB)
	claimed, err := leases.Claim(t.Context(), "sweep", "proc_dead", time.Second)
	require.NoError(t, err)
	require.True(t, claimed)

	var runs atomic.Int64
	peer := jobsapp.NewScheduler(leases, "proc_peer", quietLog())
	peer.Add(jobsapp.Job{Name: "sweep", Every: time.Minute, Deadline: time.Second,
		Run: func(context.Context) (int64, error) { runs.Add(1); return 3, nil }})
	ran, err := peer.RunDue(t.Context(), "sweep")
	require.NoError(t, err)
	assert.False(t, ran, "the lease is still current")

	require.Eventually(t, func() bool {
		ran, err := peer.RunDue(t.Context(), "sweep")
		require.NoError(t, err)
		return ran
	}, 30*time.Second, 50*time.Millisecond)
	assert.Equal(t, int64(1), runs.Load())

	held, err := leases.Finish(t.Context(), "sweep", "proc_dead", time.Minute, ports.JobRun{Outcome: jobsapp.JobOK})
	require.NoError(t, err)
	assert.False(t, held, "a lease that ran out is no longer the dead process's to give back")
	state, err := leases.Jobs(t.Context())
	require.NoError(t, err)
	require.Len(t, state, 1)
	assert.Equal(t, jobsapp.JobOK, state[0].Last.Outcome)
	assert.Equal(t, int64(3), state[0].Last.Items)
	assert.Equal(t, int64(1), state[0].Runs, "the dead process's finish was not counted")
}

// A run is cut at its deadline, reported as overran to the observer, and its
// lease given back; a failing run is reported as failed with its error.
func TestScheduledJobDeadlineAndFailure(t *testing.T) {
	db := pgtest.New(t)
	leases := postgres.NewJobLeases(db.DB)
	s := jobsapp.NewScheduler(leases, processID(t), quietLog())
	s.Add(jobsapp.Job{Name: "slow", Every: time.Hour, Deadline: 100 * time.Millisecond,
		Run: func(ctx context.Context) (int64, error) { <-ctx.Done(); return 2, ctx.Err() }})
	s.Add(jobsapp.Job{Name: "broken", Every: time.Hour, Deadline: time.Second,
		Run: func(context.Context) (int64, error) { return 0, errors.New("the disk is on fire") }})
	s.Add(jobsapp.Job{Name: "panicky", Every: time.Hour, Deadline: time.Second,
		Run: func(context.Context) (int64, error) { panic("oops") }})
	var mu sync.Mutex
	reports := map[string]jobsapp.JobReport{}
	s.Observe(func(r jobsapp.JobReport) { mu.Lock(); reports[r.Job] = r; mu.Unlock() })
	for _, name := range []string{"slow", "broken", "panicky"} {
		ran, err := s.RunDue(t.Context(), name)
		require.NoError(t, err)
		require.True(t, ran)
	}
	assert.Equal(t, jobsapp.JobOverran, reports["slow"].Outcome)
	assert.Equal(t, int64(2), reports["slow"].Items)
	assert.Equal(t, jobsapp.JobFailed, reports["broken"].Outcome)
	assert.EqualError(t, reports["broken"].Err, "the disk is on fire")
	assert.Equal(t, jobsapp.JobFailed, reports["panicky"].Outcome)
	stats := s.Stats()
	assert.Equal(t, jobsapp.JobStats{Runs: 1, Overran: 1, Items: 2}, withoutTimes(stats["slow"]))
	assert.Equal(t, jobsapp.JobStats{Runs: 1, Failed: 1}, withoutTimes(stats["broken"]))

	state, err := leases.Jobs(t.Context())
	require.NoError(t, err)
	byName := map[string]ports.JobState{}
	for _, st := range state {
		byName[st.Name] = st
		assert.Empty(t, st.Holder, st.Name)
	}
	assert.Equal(t, jobsapp.JobOverran, byName["slow"].Last.Outcome)
	assert.Equal(t, "the disk is on fire", byName["broken"].Last.Error)
	assert.Contains(t, byName["panicky"].Last.Error, "oops")
}

func withoutTimes(s jobsapp.JobStats) jobsapp.JobStats {
	s.Took, s.Last = 0, time.Time{}
	return s
}

func processID(t testing.TB) jobsapp.ProcessID {
	t.Helper()
	id, err := jobsapp.NewProcessID(rand.Reader)
	require.NoError(t, err)
	return id
}
