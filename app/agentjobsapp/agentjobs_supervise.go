package agentjobsapp

import (
	"context"
	"strings"
	"time"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
)

// ownJob is a job of the agent's own conversation, or the one 404.
func (s *AgentJobsService) ownJob(ctx context.Context, call toolkit.Call, id string) (string, error) {
	run, owner, err := s.agentRun(ctx, call)
	if err != nil {
		return "", err
	}
	j, err := s.store.Job(ctx, id)
	if errs.Is(err, errs.NotFound) || (err == nil && (j.Owner != owner || (j.Run != run.ID && (run.Exploration == "" || j.Exploration != run.Exploration)))) {
		return "", agentjobs.NotFound("job")
	}
	return owner, err
}

func (s *AgentJobsService) retryJob(ctx context.Context, call toolkit.Call, in retryJobInput) (JobState, error) {
	owner, err := s.ownJob(ctx, call, in.Job)
	if err != nil {
		return JobState{}, err
	}
	return s.reopen(ctx, owner, in.Job, in.To)
}

func (s *AgentJobsService) stopJob(ctx context.Context, call toolkit.Call, in stopJobInput) (JobState, error) {
	owner, err := s.ownJob(ctx, call, in.Job)
	if err != nil {
		return JobState{}, err
	}
	return s.stop(ctx, owner, in.Job)
}

// JobState is the supervision routes' answer.
type JobState struct {
	Job JobView `json:"job"`
}

func (s *AgentJobsService) reopen(ctx context.Context, owner, id, to string) (JobState, error) {
	if err := checkTo("to", to); err != nil {
		return JobState{}, err
	}
	j, err := s.store.Reopen(ctx, owner, id, agentjobs.AgentKey(to), s.now())
	if err != nil {
		return JobState{}, err
	}
	s.opened(ctx, j)
	return JobState{Job: jobView(j)}, nil
}

func (s *AgentJobsService) stop(ctx context.Context, owner, id string) (JobState, error) {
	j, err := s.store.Stop(ctx, owner, id, s.now())
	if err != nil {
		return JobState{}, err
	}
	s.changed(ctx, j)
	return JobState{Job: jobView(j)}, nil
}

// Supervise is POST /api/v1/jobs/:job/stop|retry|hand-over, for the signed-in
// person: another's job is the same 404 as none.
func (s *AgentJobsService) Supervise(ctx context.Context, caller toolkit.Caller, id, action, to string) (JobState, error) {
	owner, err := person(caller)
	if err != nil {
		return JobState{}, err
	}
	switch action {
	case "stop":
		return s.stop(ctx, owner, id)
	case "retry":
		return s.reopen(ctx, owner, id, "")
	case "hand-over":
		if strings.TrimSpace(to) == "" {
			return JobState{}, errs.New(errs.BadInput, "to is empty", "name the agent to hand the job to")
		}
		return s.reopen(ctx, owner, id, to)
	}
	return JobState{}, agentjobs.NotFound("job")
}

// LiveBeat is how often a quiet live stream says it is still there, well
// inside the 100 s a tunnel lets a request idle.
const LiveBeat = 15 * time.Second

// LiveViewer receives a conversation's live signal.
type LiveViewer interface {
	// Changed: something in the conversation changed (a job's state, a
	// note, a report): read it again.
	Changed(exploration string) error
	Heartbeat() error
}

// Live is GET /api/v1/explorations/:ref/live: one Changed per change to the
// conversation, signalled from any replica, until ctx ends. Anyone with a
// link to it, or its owner, may follow it; anyone else gets the one 404. It
// listens before it answers, so nothing that changes after the stream opens
// is missed; follow runs the stream, and ends its listening. A stream opened
// with a link ends with it: the link is looked at again at each change and
// each beat, and once it is revoked (or its worker's job was stopped, sent
// again or reported) follow returns that refusal.
func (s *AgentJobsService) Live(ctx context.Context, caller toolkit.Caller, ref string) (exploration string, follow func(LiveViewer) error, err error) {
	_, r, err := s.openRef(ctx, caller, ref, explorations.ReadAccess)
	if err != nil {
		return "", nil, err
	}
	stillWorks := func() error {
		if r.link == "" {
			return nil // the owner's, by id
		}
		return s.linkStillOpens(ctx, linkToken(ref))
	}
	wake, stop := s.signals.Listen(LiveTopic(r.exp))
	return r.exp, func(v LiveViewer) error {
		defer stop()
		if v == nil {
			return nil
		}
		beat := time.NewTicker(LiveBeat)
		defer beat.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-wake:
				if err := stillWorks(); err != nil {
					return err
				}
				if err := v.Changed(r.exp); err != nil {
					return err
				}
			case <-beat.C:
				if err := stillWorks(); err != nil {
					return err
				}
				if err := v.Heartbeat(); err != nil {
					return err
				}
			}
		}
	}, nil
}

// linkStillOpens is nil while the link token names still opens its
// exploration for reading: not revoked, and not a worker's link whose take
// ended (a release leaves it working). It marks no job alive: a stream
// open is not a worker at work. Any other answer refuses, as openRef would.
func (s *AgentJobsService) linkStillOpens(ctx context.Context, token string) error {
	l, err := s.explorations.LinkByToken(ctx, explorations.HashToken(token))
	if err != nil {
		return err
	}
	// A worker's ended take says why first (its end revoked its link too).
	t, err := s.store.TakeOf(ctx, l.ID)
	switch {
	case err != nil && !errs.Is(err, errs.NotFound):
		return err
	case err == nil && t.Ended != "" && t.Ended != "released":
		return agentjobs.EndedError(t.Ended)
	case explorations.AccessByLink(l) < explorations.ReadAccess:
		return explorations.NotFound()
	}
	return nil
}

// checkTo checks an agent's name a job is sent to ("" is anyone).
func checkTo(field, to string) error {
	if to == "" {
		return nil
	}
	if _, err := agentjobs.CheckAgent(to, ""); err != nil {
		return errs.Newf(errs.BadInput, "%s must be an agent's name: 1 to %d characters, no control characters", field, agentjobs.MaxAgentName)
	}
	return nil
}
