package agentjobsapp

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/runs"
)

// JobView is a job as list_jobs, the supervision routes and hand_job answer.
type JobView struct {
	ID           string          `json:"id"`
	Exploration  string          `json:"exploration"`
	Conversation string          `json:"conversation"`
	Kind         string          `json:"kind"`
	Title        string          `json:"title"`
	Brief        string          `json:"brief"`
	Inputs       json.RawMessage `json:"inputs"`
	Status       string          `json:"status"`
	To           *string         `json:"to"`
	TakenBy      *string         `json:"taken_by"`
	N            *int            `json:"n"`
	PartOf       *string         `json:"part_of"`
	Part         int             `json:"part,omitempty"`
	Parts        int             `json:"parts,omitempty"`
	Report       *string         `json:"report"`
	CreatedAt    time.Time       `json:"created_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
	LastSeen     *time.Time      `json:"last_seen"`
}

// RefineSchema: the states a job is in.
func (JobView) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "status").Enum = []any{"open", "taken", "done", "failed", "stopped"}
}

// JobList is hand_job's answer: the jobs it opened.
type JobList struct {
	Jobs []JobView `json:"jobs"`
}

// JobPage is list_jobs' answer.
type JobPage struct {
	Jobs       []JobView `json:"jobs"`
	NextCursor *string   `json:"next_cursor"`
}

func jobView(j agentjobs.Job) JobView {
	v := JobView{ID: j.ID, Exploration: j.Exploration, Conversation: j.Conversation, Kind: j.Kind, Title: j.Title, Brief: j.Brief,
		Inputs: json.RawMessage("null"), Status: string(j.Status), Part: j.Part, Parts: j.Parts, CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt,
		LastSeen: j.LastSeen}
	if j.Inputs != nil {
		v.Inputs = j.Inputs
	}
	if j.To != "" {
		v.To = &j.To
	}
	if j.TakenBy != "" {
		v.TakenBy, v.N = &j.TakenBy, &j.N
	}
	if j.PartOf != "" {
		v.PartOf = &j.PartOf
	}
	if j.Report != "" {
		v.Report = &j.Report
	}
	return v
}

// JobEventData is the job event's data (additive): a job handed out.
type JobEventData struct {
	ID           string  `json:"id"`
	Exploration  string  `json:"exploration"`
	Conversation string  `json:"conversation"`
	Kind         string  `json:"kind"`
	Title        string  `json:"title"`
	Brief        string  `json:"brief"`
	Status       string  `json:"status"`
	To           *string `json:"to"`
	TakenBy      *string `json:"taken_by"`
	PartOf       *string `json:"part_of"`
}

// The job tools' inputs.
type (
	jobPart struct {
		Title  string          `json:"title" jsonschema:"the part's title"`
		Brief  string          `json:"brief" jsonschema:"what this part asks, in full: its taker sees nothing else"`
		Inputs json.RawMessage `json:"inputs,omitempty" jsonschema:"any JSON the part needs (addresses, networks)"`
		To     string          `json:"to,omitempty" jsonschema:"the agent it is for, by name; anyone when absent"`
	}
	handJobInput struct {
		Title  string          `json:"title" jsonschema:"a short title: the job's conversation is named by it"`
		Brief  string          `json:"brief" jsonschema:"what the person's agent is to do, in full: its taker sees nothing else"`
		Inputs json.RawMessage `json:"inputs,omitempty" jsonschema:"any JSON the job needs (addresses, networks)"`
		To     string          `json:"to,omitempty" jsonschema:"the agent it is for, by name (one of the agents connected); anyone when absent"`
		Parts  []jobPart       `json:"parts,omitempty" jsonschema:"two or more parts for different agents, each a job of its own; they come back together"`
	}
	listJobsInput struct {
		Exploration string `json:"exploration,omitempty" jsonschema:"the conversation's exploration id, or a link; Petals' agent's own when absent"`
		Cursor      string `json:"cursor,omitempty" jsonschema:"the next_cursor of the page before"`
		Limit       int    `json:"limit,omitempty" jsonschema:"how many, from 1 to 100 (50)"`
	}
	retryJobInput struct {
		Job string `json:"job" jsonschema:"the job's id"`
		To  string `json:"to,omitempty" jsonschema:"the agent to send it to; anyone when absent"`
	}
	stopJobInput struct {
		Job string `json:"job" jsonschema:"the job's id"`
	}
	takeJobInput struct {
		AgentKey    string  `json:"agent_key,omitempty" jsonschema:"the person's agent link (petal_agent_…); or give exploration"`
		Exploration string  `json:"exploration,omitempty" jsonschema:"a continue link of the project whose jobs to take"`
		As          string  `json:"as" jsonschema:"your agent's name, such as Codex"`
		Worker      string  `json:"worker,omitempty" jsonschema:"which of your windows or sub-agents: 1 to 32 letters, digits, - or _"`
		Can         *string `json:"can,omitempty" jsonschema:"what you can do, in your own words"`
	}
	reportJobInput struct {
		Job         string `json:"job" jsonschema:"the job's id"`
		Status      string `json:"status" jsonschema:"done, or failed"`
		Summary     string `json:"summary" jsonschema:"what you did and found, or why it failed"`
		Exploration string `json:"exploration,omitempty" jsonschema:"the continue link you got with the job (or the project's); or give agent_key"`
		AgentKey    string `json:"agent_key,omitempty" jsonschema:"the person's agent link (petal_agent_…)"`
	}
)

func (handJobInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "title").MaxLength = jsonschema.Ptr(agentjobs.MaxTitle)
	toolkit.Property(s, "brief").MaxLength = jsonschema.Ptr(agentjobs.MaxBrief)
	parts := toolkit.Property(s, "parts")
	parts.MinItems, parts.MaxItems = jsonschema.Ptr(agentjobs.MinParts), jsonschema.Ptr(agentjobs.MaxParts)
}

func (listJobsInput) RefineSchema(s *jsonschema.Schema) {
	limit := toolkit.Property(s, "limit")
	limit.Minimum, limit.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(100.0)
}

func (reportJobInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "status").Enum = []any{"done", "failed"}
	toolkit.Property(s, "summary").MaxLength = jsonschema.Ptr(agentjobs.MaxReport)
}

// Tools implements ToolSet.
func (s *AgentJobsService) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{Name: "hand_job", AgentOnly: true,
			Description: "Hand a job to the person's own agent (Claude Code, Codex…), which does it on their machine: one job, for the agent named in to or anyone, " +
				"or parts (two or more) for different agents. Each job gets its own conversation; its report comes back to this one.",
		}, s.handJob),
		toolkit.WithIO(toolkit.Tool{Name: "list_jobs",
			Description: "The jobs handed out from a conversation, or worked in it: each one's status, who took it, when it was last seen and its report.",
		}, s.listJobs),
		toolkit.WithIO(toolkit.Tool{Name: "retry_job", AgentOnly: true,
			Description: "Send a taken, failed or stopped job of this conversation again, to the agent named in to or to anyone; its old worker is told to stop.",
		}, s.retryJob),
		toolkit.WithIO(toolkit.Tool{Name: "stop_job", AgentOnly: true,
			Description: "Stop an open or taken job of this conversation; its worker is told to stop at its next call.",
		}, s.stopJob),
		toolkit.WithIO(toolkit.Tool{Name: "take_job", HiddenFromAgent: true, // the person's own agent's
			Description: "Take an open job of the person's, now, without waiting: with agent_key (their agent link) any of theirs, with a project's continue link one of that project's. " +
				"Answers the job and a continue link to work through, or { job: null }.",
		}, s.takeJob),
		toolkit.WithIO(toolkit.Tool{Name: "report_job", HiddenFromAgent: true,
			Description: "Report a job you took: done with what you found, or failed with why. It lands as a note in the job's conversation and the one that handed it out.",
		}, s.reportJob),
	}
}

// agentRun is the run of Petals' agent calling, owned by a person.
func (s *AgentJobsService) agentRun(ctx context.Context, call toolkit.Call) (runs.Run, string, error) {
	owner, err := person(call.Caller)
	if err != nil {
		return runs.Run{}, "", errs.New(errs.Unauthorised, "jobs go to the person's own agents, and this person isn't signed in",
			"ask them to sign in and connect an agent (Connect your agent)")
	}
	run, err := s.runs.Get(ctx, call.Caller.Run)
	if err != nil {
		return runs.Run{}, "", err
	}
	return run, owner, nil
}

func cutRunes(s string, n int) string {
	if r := []rune(strings.TrimSpace(s)); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return strings.TrimSpace(s)
}

func (s *AgentJobsService) handJob(ctx context.Context, call toolkit.Call, in handJobInput) (JobList, error) {
	run, owner, err := s.agentRun(ctx, call)
	if err != nil {
		return JobList{}, err
	}
	if err := agentjobs.CheckJob("", in.Title, in.Brief, in.Inputs); err != nil {
		return JobList{}, err
	}
	if err := checkTo("to", in.To); err != nil {
		return JobList{}, err
	}
	for i, p := range in.Parts {
		field := "parts[" + strconv.Itoa(i) + "]."
		if err := agentjobs.CheckJob(field, p.Title, p.Brief, p.Inputs); err != nil {
			return JobList{}, err
		}
		if err := checkTo(field+"to", p.To); err != nil {
			return JobList{}, err
		}
	}
	now := s.now()
	if run.Exploration == "" {
		id, err := explorations.NewID(s.random, explorations.IDPrefix)
		if err != nil {
			return JobList{}, err
		}
		e := explorations.Exploration{ID: id, Owner: owner, Question: cutRunes(in.Title, explorations.MaxQuestion), CreatedAt: now, UpdatedAt: now}
		if err := s.explorations.CreateExploration(ctx, e); err != nil {
			return JobList{}, err
		}
		if err := s.runs.SetExploration(ctx, run.ID, id); err != nil {
			return JobList{}, err
		}
		run.Exploration = id
	}
	convID, err := explorations.NewID(s.random, explorations.IDPrefix)
	if err != nil {
		return JobList{}, err
	}
	conv := explorations.Exploration{ID: convID, Owner: owner, Question: cutRunes(in.Brief, explorations.MaxQuestion),
		Title: cutRunes(in.Title, explorations.MaxTitle), CreatedAt: now, UpdatedAt: now}
	base := agentjobs.Job{Owner: owner, Run: run.ID, Exploration: run.Exploration, Conversation: convID, Kind: "map", Status: agentjobs.Open, CreatedAt: now}
	var jobs []agentjobs.Job
	if len(in.Parts) == 0 {
		j := base
		j.Title, j.Brief, j.Inputs, j.To = strings.TrimSpace(in.Title), in.Brief, in.Inputs, agentjobs.AgentKey(in.To)
		if j.ID, err = explorations.NewID(s.random, "job_"); err != nil {
			return JobList{}, err
		}
		jobs = append(jobs, j)
	} else {
		group, err := explorations.NewID(s.random, "job_")
		if err != nil {
			return JobList{}, err
		}
		for i, p := range in.Parts {
			j := base
			j.Title, j.Brief, j.Inputs, j.To = strings.TrimSpace(p.Title), p.Brief, p.Inputs, agentjobs.AgentKey(p.To)
			j.PartOf, j.Part, j.Parts = group, i+1, len(in.Parts)
			j.CreatedAt = now.Add(time.Duration(i) * time.Microsecond) // taken in their order
			if j.ID, err = explorations.NewID(s.random, "job_"); err != nil {
				return JobList{}, err
			}
			jobs = append(jobs, j)
		}
	}
	if err := s.store.Open(ctx, jobs, conv, agentjobs.MaxOpenPerPerson); err != nil {
		return JobList{}, err
	}
	out := make([]JobView, 0, len(jobs))
	events := make([]runs.NewEvent, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, jobView(j))
		d := JobEventData{ID: j.ID, Exploration: j.Exploration, Conversation: j.Conversation, Kind: j.Kind, Title: j.Title, Brief: j.Brief,
			Status: string(j.Status)}
		if j.To != "" {
			d.To = &j.To
		}
		if j.PartOf != "" {
			d.PartOf = &j.PartOf
		}
		events = append(events, runs.Make(runs.KindJob, d))
	}
	if _, err := s.runs.Append(ctx, run.ID, events...); err != nil {
		s.log.WarnContext(ctx, "agent jobs: the job events", "run", run.ID, "err", err)
	}
	s.opened(ctx, jobs[0])
	return JobList{out}, nil
}

func (s *AgentJobsService) listJobs(ctx context.Context, call toolkit.Call, in listJobsInput) (JobPage, error) {
	limit := in.Limit
	if limit == 0 {
		limit = 50
	}
	var exp string
	var owner string
	if in.Exploration == "" {
		if call.Caller.Door != toolkit.DoorAgent || call.Caller.Run == "" {
			return JobPage{}, errs.New(errs.BadInput, "exploration is required", "name the conversation's exploration, by id or link")
		}
		run, o, err := s.agentRun(ctx, call)
		if err != nil {
			return JobPage{}, err
		}
		exp, owner = run.Exploration, o
		if exp == "" {
			return JobPage{[]JobView{}, nil}, nil
		}
	} else {
		_, r, err := s.openRef(ctx, call.Caller, in.Exploration, explorations.ReadAccess)
		if err != nil {
			return JobPage{}, err
		}
		exp, owner = r.exp, r.owner
	}
	if in.Cursor != "" {
		if j, err := s.store.Job(ctx, in.Cursor); err != nil || j.Owner != owner {
			return JobPage{}, errs.New(errs.BadInput, "cursor is not a cursor of this list", "pass next_cursor back as it came")
		}
	}
	jobs, err := s.store.JobsOf(ctx, exp, in.Cursor, limit+1)
	if err != nil {
		return JobPage{}, err
	}
	var next *string
	if len(jobs) > limit {
		jobs = jobs[:limit]
		next = &jobs[limit-1].ID
	}
	out := make([]JobView, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, jobView(j))
	}
	return JobPage{out, next}, nil
}
