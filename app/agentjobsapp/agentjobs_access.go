package agentjobsapp

import (
	"context"
	"strings"

	"github.com/petal-near/petal/app/explorationsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
)

// reach is who a job call comes from, and what it may touch.
type reach struct {
	owner  string // the person whose jobs these are
	access explorations.Access
	exp    string // the exploration a ref opened ("" through an agent key)
	take   string // the take a worker's own link belongs to
	// The link the call came through: an agent link, or an exploration's
	// link (a ref that was a token); a take checks it as it takes.
	agentLink, link string
}

// linkToken reads a continue link as sent: its token, or its address
// (…/s/<token>).
func linkToken(ref string) string {
	ref = strings.TrimSpace(ref)
	if i := strings.LastIndex(ref, "/s/"); i >= 0 {
		return ref[i+3:]
	}
	return ref
}

// openRef resolves an exploration ref (an id its owner names, or a link's
// token or address) to the exploration and the caller's access, as every
// exploration door does: anyone with less than need gets the one not-found.
// A worker's own link marks its job alive; once the job was stopped, sent
// again or reported, that link answers unauthorised with error.ended.
func (s *AgentJobsService) openRef(ctx context.Context, caller toolkit.Caller, ref string, need explorations.Access) (explorations.Exploration, reach, error) {
	var e explorations.Exploration
	var r reach
	ref = linkToken(ref)
	switch {
	case explorations.ValidID(ref):
		var err error
		if e, err = s.explorations.Exploration(ctx, ref); err != nil {
			return e, r, err
		}
		r.access = explorations.AccessByID(e, caller.Subject)
	case explorations.ValidToken(ref):
		l, err := s.explorations.LinkByToken(ctx, explorations.HashToken(ref))
		if err != nil {
			return e, r, err
		}
		if t, err := s.store.TakeOf(ctx, l.ID); err == nil {
			if t.Ended != "" && t.Ended != "released" {
				return e, r, agentjobs.EndedError(t.Ended)
			}
			r.take = l.ID
			if err := s.store.Touch(ctx, l.ID, s.now()); err != nil {
				s.log.WarnContext(ctx, "agent jobs: marking a job alive", "err", err)
			}
		}
		r.link = l.ID
		if r.access = explorations.AccessByLink(l); r.access >= need {
			if e, err = s.explorations.Exploration(ctx, l.Exploration); err != nil {
				return e, r, err
			}
		}
	}
	if r.access < need || r.access == explorations.NoAccess || !strings.HasPrefix(e.Owner, "prs_") {
		return explorations.Exploration{}, reach{}, explorations.NotFound()
	}
	r.owner, r.exp = e.Owner, e.ID
	return e, r, nil
}

// byAgentKey is the reach of an agent link sent as agent_key.
func (s *AgentJobsService) byAgentKey(ctx context.Context, key string) (reach, error) {
	owner, linkID, err := s.ownerOfToken(ctx, key)
	if err != nil {
		return reach{}, err
	}
	return reach{owner: owner, access: explorations.ContinueAccess, agentLink: linkID}, nil
}

// jobFor is a job the reach may touch: the owner's, and through an
// exploration's link only a job of that exploration (handed out from it,
// or its own conversation). Anything else is the same 404 as none.
func (s *AgentJobsService) jobFor(ctx context.Context, r reach, id string) (agentjobs.Job, error) {
	j, err := s.store.Job(ctx, id)
	if errs.Is(err, errs.NotFound) || (err == nil && (j.Owner != r.owner || (r.exp != "" && r.exp != j.Exploration && r.exp != j.Conversation))) {
		return agentjobs.Job{}, agentjobs.NotFound("job")
	}
	return j, err
}

// LinkUsed implements ExplorationWatcher: a worker's own link is refused
// with error.ended once its job was stopped, sent again or reported, and marks its job
// alive otherwise; any other link passes.
func (s *AgentJobsService) LinkUsed(ctx context.Context, linkID string) error {
	t, err := s.store.TakeOf(ctx, linkID)
	if errs.Is(err, errs.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if t.Ended != "" && t.Ended != "released" {
		return agentjobs.EndedError(t.Ended)
	}
	if t.Ended == "" {
		if err := s.store.Touch(ctx, linkID, s.now()); err != nil {
			s.log.WarnContext(ctx, "agent jobs: marking a job alive", "err", err)
		}
	}
	return nil
}

// Changed implements ExplorationWatcher: the conversation's live signal.
func (s *AgentJobsService) Changed(ctx context.Context, exploration string) {
	if err := s.signals.Signal(context.WithoutCancel(ctx), LiveTopic(exploration)); err != nil {
		s.log.WarnContext(ctx, "agent jobs: the live signal", "err", err)
	}
}

// WorkingHere implements ExplorationWatcher: the worker holding a job of
// this conversation, if one does.
func (s *AgentJobsService) WorkingHere(ctx context.Context, exploration string) *explorationsapp.WorkerPresence {
	jobs, err := s.store.JobsOf(ctx, exploration, "", 50)
	if err != nil {
		s.log.WarnContext(ctx, "agent jobs: presence", "err", err)
		return nil
	}
	for _, j := range jobs {
		if j.Conversation == exploration && j.Status == agentjobs.Taken {
			p := &explorationsapp.WorkerPresence{Client: j.TakenBy, N: j.N, Job: j.ID, LastSeen: j.LastSeen}
			if j.Worker != "" {
				p.Worker = &j.Worker
			}
			return p
		}
	}
	return nil
}
