package agentapp

import (
	"context"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
)

// TakeUpReport implements ReportTurns: a new turn of the person's run with
// message as theirs, paid from their own credit. It answers false, and
// the report waits for the person's next message, when the run is going,
// the person has no credit for it, or this site runs no agent.
func (a *AgentService) TakeUpReport(ctx context.Context, owner, runID, message string) (bool, error) {
	if a.cfg.Public || a.fenced.Load() || a.Recorded() {
		// No model here (a recorded site replays its demo): the report waits.
		return false, nil
	}
	run, err := a.store.Get(ctx, runID)
	if err != nil {
		return false, err
	}
	if run.Owner != owner || run.Status == runs.Running {
		return false, nil
	}
	thread := append(run.Thread, runs.Message{Role: runs.RoleUser, Content: message})
	if runs.ThreadBytes(thread) > runs.MaxThread {
		return false, nil
	}
	var payer *credit.Payer
	if !a.Recorded() {
		if a.access == nil {
			return false, nil
		}
		p, err := a.access.PersonPayer(ctx, owner, a.leastFirstCall(ctx, run, thread))
		if errs.Is(err, errs.PaymentRequired) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		payer = forChat(&p, run.ID, run.NextSeq)
	}
	resumed, err := a.store.Resume(ctx, run.ID, string(a.process), thread, a.openingEvents(run.ID)...)
	if errs.Is(err, errs.Conflict) {
		return false, nil // a chat started meanwhile: the report waits
	}
	if err != nil {
		return false, err
	}
	a.start(resumed, toolkit.Caller{Door: toolkit.DoorAgent, Address: "agent-report", Subject: owner}, payer)
	return true, nil
}
