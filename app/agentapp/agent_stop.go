package agentapp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/runs"
)

// StopResult is what POST …/stop answers.
type StopResult struct {
	RunID           string      `json:"run_id"`
	Status          runs.Status `json:"status"`
	Stopped         bool        `json:"stopped"`
	AlreadyFinished bool        `json:"already_finished"`
}

// stopWait bounds how long a stop waits for another process to end the run.
const stopWait = 30 * time.Second

// Stop ends a running run as stopped and answers once it has ended, saying
// what it witnessed.
func (a *AgentService) Stop(ctx context.Context, caller toolkit.Caller, id string) (StopResult, error) {
	run, err := a.Run(ctx, caller, id)
	if err != nil {
		return StopResult{}, err
	}
	if run.Status.Ended() {
		return StopResult{RunID: id, Status: run.Status, AlreadyFinished: true}, nil
	}
	if done := a.cancelLocal(id, errStopped); done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			return StopResult{}, ctx.Err()
		}
		return a.witnessed(ctx, id)
	}
	// Another process holds it, or nobody does.
	alive := false
	if run.ProcessID != "" && a.leases != nil {
		if alive, err = a.leases.Alive(ctx, run.ProcessID, jobsapp.LeaseStale); err != nil {
			return StopResult{}, err
		}
	}
	if !alive {
		return StopResult{RunID: id, Status: runs.Running}, nil
	}
	updates, cancel := a.bus.Watch(id)
	defer cancel()
	if err := a.bus.RequestStop(ctx, id); err != nil {
		return StopResult{}, fmt.Errorf("ask for a stop: %w", err)
	}
	deadline := time.NewTimer(stopWait)
	defer deadline.Stop()
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	for {
		select {
		case <-updates:
		case <-poll.C:
		case <-deadline.C:
			return StopResult{RunID: id, Status: runs.Running}, nil
		case <-ctx.Done():
			return StopResult{}, ctx.Err()
		}
		cur, err := a.store.Get(ctx, id)
		if err != nil {
			return StopResult{}, err
		}
		if cur.Status.Ended() {
			return a.witnessed(ctx, id)
		}
	}
}

func (a *AgentService) witnessed(ctx context.Context, id string) (StopResult, error) {
	run, err := a.store.Get(ctx, id)
	if err != nil {
		return StopResult{}, err
	}
	if run.Status == runs.Stopped {
		return StopResult{RunID: id, Status: runs.Stopped, Stopped: true}, nil
	}
	if run.Status.Ended() {
		return StopResult{RunID: id, Status: run.Status, AlreadyFinished: true}, nil
	}
	return StopResult{RunID: id, Status: run.Status}, nil
}

// Shutdown ends this process's jobs as interrupted and waits for them.
func (a *AgentService) Shutdown(ctx context.Context) {
	a.shutdown(errShutdown)
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Why a run ended interrupted, as its last event says: every door and every
// replica reads these words from the run's log.
const (
	interruptedByShutdown = "the server stopped while this run was going, so it ended here"
	interruptedByFence    = "the server running this run lost its lease on the database, so it ended here"
	interruptedOrphan     = "the server running this run stopped while it was going, so it ended here"
	interruptedStuck      = "the server running this run could not write its end, so it ended here"
)

// continueHint is a stopped or interrupted run's hint: how a program carries
// on (the route and what to send), and where a person does.
const continueHint = "to carry on from where it stopped, POST /api/v1/agent/chat with this run_id and the next message (on the pages: write below the run on /make?run=<run_id>)"

// interrupted is the last event of a run its process could not finish.
func interrupted(message string) runs.NewEvent {
	return runs.Make(runs.KindError, runs.ErrorData{Code: runs.CodeInterrupted, Message: message,
		Hint: continueHint})
}

// Recover ends as interrupted the runs whose process is gone. Runs of live
// processes are left alone.
func (a *AgentService) Recover(ctx context.Context) ([]string, error) {
	ids, err := a.store.InterruptOrphans(ctx, jobsapp.LeaseStale, interrupted(interruptedOrphan))
	if len(ids) > 0 {
		a.log.Info("runs interrupted by a restart", "runs", len(ids))
	}
	// A live process that gave up writing a run's end (its database away
	// past the chat's write time) leaves it running: once no chat could
	// still be going, the sweep ends it.
	stuck, serr := a.store.InterruptStuck(ctx, a.StuckAfter(), interrupted(interruptedStuck))
	if len(stuck) > 0 {
		a.log.Warn("runs interrupted whose end their process could not write", "runs", len(stuck))
	}
	return append(ids, stuck...), errors.Join(err, serr)
}

// StuckAfter is how long a running run may go unwritten before a sweep
// ends it whatever its process: its chat's wall time, its writes' time
// after it, and a lease's staleness on top (the clocks of two machines).
func (a *AgentService) StuckAfter() time.Duration {
	return a.cfg.RunMax + toolkit.DetachedWriteTimeout + jobsapp.LeaseStale
}

// Fence implements Fencer: every job of this process ends interrupted, and
// new chats are refused until Unfence.
func (a *AgentService) Fence() {
	a.fenced.Store(true)
	a.mu.Lock()
	jobs := make([]*job, 0, len(a.jobs))
	for _, j := range a.jobs {
		jobs = append(jobs, j)
	}
	a.mu.Unlock()
	for _, j := range jobs {
		j.cancel(errFenced)
	}
}

// Unfence implements Fencer.
func (a *AgentService) Unfence() { a.fenced.Store(false) }

// endTimeout bounds the write that ends a run on shutdown or fencing.
const endTimeout = 10 * time.Second
