package agentjobsapp

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/app/viewsapp"
	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// AgentJobsService is a person's own agents (docs/agents.md): the agent links
// they wait with, their waits and presence, and the jobs Petals' agent hands
// them. Waiters wake through ports.Signals when a job opens anywhere; a job is
// taken in one transaction of the store, so exactly one waiter gets it.
type AgentJobsService struct {
	cfg          config.Config
	store        ports.AgentJobs
	explorations ports.ExplorationStore
	runs         ports.RunStore
	signals      ports.Signals
	hub          *waitHub             // this process's waiters, woken a few at a time
	views        viewsapp.PersonViews // the view a take hands the worker (view/v1, theirs or the default)
	clock        ports.Clock
	random       ports.Random
	process      jobsapp.ProcessID
	log          *slog.Logger
	// turns starts the new turn a report brings (nil: reports wait for the
	// person's next message). Set by SetTurns, since the agent's service
	// is built after the registry this service's tools are in.
	turns ReportTurns
	// closing ends the open waits when the process shuts down.
	closing   chan struct{}
	closeOnce sync.Once

	waitsOpen ports.Gauge
	waits     ports.Counter
	takes     ports.Counter
	toTake    ports.Histogram
}

// ReportTurns starts a new turn of a run when a report lands.
type ReportTurns interface {
	// TakeUpReport starts a turn of runID, paid from owner's own credit,
	// with message as the person's; false when it can't now (the run is
	// going, or there is no credit), and the report waits.
	TakeUpReport(ctx context.Context, owner, runID, message string) (bool, error)
}

// NewAgentJobsService makes the service.
func NewAgentJobsService(cfg config.Config, store ports.AgentJobs, exps ports.ExplorationStore, runStore ports.RunStore, signals ports.Signals,
	views viewsapp.PersonViews, clock ports.Clock, random ports.Random, process jobsapp.ProcessID, m ports.Metrics, log *slog.Logger) *AgentJobsService {
	m = ports.MetricsOrNone(m)
	return &AgentJobsService{cfg: cfg, store: store, explorations: exps, runs: runStore, signals: signals, hub: newWaitHub(signals), views: views, closing: make(chan struct{}), clock: clock, random: random,
		process: process, log: log,
		waitsOpen: m.Gauge("petal_agent_waits_open", "Agents' waits (POST /api/v1/agents/wait) open now in this process."),
		waits:     m.Counter("petal_agent_waits_total", "Agents' waits ended, by outcome: job (took one), none (wait_s passed), gone (the caller left).", "outcome"),
		takes:     m.Counter("petal_agent_takes_total", "Jobs taken by a person's agents, by door: wait or take_job; and released (an answer that was never written).", "door"),
		toTake: m.Histogram("petal_agent_job_open_to_take_seconds", "From a job opening (hand_job, retry, hand-over) to a waiter taking it.",
			[]float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 120, 600}),
	}
}

// Close ends this process's open waits, each answering { job: null } (the
// process is shutting down); new waits answer at once too.
func (s *AgentJobsService) Close() { s.closeOnce.Do(func() { close(s.closing) }) }

// SetTurns connects the agent that takes reports up.
func (s *AgentJobsService) SetTurns(t ReportTurns) { s.turns = t }

func (s *AgentJobsService) now() time.Time { return s.clock.Now().UTC().Truncate(time.Microsecond) }

// jobsTopic is the signal a person's waiters listen to.
func jobsTopic(owner string) string { return "jobs " + owner }

// LiveTopic is the signal of a conversation's live stream.
func LiveTopic(exploration string) string { return "live " + exploration }

// person is the signed-in person calling, or unauthorised.
func person(caller toolkit.Caller) (string, error) {
	if !people.IsPerson(caller.Subject) {
		return "", errs.New(errs.Unauthorised, "sign in first", "your agents work for you once you are signed in")
	}
	return caller.Subject, nil
}

// AgentLinkMade is a new agent link, its token shown this once.
type AgentLinkMade struct {
	ID        string    `json:"id"`
	Token     string    `json:"token"`
	CreatedAt time.Time `json:"created_at"`
}

// AgentLinkView is a link as listed.
type AgentLinkView struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
}

// CreateLink makes an agent link for the signed-in person; older ones keep working.
func (s *AgentJobsService) CreateLink(ctx context.Context, caller toolkit.Caller) (AgentLinkMade, error) {
	owner, err := person(caller)
	if err != nil {
		return AgentLinkMade{}, err
	}
	if working, err := s.store.Links(ctx, owner); err != nil {
		return AgentLinkMade{}, err
	} else if len(working) >= agentjobs.MaxLinksPerPerson {
		return AgentLinkMade{}, agentjobs.TooManyLinks()
	}
	id, err := explorations.NewID(s.random, "alk_")
	if err != nil {
		return AgentLinkMade{}, err
	}
	token, hash, err := agentjobs.NewToken(s.random)
	if err != nil {
		return AgentLinkMade{}, err
	}
	l := agentjobs.Link{ID: id, Owner: owner, TokenSHA256: hash, CreatedAt: s.now()}
	if err := s.store.CreateLink(ctx, l); err != nil {
		return AgentLinkMade{}, err
	}
	return AgentLinkMade{ID: id, Token: token, CreatedAt: l.CreatedAt}, nil
}

