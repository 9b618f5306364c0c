package jobsapp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/petal-near/petal/ports"
)

// Job is a background job that runs on one replica at a time, every Every,
// each run cut at Deadline.
type Job struct {
	// Name is the job's lease row (scheduled_jobs.name); keep it stable.
	Name string
	// Every is the time from the end of one run (on any replica) to the next.
	Every time.Duration
	// Deadline cuts a run: its context ends then. The lease lasts a little
	// longer (leaseFor), so a run that heeds its context has stopped before
	// any peer can take the job: the lease fences it.
	Deadline time.Duration
	// Run does one run and says how many things it handled (runs ended, rows
	// deleted…), for the log and the metrics.
	Run func(ctx context.Context) (items int64, err error)
}

// JobReport is what the scheduler tells its observer after each run.
type JobReport struct {
	Job     string
	Outcome string // JobOK, JobFailed, JobOverran
	Items   int64
	Took    time.Duration
	Err     error
}

// How a job's run went.
const (
	JobOK      = "ok"
	JobFailed  = "failed"
	JobOverran = "overran" // its deadline passed before it returned
)

// JobStats counts one job's runs in this process.
type JobStats struct {
	Runs, Failed, Overran, Items int64
	Took                         time.Duration // summed over runs
	Last                         time.Time
}

// Scheduler runs Jobs, each on one replica at a time through its lease row
// (ports.JobLeases): every replica polls, the one that claims a due job runs
// it, the others skip. The schedule lives in the database, so three replicas
// run an every-ten-minutes job once every ten minutes, not three times, and a
// replica that dies mid-run only delays the job until its lease runs out.
type Scheduler struct {
	leases  ports.JobLeases
	process ProcessID
	log     *slog.Logger
	random  ports.Random // the polls' jitter; nil: none

	mu      sync.Mutex
	jobs    []Job
	stats   map[string]*JobStats
	observe []func(JobReport)
	started bool
}

// maxPoll bounds how long a replica waits between looks at a job, so a job
// whose replica died is taken up soon after its lease runs out even when it
// runs rarely.
const maxPoll = 30 * time.Second

// NewScheduler makes the scheduler of this process; Add jobs, then Run.
func NewScheduler(leases ports.JobLeases, process ProcessID, log *slog.Logger) *Scheduler {
	return &Scheduler{leases: leases, process: process, log: log, stats: map[string]*JobStats{}}
}

// JitterFrom has the scheduler draw its polls' jitter from random (the
// process's ports.Random), so replicas started together don't poll in step.
func (s *Scheduler) JitterFrom(random ports.Random) { s.random = random }

// jitter is up to a tenth of poll more, drawn from s.random.
func (s *Scheduler) jitter(poll time.Duration) time.Duration {
	var b [8]byte
	if s.random == nil || poll <= 0 {
		return 0
	}
	if _, err := io.ReadFull(s.random, b[:]); err != nil {
		return 0
	}
	return time.Duration(binary.LittleEndian.Uint64(b[:]) % uint64(poll/10+1))
}

// Add registers a job. Jobs are added before Run.
func (s *Scheduler) Add(j Job) {
	if j.Name == "" || j.Every <= 0 || j.Deadline <= 0 || j.Run == nil {
		panic(fmt.Sprintf("scheduler: job %q needs a name, an interval, a deadline and a function", j.Name))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		panic("scheduler: Add after Run")
	}
	s.jobs = append(s.jobs, j)
	s.stats[j.Name] = &JobStats{}
}

// Observe adds a hook called after every run this process makes: the metrics
// adapter counts runs, outcomes, items and durations through it.
func (s *Scheduler) Observe(f func(JobReport)) {
	s.mu.Lock()
	s.observe = append(s.observe, f)
	s.mu.Unlock()
}

// CountJobs is an Observe hook that counts every run on m: runs by job and
// outcome, what they handled, and how long they took.
func CountJobs(m ports.Metrics) func(JobReport) {
	m = ports.MetricsOrNone(m)
	runs := m.Counter("petal_job_runs_total", "Scheduled jobs' runs on this process, by job and outcome (ok, failed, overran).", "job", "outcome")
	items := m.Counter("petal_job_items_total", "What scheduled jobs' runs on this process handled (runs ended, rows deleted…), by job.", "job")
	took := m.Histogram("petal_job_duration_seconds", "How long scheduled jobs' runs on this process took, by job.",
		[]float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300}, "job")
	return func(r JobReport) {
		runs.Add(1, r.Job, r.Outcome)
		items.Add(float64(r.Items), r.Job)
		took.Observe(r.Took.Seconds(), r.Job)
	}
}

