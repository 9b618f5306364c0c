package agentjobsapp

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/petal-near/petal/app/viewsapp"
	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/specs"
	"github.com/petal-near/petal/ports"
)

// WaitInput is POST /api/v1/agents/wait's body.
type WaitInput struct {
	As     string  `json:"as"`
	Worker string  `json:"worker,omitempty"`
	WaitS  *int    `json:"wait_s,omitempty"`
	Can    *string `json:"can,omitempty"`
}

// JobOffer is a job as its taker gets it.
type JobOffer struct {
	ID           string          `json:"id"`
	Kind         string          `json:"kind"`
	Title        string          `json:"title"`
	Brief        string          `json:"brief"`
	Inputs       json.RawMessage `json:"inputs"`
	To           *string         `json:"to"`
	Conversation string          `json:"conversation"`
	PartOf       *string         `json:"part_of,omitempty"`
	Part         int             `json:"part,omitempty"`
	Parts        int             `json:"parts,omitempty"`
}

// JobProject is where the taker works: a continue link on the job's own
// conversation, made for this take alone.
type JobProject struct {
	Exploration string `json:"exploration"`
	Question    string `json:"question"`
}

// WaitAnswer is a wait's (and take_job's) answer: a job, or { job: null }.
type WaitAnswer struct {
	Job     *JobOffer       `json:"job"`
	Project *JobProject     `json:"project,omitempty"`
	View    json.RawMessage `json:"view,omitempty"`
	// Link is take_job's continue link (the project's exploration address).
	Link string `json:"link,omitempty"`
	link string // the take's link id, for Answered
}

// Wait is POST /api/v1/agents/wait: it waits up to wait_s for an open job of
// the token's person sent to as (case ignored), or to anyone, and takes it
// while the request is still open. It never polls: it tries once, then again
// each time the person's jobs are signalled (a job opened on any replica),
// until wait_s passes or ctx ends (the caller left), which takes nothing.
// The door calls Answered once it has written the answer.
func (s *AgentJobsService) Wait(ctx context.Context, token string, in WaitInput) (*WaitAnswer, error) {
	owner, agentLink, err := s.ownerOfToken(ctx, token)
	if err != nil {
		return nil, err
	}
	key, err := agentjobs.CheckAgent(in.As, in.Worker)
	if err != nil {
		return nil, err
	}
	if in.Can != nil {
		if err := agentjobs.CheckCan(*in.Can); err != nil {
			return nil, err
		}
	}
	wait, err := agentjobs.CheckWait(in.WaitS)
	if err != nil {
		return nil, err
	}
	now := s.now()
	until := now.Add(wait)
	w, err := s.store.Seen(ctx, agentjobs.Worker{Owner: owner, Agent: key, Name: strings.TrimSpace(in.As), Worker: in.Worker, Can: in.Can,
		LastSeen: now, WaitingUntil: &until}, agentjobs.MaxWorkersPerAgent, agentjobs.MaxAgentsPerPerson)
	if err != nil {
		return nil, err
	}
	s.waitsOpen.Add(1)
	defer s.waitsOpen.Add(-1)
	took := false // a take marks the wait over in its own statement
	defer func() {
		if took {
			return
		}
		ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.store.WaitEnded(ectx, owner, key, in.Worker, s.now()); err != nil {
			s.log.WarnContext(ctx, "agent wait: marking the wait over", "err", err)
		}
	}()
	// Join before the first try, so a job opened between the two wakes us.
	wake, tried, leave, err := s.hub.join(owner)
	if err != nil {
		return nil, err
	}
	defer leave()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		// The take checks the link as it takes: revoked while this wait was
		// open, it takes nothing and the wait answers 401.
		ans, err := s.take(ctx, owner, key, w, "", ctx.Err, reach{owner: owner, agentLink: agentLink})
		if ctx.Err() != nil {
			// Gone while the take was on its way: a job it took goes back.
			s.Answered(ctx, ans, ctx.Err())
			s.waits.Add(1, "gone")
			return nil, ctx.Err()
		}
		if err != nil {
			return nil, err
		}
		if ans != nil {
			// There may be more: widen the front of takers.
			s.hub.wake(owner, wakeOnTake)
			took = true
			s.waits.Add(1, "job")
			s.takes.Add(1, "wait")
			return ans, nil
		}
		tried()
		select {
		case <-wake:
		case <-timer.C:
			s.waits.Add(1, "none")
			return &WaitAnswer{}, nil
		case <-s.closing:
			s.waits.Add(1, "none")
			return &WaitAnswer{}, nil
		case <-ctx.Done():
			s.waits.Add(1, "gone")
			return nil, ctx.Err()
		}
	}
}