// Links lists the person's links that work, without tokens.
func (s *AgentJobsService) Links(ctx context.Context, caller toolkit.Caller) ([]AgentLinkView, error) {
	owner, err := person(caller)
	if err != nil {
		return nil, err
	}
	links, err := s.store.Links(ctx, owner)
	if err != nil {
		return nil, err
	}
	out := make([]AgentLinkView, 0, len(links))
	for _, l := range links {
		out = append(out, AgentLinkView{ID: l.ID, CreatedAt: l.CreatedAt})
	}
	return out, nil
}

// RevokeLinks revokes one of the person's links, or all with id "". Another's
// id is the same 404 as none.
func (s *AgentJobsService) RevokeLinks(ctx context.Context, caller toolkit.Caller, id string) (int, error) {
	owner, err := person(caller)
	if err != nil {
		return 0, err
	}
	n, err := s.store.RevokeLinks(ctx, owner, id, s.now())
	if err != nil {
		return 0, err
	}
	if id != "" && n == 0 {
		return 0, agentjobs.NotFound("agent link")
	}
	// Waits open through a revoked link, on any replica, try again now: a
	// take checks its link, so they answer 401 instead of a job.
	if err := s.signals.Signal(context.WithoutCancel(ctx), jobsTopic(owner)); err != nil {
		s.log.WarnContext(ctx, "agent links: waking the waits of a revoked link", "err", err)
	}
	return n, nil
}

// ownerOfToken is the person an agent link works for, and the link's id;
// any token that isn't a working link is unauthorised, one answer whatever
// the reason.
func (s *AgentJobsService) ownerOfToken(ctx context.Context, token string) (owner, linkID string, err error) {
	if !agentjobs.ValidToken(token) {
		return "", "", agentjobs.BadAgentLink()
	}
	l, err := s.store.LinkByToken(ctx, agentjobs.HashToken(token))
	if errs.Is(err, errs.NotFound) || (err == nil && l.RevokedAt != nil) {
		return "", "", agentjobs.BadAgentLink()
	}
	if err != nil {
		return "", "", err
	}
	return l.Owner, l.ID, nil
}

// PresenceEntry is one worker of one of the person's agents.
type PresenceEntry struct {
	Name     string       `json:"name"`
	N        int          `json:"n"`
	Worker   *string      `json:"worker"`
	Waiting  bool         `json:"waiting"`
	LastSeen time.Time    `json:"last_seen"`
	Can      *string      `json:"can"`
	Job      *PresenceJob `json:"job"`
}

// PresenceJob is the job a worker holds.
type PresenceJob struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Exploration string `json:"exploration"`
}

// Presence is GET /api/v1/agents: every worker of the person's agents.
func (s *AgentJobsService) Presence(ctx context.Context, caller toolkit.Caller) ([]PresenceEntry, error) {
	owner, err := person(caller)
	if err != nil {
		return nil, err
	}
	ws, err := s.store.Workers(ctx, owner)
	if err != nil {
		return nil, err
	}
	now := s.now()
	out := make([]PresenceEntry, 0, len(ws))
	for _, w := range ws {
		e := PresenceEntry{Name: w.Name, N: w.N, Waiting: w.Waiting(now), LastSeen: w.LastSeen, Can: w.Can}
		if w.Worker != "" {
			e.Worker = &w.Worker
		}
		if w.Job != nil {
			if j, err := s.store.Job(ctx, *w.Job); err == nil {
				e.Job = &PresenceJob{ID: j.ID, Title: j.Title, Exploration: j.Conversation}
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// JobsKept is how long an ended job (done, failed, stopped) is kept; the
// retention job deletes it then (ports.EndedJobs).
const JobsKept = 30 * 24 * time.Hour

// SweepJob is the agent jobs' scheduled job (one replica at a time): it puts
// back the jobs whose take was never answered because its process died
// (their lease lapsed), and wakes those people's waiters.
func (s *AgentJobsService) SweepJob() jobsapp.Job {
	return jobsapp.Job{Name: "agent_jobs", Every: 5 * time.Second, Deadline: 20 * time.Second,
		Run: func(ctx context.Context) (int64, error) {
			owners, err := s.store.ReleaseUndelivered(ctx, jobsapp.LeaseStale, 500)
			woken := map[string]bool{}
			for _, o := range owners {
				s.takes.Add(1, "released")
				if !woken[o] {
					woken[o] = true
					if serr := s.signals.Signal(ctx, jobsTopic(o)); serr != nil {
						s.log.WarnContext(ctx, "agent jobs: waking the waiters", "err", serr)
					}
				}
			}
			return int64(len(owners)), err
		}}
}
