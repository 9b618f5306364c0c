package agentjobsapp

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
)

// reachOf is who a take_job or report_job call is: an agent link, or a
// continue link of the project (or of the job's own conversation).
func (s *AgentJobsService) reachOf(ctx context.Context, caller toolkit.Caller, agentKey, ref string) (reach, error) {
	switch {
	case agentKey != "":
		return s.byAgentKey(ctx, agentKey)
	case ref != "":
		_, r, err := s.openRef(ctx, caller, ref, explorations.ContinueAccess)
		return r, err
	}
	return reach{}, errs.New(errs.BadInput, "agent_key or exploration is required",
		"send the agent link you were given (agent_key), or the continue link of the job's project (exploration)")
}

func (s *AgentJobsService) takeJob(ctx context.Context, call toolkit.Call, in takeJobInput) (*WaitAnswer, error) {
	r, err := s.reachOf(ctx, call.Caller, in.AgentKey, in.Exploration)
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
	w, err := s.store.Seen(ctx, agentjobs.Worker{Owner: r.owner, Agent: key, Name: strings.TrimSpace(in.As), Worker: in.Worker, Can: in.Can,
		LastSeen: s.now()}, agentjobs.MaxWorkersPerAgent, agentjobs.MaxAgentsPerPerson)
	if err != nil {
		return nil, err
	}
	ans, err := s.take(ctx, r.owner, key, w, "", nil, r)
	if err != nil {
		return nil, err
	}
	if ans == nil {
		return &WaitAnswer{}, nil
	}
	// A tool's answer is written by its door; there is no connection to watch.
	if err := s.store.Delivered(ctx, ans.link, s.now()); err != nil {
		return nil, err
	}
	s.takes.Add(1, "take_job")
	ans.Link = ans.Project.Exploration
	return ans, nil
}

// ReportAnswer is report_job's answer: the job as it ended, and whether
// Petals' agent took the report up at once (a new turn of the run that
// handed it out).
type ReportAnswer struct {
	Job     JobView `json:"job"`
	TakenUp bool    `json:"taken_up"`
}

// maxReportNote is how much of a report a note keeps (notes are shorter than
// reports); list_jobs has the whole of it.
const maxReportNote = explorations.MaxNote - 200

func (s *AgentJobsService) reportJob(ctx context.Context, call toolkit.Call, in reportJobInput) (ReportAnswer, error) {
	r, err := s.reachOf(ctx, call.Caller, in.AgentKey, in.Exploration)
	if err != nil {
		return ReportAnswer{}, err
	}
	if err := agentjobs.CheckReport(in.Summary); err != nil {
		return ReportAnswer{}, err
	}
	if _, err := s.jobFor(ctx, r, in.Job); err != nil {
		return ReportAnswer{}, err
	}
	status := agentjobs.Done
	if in.Status == "failed" {
		status = agentjobs.Failed
	}
	j, groupDone, err := s.store.Report(ctx, in.Job, r.take, status, in.Summary, s.now())
	if err != nil {
		return ReportAnswer{}, err
	}
	who := j.TakenBy
	if j.N > 1 {
		who = fmt.Sprintf("%s %d", j.TakenBy, j.N)
	}
	what := "came back"
	if status == agentjobs.Failed {
		what = "failed"
	}
	note := fmt.Sprintf("(%s) The job %q %s: %s", who, j.Title, what, cutRunes(in.Summary, maxReportNote))
	if j.Parts > 0 {
		note = fmt.Sprintf("(%s) Part %d of %d of the job, %q, %s: %s", who, j.Part, j.Parts, j.Title, what, cutRunes(in.Summary, maxReportNote))
	}
	for i, e := range []string{j.Conversation, j.Exploration} {
		if i == 1 && e == j.Conversation {
			continue
		}
		s.addNote(ctx, e, note)
	}
	s.changed(ctx, j)
	ans := ReportAnswer{Job: jobView(j)}
	if j.Run != "" && (j.PartOf == "" || groupDone) {
		ans.TakenUp = s.takeUp(ctx, j, who, what, in.Summary)
	}
	return ans, nil
}

func (s *AgentJobsService) addNote(ctx context.Context, exploration, text string) {
	id, err := explorations.NewID(s.random, "not_")
	if err == nil {
		err = s.explorations.AddNote(ctx, explorations.Note{ID: id, Exploration: exploration, Text: text, CreatedAt: s.now()})
	}
	if err != nil {
		s.log.WarnContext(ctx, "agent jobs: the report's note", "exploration", exploration, "err", err)
	}
}

// maxTakeUp bounds the message a report starts a turn with.
const maxTakeUp = 24 << 10

// takeUp starts a new turn of the run that handed the job out, with the
// report (or, for parts, all of them) as the person's message; false when
// it waits for the person's next message.
func (s *AgentJobsService) takeUp(ctx context.Context, j agentjobs.Job, who, what, summary string) bool {
	if s.turns == nil {
		return false
	}
	msg := fmt.Sprintf("(Petals) The job %q %s from %s:\n\n%s", j.Title, what, who, summary)
	if j.PartOf != "" {
		parts, err := s.store.Group(ctx, j.PartOf)
		if err != nil {
			s.log.WarnContext(ctx, "agent jobs: reading the parts", "err", err)
			return false
		}
		var b strings.Builder
		fmt.Fprintf(&b, "(Petals) All %d parts of the job came back:\n", len(parts))
		for _, p := range parts {
			fmt.Fprintf(&b, "\n## Part %d of %d: %q, %s by %s\n\n%s\n", p.Part, p.Parts, p.Title, p.Status, p.TakenBy, p.Report)
		}
		msg = b.String()
	}
	if len(msg) > maxTakeUp {
		msg = cutRunes(msg[:maxTakeUp], maxTakeUp/4) + "\n\n(cut: list_jobs has every report whole)"
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	ok, err := s.turns.TakeUpReport(tctx, j.Owner, j.Run, msg)
	if err != nil {
		s.log.WarnContext(ctx, "agent jobs: taking a report up", "run", j.Run, "err", err)
		return false
	}
	return ok
}
