package agentapp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/petal-near/petal/app/publishapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/runs"
)

// keepFlower keeps the chat's flower in the run's exploration: made at the
// run's first flower, under the run's owner, and each new flower a step
// saved through the registry (door agent). A failure here costs the run
// nothing: it is logged.
func (a *AgentService) keepFlower(c *chat) {
	ctx := c.wctx
	caller := toolkit.Caller{Door: toolkit.DoorAgent, Address: c.caller.Address, Subject: c.run.Owner}
	if _, err := a.runExploration(c); err != nil {
		a.log.Warn("agent: the run's exploration could not be made", "run", c.run.ID, "err", err)
		return
	}
	var f struct {
		Spec           json.RawMessage `json:"spec"`
		Interpretation string          `json:"interpretation"`
	}
	_ = json.Unmarshal(c.flower, &f)
	in, _ := json.Marshal(map[string]any{"exploration": c.run.Exploration, "spec": f.Spec, "note": f.Interpretation})
	if _, err := a.registry.Call(ctx, "save_step", toolkit.Call{Input: in, Caller: caller}); err != nil {
		a.log.Warn("agent: the flower could not be saved as a step", "run", c.run.ID, "err", err)
	}
}

// runExploration is the run's project: its exploration, made now under the
// run's owner (titled by the first thing the person said) if it has none.
func (a *AgentService) runExploration(c *chat) (string, error) {
	if c.run.Exploration != "" {
		return c.run.Exploration, nil
	}
	ctx := c.wctx
	question := "Petals' agent"
	for _, m := range c.thread {
		if m.Role == runs.RoleUser && strings.TrimSpace(m.Content) != "" {
			question = strings.TrimSpace(m.Content)
			break
		}
	}
	if r := []rune(question); len(r) > 280 {
		question = string(r[:279]) + "…"
	}
	in, _ := json.Marshal(map[string]string{"question": question})
	out, err := a.registry.Call(ctx, "start_exploration", toolkit.Call{Input: in, Caller: toolkit.Caller{Door: toolkit.DoorAgent, Address: c.caller.Address, Subject: c.run.Owner}})
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(out)
	var made struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(b, &made) != nil || made.ID == "" {
		return "", errs.New(errs.Internal, "the run's exploration could not be made")
	}
	if err := a.store.SetExploration(ctx, c.run.ID, made.ID); err != nil {
		return "", err
	}
	c.run.Exploration = made.ID
	return made.ID, nil
}

// flowerEvent is the flower event's data for a render_flower call that
// succeeded: the spec drawn, its hashes, legend, interpretation and validation.
// For a signed-in person it also carries prepare, what prepare_publish
// answers for the spec (the record and the SocialDB set their own wallet
// would sign): offered, never sent.
func (a *AgentService) flowerEvent(ctx context.Context, caller toolkit.Caller, args json.RawMessage) json.RawMessage {
	subject := caller.Subject
	var in struct {
		Spec json.RawMessage `json:"spec"`
		View json.RawMessage `json:"view"`
	}
	if json.Unmarshal(args, &in) != nil || a.flowers == nil {
		return nil
	}
	// Drawn as render_flower drew it: through the person's view unless the
	// call gave its own.
	view, err := a.flowers.ViewFor(ctx, subject, in.View)
	if err != nil {
		return nil
	}
	f, err := a.flowers.Flower(ctx, subject, in.Spec, view)
	if err != nil {
		return nil
	}
	if people.IsPerson(subject) && !f.Demo {
		f.Prepare = a.preparePublish(ctx, caller, f.Spec)
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil
	}
	return b
}

// preparePublish is prepare_publish for the flower's spec, called as the
// person through the agent's door; nil when it can't be prepared (no wallet,
// a public site), which leaves the flower as it was.
func (a *AgentService) preparePublish(ctx context.Context, caller toolkit.Caller, spec any) json.RawMessage {
	in, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return nil
	}
	out, err := a.registry.Call(ctx, publishapp.ToolPreparePublish, toolkit.Call{Input: in,
		Caller: toolkit.Caller{Door: toolkit.DoorAgent, Address: caller.Address, Subject: caller.Subject, Session: caller.Session}})
	if err != nil {
		a.log.Debug("agent: the flower could not be prepared for publishing", "err", err)
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}
