package agentapp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/annotationsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/claims"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
)

// ToolAnnotate is Petals' agent's own tool: it keeps what the person tells
// it, or what it found, about accounts in the conversation's project
// (through add_annotation, the person's account as by and Petals' agent as
// via). One per run. Kept in the same message as the agent's answer, it ends
// the turn at no model call of its own; one not kept goes back to the model.
const ToolAnnotate = "annotate"

// maxAnnotateClaims bounds one annotate call: a turn's worth of notes.
const maxAnnotateClaims = 20

type annotateInput struct {
	Annotations []claims.Input `json:"annotations" jsonschema:"1 to 20 claims about accounts (claim/v2 without id and by): ‘this is Dekan's wallet’ is { subject, verb: named, object: { value: Dekan }, kind: stated }"`
}

func (annotateInput) RefineSchema(s *jsonschema.Schema) {
	a := toolkit.Property(s, "annotations")
	a.MinItems, a.MaxItems = jsonschema.Ptr(1), jsonschema.Ptr(maxAnnotateClaims)
	annotationsapp.RefineClaimInput(a.Items)
}

// annotateTool is the agent's annotate, outside the registry: no other door
// has a conversation to keep it in.
var annotateTool = toolkit.WithInput(toolkit.Tool{
	Name: ToolAnnotate,
	Description: "Keep what the person tells you about accounts (named: their name for an account; noted: a note), or what you found, " +
		"privately in this conversation's project, once per conversation. Their petals then carry the names they gave. " +
		"Call it in the same message as your answer.",
}, func(context.Context, toolkit.Call, annotateInput) (any, error) { return nil, nil })

// annotated reports whether the run has kept an annotate call already (read
// back from its thread, so it holds across chats and restarts).
func annotated(thread []runs.Message) bool {
	for _, m := range thread {
		if m.Role == runs.RoleTool && m.Name == ToolAnnotate && !strings.HasPrefix(m.Content, `{"error"`) {
			return true
		}
	}
	return false
}

// annotateOwnTool is annotate among the agent's own tools: its events and
// its tool message as any tool's; kept beside words, it ends the turn.
func (a *AgentService) annotateOwnTool() *ownTool {
	return rawOwnTool(annotateTool, true, a.keepAnnotations)
}

// keepAnnotations checks one annotate call and keeps its claims in the run's
// project (made now if the run has none) through add_annotation.
func (a *AgentService) keepAnnotations(ctx context.Context, c *chat, args json.RawMessage) (any, error) {
	if annotated(c.thread) {
		return nil, errs.New(errs.BadInput, "this conversation has kept its annotations already: annotate runs once per conversation",
			"say what you would have kept in words instead")
	}
	var in annotateInput
	if err := toolkit.DecodeInput(args, &in); err != nil {
		return nil, err
	}
	if n := len(in.Annotations); n == 0 || n > maxAnnotateClaims {
		return nil, errs.Newf(errs.BadInput, "annotations must hold 1 to %d claims, not %d", maxAnnotateClaims, n)
	}
	exploration, err := a.runExploration(c)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(map[string]any{"exploration": exploration, "annotations": in.Annotations})
	if err != nil {
		return nil, err
	}
	caller := toolkit.Caller{Door: toolkit.DoorAgent, Address: c.caller.Address, Subject: c.run.Owner}
	if c.run.Owner == c.caller.Subject {
		caller.Session = c.caller.Session // the person's wallet answers for what they said
	}
	return a.registry.Call(c.wctx, "add_annotation", toolkit.Call{Input: body, Caller: caller})
}
