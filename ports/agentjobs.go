package ports

import (
	"context"
	"time"

	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/explorations"
)

// AgentJobs keeps a person's agent links, the workers that waited and the
// jobs handed to them. Every change of a job is one statement or one
// transaction, so replicas sharing the store agree: a job is taken by exactly
// one taker, however many race.
type AgentJobs interface {
	CreateLink(ctx context.Context, l agentjobs.Link) error
	// LinkByToken finds a link by its token's hash (revoked ones too), or
	// errs.NotFound.
	LinkByToken(ctx context.Context, tokenSHA256 string) (agentjobs.Link, error)
	// Links is owner's links not revoked, oldest first.
	Links(ctx context.Context, owner string) ([]agentjobs.Link, error)
	// RevokeLinks revokes owner's link id, or all of owner's links when id is
	// "". It answers how many it revoked (0 for another's id).
	RevokeLinks(ctx context.Context, owner, id string, at time.Time) (int, error)

	// Seen records a worker waiting (until waitingUntil) or taking: made with
	// the next place among its agent's workers, refused with
	// agentjobs.TooManyWorkers past maxWorkers of one agent, and with
	// agentjobs.TooManyAgents for a new agent past maxAgents of the owner's.
	// can nil keeps what it said before.
	Seen(ctx context.Context, w agentjobs.Worker, maxWorkers, maxAgents int) (agentjobs.Worker, error)
	// WaitEnded marks a worker's wait over at at.
	WaitEnded(ctx context.Context, owner, agent, worker string, at time.Time) error
	// Workers is owner's workers, each agent's in the order they first came,
	// with the job each holds.
	Workers(ctx context.Context, owner string) ([]agentjobs.Worker, error)

	// Open stores new open jobs, all or none; past maxOpen open jobs of the
	// owner it stores nothing and answers agentjobs.TooManyOpen.
	// conversation, when its ID is set, is the jobs' own exploration, made in
	// the same transaction (so a refusal leaves nothing behind).
	Open(ctx context.Context, jobs []agentjobs.Job, conversation explorations.Exploration, maxOpen int) error
	// Take takes the oldest open job of t.Owner sent to t.Agent, or else to
	// anyone, skipping jobs other takers hold locked, and in the same
	// transaction makes the continue link (t.LinkID, t.LinkSHA256) on the
	// job's conversation. That link counts on the conversation's
	// explorations.MaxLiveLinks like any other: a job whose conversation is
	// full is passed over (it stays open), and with t.OnlyJob naming one
	// such job the take is agentjobs.ConversationFull (409); two takes can't
	// both have the last place. Just before committing it calls
	// t.StillThere: an error there takes nothing. nil when no job is open.
	Take(ctx context.Context, t Take) (*agentjobs.Job, error)
	// Delivered records that the take's answer was written.
	Delivered(ctx context.Context, linkID string, at time.Time) error
	// Release puts back as open a job whose take's answer was never written,
	// if that take is still the job's, and revokes its link.
	Release(ctx context.Context, linkID string, at time.Time) error
	// ReleaseUndelivered releases every take never delivered whose process's
	// lease is missing or older than staleAfter, at most limit of them, and
	// answers the owners of the jobs it put back.
	ReleaseUndelivered(ctx context.Context, staleAfter time.Duration, limit int) (owners []string, err error)

	// Job is one job by id, or errs.NotFound.
	Job(ctx context.Context, id string) (agentjobs.Job, error)
	// JobsOf is the jobs handed out from, or worked in, an exploration, the
	// oldest first, at most limit after the job afterID ("" from the first).
	JobsOf(ctx context.Context, exploration, afterID string, limit int) ([]agentjobs.Job, error)
	// TakeOf is the take a worker's link belongs to, or errs.NotFound.
	TakeOf(ctx context.Context, linkID string) (JobTake, error)
	// Touch marks the job of a take alive at at.
	Touch(ctx context.Context, linkID string, at time.Time) error

	// Stop stops owner's open or taken job; its current take ends stopped.
	Stop(ctx context.Context, owner, id string, at time.Time) (agentjobs.Job, error)
	// Reopen puts owner's taken, failed or stopped job back as open, for to
	// ("" for anyone); its current take ends handed_over.
	Reopen(ctx context.Context, owner, id, to string, at time.Time) (agentjobs.Job, error)
	// Report ends a taken job done or failed with its summary, through its
	// current take (linkID) or, with linkID "", as the owner's agent. When the
	// job is a part, groupDone says whether this report ended the group's
	// last part: exactly one report of a group sees it. The job's current
	// take ends reported and its continue link is revoked: the worker's link
	// lives as long as its take.
	Report(ctx context.Context, id, linkID string, status agentjobs.Status, summary string, at time.Time) (job agentjobs.Job, groupDone bool, err error)
	// Group is the parts of a group, in order.
	Group(ctx context.Context, partOf string) ([]agentjobs.Job, error)
}

// Take is one attempt to take a job.
type Take struct {
	Owner, Agent string // Agent in lower case
	Name, Worker string // as the worker says them
	N            int
	LinkID       string
	LinkSHA256   string
	Process      string
	At           time.Time
	StillThere   func() error // nil: always
	OnlyJob      string       // take only this job ("" any)
	Exploration  string       // take only a job handed out from, or worked in, this exploration ("" any)
	// The link the take is made through, checked in the statement that
	// takes, so a link revoked while a wait through it is open takes
	// nothing: an agent link (agent_links, the owner's; revoked:
	// agentjobs.BadAgentLink) or an exploration's link (revoked: the one
	// explorations.NotFound). "" checks none.
	AgentLink, ExplorationLink string
}

// JobTake is a take as stored.
type JobTake struct {
	LinkID    string
	Job       string
	Ended     string // "" while it counts
	Delivered bool
}

// Signals carries "look again" about a topic to every process (a person's
// jobs opened, a conversation changed). Like EventBus it carries names only;
// listeners read the store.
type Signals interface {
	// Listen delivers a value each time topic is signalled, coalesced, and
	// also when signals may have been missed (the bus reconnected), until
	// cancel is called.
	Listen(topic string) (signals <-chan struct{}, cancel func())
	// Signal wakes topic's listeners in every process.
	Signal(ctx context.Context, topic string) error
}