// Stats returns what this process's runs of each job came to.
func (s *Scheduler) Stats() map[string]JobStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]JobStats, len(s.stats))
	for k, v := range s.stats {
		out[k] = *v
	}
	return out
}

// leaseFor is how long a claim holds a job: its deadline and a margin, so a
// run cut at its deadline has given up before the lease lets a peer in.
func leaseFor(deadline time.Duration) time.Duration {
	return deadline + max(time.Second, deadline/4)
}

// Run polls every job until ctx ends, then waits for the runs under way (which
// ctx's end cancels).
func (s *Scheduler) Run(ctx context.Context) {
	s.mu.Lock()
	s.started = true
	jobs := append([]Job(nil), s.jobs...)
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() { s.loop(ctx, j) })
	}
	wg.Wait()
}

func (s *Scheduler) loop(ctx context.Context, j Job) {
	poll := min(j.Every, maxPoll)
	for {
		if _, err := s.RunDue(ctx, j.Name); err != nil && ctx.Err() == nil {
			s.log.Warn("scheduled job: claiming or finishing failed", "job", j.Name, "err", err)
		}
		// A little jitter, so replicas started together don't poll in step.
		wait := poll + s.jitter(poll)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// RunDue runs the job named if it is due and no replica holds it, and reports
// whether it ran here. Tests and operators' tools call it to run a job now
// (it still takes the lease: a job never runs twice at once).
func (s *Scheduler) RunDue(ctx context.Context, name string) (ran bool, err error) {
	j, ok := s.job(name)
	if !ok {
		return false, fmt.Errorf("scheduler: no job %q", name)
	}
	claimed, err := s.leases.Claim(ctx, j.Name, string(s.process), leaseFor(j.Deadline))
	if err != nil || !claimed {
		return false, err
	}
	rep := s.runOne(ctx, j)
	// Finish even when ctx has ended (shutdown): the lease goes back at once
	// instead of running out.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	run := ports.JobRun{Outcome: rep.Outcome, Items: rep.Items}
	if rep.Err != nil {
		run.Error = rep.Err.Error()
	}
	held, err := s.leases.Finish(fctx, j.Name, string(s.process), j.Every, run)
	if err != nil {
		return true, fmt.Errorf("finishing %s: %w", j.Name, err)
	}
	if !held {
		s.log.Warn("scheduled job: its lease had run out before it finished; a peer may have run it too", "job", j.Name)
	}
	return true, nil
}

func (s *Scheduler) job(name string) (Job, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		if j.Name == name {
			return j, true
		}
	}
	return Job{}, false
}

func (s *Scheduler) runOne(ctx context.Context, j Job) JobReport {
	rctx, cancel := context.WithTimeout(ctx, j.Deadline)
	defer cancel()
	began := time.Now()
	items, err := safeRun(rctx, j)
	rep := JobReport{Job: j.Name, Outcome: JobOK, Items: items, Took: time.Since(began), Err: err}
	switch {
	case errors.Is(rctx.Err(), context.DeadlineExceeded):
		rep.Outcome = JobOverran
	case err != nil:
		rep.Outcome = JobFailed
	}
	s.mu.Lock()
	st := s.stats[j.Name]
	st.Runs++
	st.Items += items
	st.Took += rep.Took
	st.Last = began
	switch rep.Outcome {
	case JobFailed:
		st.Failed++
	case JobOverran:
		st.Overran++
	}
	hooks := append([]func(JobReport){}, s.observe...)
	s.mu.Unlock()
	for _, f := range hooks {
		f(rep)
	}
	switch {
	case rep.Outcome == JobOverran:
		s.log.Warn("scheduled job overran its deadline", "job", j.Name, "deadline", j.Deadline.String(), "items", items, "err", err)
	case err != nil && ctx.Err() == nil:
		s.log.Error("scheduled job failed", "job", j.Name, "items", items, "err", err)
	case items > 0:
		s.log.Info("scheduled job ran", "job", j.Name, "items", items, "took_ms", rep.Took.Milliseconds())
	}
	return rep
}

// safeRun runs j, turning a panic into an error so one bad job can't take
// the process (or its lease) down.
func safeRun(ctx context.Context, j Job) (items int64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("job %s panicked: %v", j.Name, p)
		}
	}()
	return j.Run(ctx)
}