// take takes one open job for worker w (only the job named, when only is
// not ""), making the continue link its worker works through; r is whom the
// take comes through (its link is checked as it takes, and an exploration's
// link takes only that exploration's jobs). stillThere is asked just before
// the take commits.
func (s *AgentJobsService) take(ctx context.Context, owner, key string, w agentjobs.Worker, only string, stillThere func() error, r reach) (*WaitAnswer, error) {
	linkID, err := explorations.NewID(s.random, "lnk_")
	if err != nil {
		return nil, err
	}
	token, hash, err := explorations.NewLinkToken(s.random)
	if err != nil {
		return nil, err
	}
	j, err := s.store.Take(ctx, ports.Take{Owner: owner, Agent: key, Name: w.Name, Worker: w.Worker, N: w.N, LinkID: linkID, LinkSHA256: hash,
		Process: string(s.process), At: s.now(), StillThere: stillThere, OnlyJob: only, Exploration: r.exp,
		AgentLink: r.agentLink, ExplorationLink: r.link})
	if err != nil || j == nil {
		return nil, err
	}
	s.toTake.Observe(j.UpdatedAt.Sub(j.OpenedAt).Seconds())
	question := j.Question
	if question == "" {
		question = j.Title
	}
	s.changed(ctx, *j)
	return &WaitAnswer{Job: offerOf(*j), Project: &JobProject{Exploration: strings.TrimRight(s.cfg.PublicURL, "/") + "/s/" + token, Question: question},
		View: s.viewOf(ctx, owner), link: linkID}, nil
}

// viewOf is the person's view, canonical, so every flower their agent draws
// is drawn as they see it; the default when theirs can't be read (a take
// isn't refused for it).
func (s *AgentJobsService) viewOf(ctx context.Context, owner string) json.RawMessage {
	v := specs.DefaultView()
	if s.views != nil {
		if mine, err := s.views.PersonView(ctx, owner); err == nil {
			v = mine
		} else {
			s.log.WarnContext(ctx, "agent jobs: the person's view", "err", err)
		}
	}
	ans, err := viewsapp.ViewAnswerOf(v)
	if err != nil {
		return nil
	}
	return ans.View
}

// Answered records whether a wait's answer was written: a job whose answer
// never reached its taker goes back to open, for the next waiter.
func (s *AgentJobsService) Answered(ctx context.Context, ans *WaitAnswer, writeErr error) {
	if ans == nil || ans.link == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if writeErr == nil {
		if err := s.store.Delivered(ctx, ans.link, s.now()); err != nil {
			s.log.WarnContext(ctx, "agent wait: recording the answer written", "err", err)
		}
		return
	}
	s.takes.Add(1, "released")
	s.log.WarnContext(ctx, "agent wait: the answer could not be written; the job goes back to open", "job", ans.Job.ID, "err", writeErr)
	if err := s.store.Release(ctx, ans.link, s.now()); err != nil {
		s.log.ErrorContext(ctx, "agent wait: giving back a job whose answer was never written", "job", ans.Job.ID, "err", err)
		return
	}
	if j, err := s.store.Job(ctx, ans.Job.ID); err == nil {
		s.opened(ctx, j)
	}
}

func offerOf(j agentjobs.Job) *JobOffer {
	o := &JobOffer{ID: j.ID, Kind: j.Kind, Title: j.Title, Brief: j.Brief, Inputs: json.RawMessage("null"), Conversation: j.Conversation,
		Part: j.Part, Parts: j.Parts}
	if j.Inputs != nil {
		o.Inputs = j.Inputs
	}
	if j.To != "" {
		o.To = &j.To
	}
	if j.PartOf != "" {
		o.PartOf = &j.PartOf
	}
	return o
}

// opened wakes the person's waiters on every replica, and the job's pages.
func (s *AgentJobsService) opened(ctx context.Context, j agentjobs.Job) {
	if err := s.signals.Signal(context.WithoutCancel(ctx), jobsTopic(j.Owner)); err != nil {
		s.log.WarnContext(ctx, "agent jobs: waking the waiters", "err", err)
	}
	s.changed(ctx, j)
}

// changed fires the live signal of the conversations a job belongs to.
func (s *AgentJobsService) changed(ctx context.Context, j agentjobs.Job) {
	for i, e := range []string{j.Exploration, j.Conversation} {
		if e == "" || (i == 1 && e == j.Exploration) {
			continue
		}
		if err := s.signals.Signal(context.WithoutCancel(ctx), LiveTopic(e)); err != nil {
			s.log.WarnContext(ctx, "agent jobs: the live signal", "err", err)
		}
	}
}
