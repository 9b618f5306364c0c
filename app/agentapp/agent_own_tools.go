package agentapp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/conversations"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// ownTool is a tool of Petals' agent alone: offered to its model beside the
// registry's and run inside the chat, where it reaches the run (its name, its
// log). It is never a door's: HTTP, MCP and /skill.md don't have it. Its
// input is declared as a struct, as a registry tool's is, and checked the
// same way.
type ownTool struct {
	tool  toolkit.Tool // name, description and input schema
	input *toolkit.InputValidator
	// endsTurn: a round whose only calls are tools that end the turn, with
	// words beside them, ends the chat once they all succeed, at no model
	// call of their own (the contract's name_conversation).
	endsTurn bool
	run      func(ctx context.Context, c *chat, input json.RawMessage) (any, error)
}

// newOwnTool is t taking In, run with the chat.
func newOwnTool[In any](t toolkit.Tool, endsTurn bool, run func(ctx context.Context, c *chat, in In) (any, error)) *ownTool {
	schema, err := toolkit.InputSchema[In]()
	if err != nil {
		panic(fmt.Sprintf("app: agent tool %s: %v", t.Name, err)) // a programming error, found at start-up
	}
	t.Input = schema
	v, err := toolkit.CompileInput(t.Name, schema)
	if err != nil {
		panic("app: agent " + err.Error())
	}
	return &ownTool{tool: t, input: v, endsTurn: endsTurn, run: func(ctx context.Context, c *chat, raw json.RawMessage) (any, error) {
		var in In
		if err := toolkit.DecodeInput(raw, &in); err != nil {
			return nil, err
		}
		return run(ctx, c, in)
	}}
}

// rawOwnTool is t (made with WithInput, for its schema) run with the chat on
// its raw input, which run decodes itself.
func rawOwnTool(t toolkit.Tool, endsTurn bool, run func(ctx context.Context, c *chat, input json.RawMessage) (any, error)) *ownTool {
	v, err := toolkit.CompileInput(t.Name, t.Input)
	if err != nil {
		panic("app: agent " + err.Error())
	}
	t.Run = nil
	return &ownTool{tool: t, input: v, endsTurn: endsTurn, run: run}
}

// call checks the input against the tool's schema, then runs it.
func (t *ownTool) call(ctx context.Context, c *chat, input json.RawMessage) (any, error) {
	if err := t.input.Check(input); err != nil {
		return nil, err
	}
	return t.run(ctx, c, input)
}

// ownTools are the agent's own tools, by name.
func (a *AgentService) ownTools() map[string]*ownTool {
	tools := map[string]*ownTool{}
	for _, t := range []*ownTool{a.nameConversationTool(), a.annotateOwnTool(), a.moreToolsTool()} {
		tools[t.tool.Name] = t
	}
	return tools
}

// endsTheTurn reports whether an answer's round ends the chat once its calls
// succeed: words for the person, and nothing asked but tools that end the
// turn.
func (a *AgentService) endsTheTurn(msg runs.Message) bool {
	if msg.Content == "" || len(msg.ToolCalls) == 0 {
		return false
	}
	for _, tc := range msg.ToolCalls {
		if t := a.own[tc.Name]; t == nil || !t.endsTurn {
			return false
		}
	}
	return true
}

// ownModelTools is the agent's own tools as its model is offered them, by name.
func (a *AgentService) ownModelTools() []ports.ModelTool {
	out := make([]ports.ModelTool, 0, len(a.own))
	for _, name := range slices.Sorted(maps.Keys(a.own)) {
		t := a.own[name].tool
		out = append(out, ports.ModelTool{Name: t.Name, Description: t.Description, Parameters: t.Input})
	}
	return out
}

// nameConversationInput is name_conversation's input.
type nameConversationInput struct {
	Title string `json:"title" jsonschema:"the conversation's name: a few plain words saying what it is about"`
}

func (nameConversationInput) RefineSchema(s *jsonschema.Schema) {
	title := toolkit.Property(s, "title")
	title.MinLength, title.MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(conversations.MaxTitle)
}

// nameConversationTool names or renames the conversation: kept on the run,
// told in the title event, and listed by GET /api/v1/conversations.
func (a *AgentService) nameConversationTool() *ownTool {
	return newOwnTool(toolkit.Tool{
		Name: "name_conversation",
		Description: fmt.Sprintf("Name this conversation, or rename it when its subject changes: a few plain words, at most %d characters. "+
			"Call it in the same message as your answer; naming costs no model call of its own.", conversations.MaxTitle),
	}, true, func(ctx context.Context, c *chat, in nameConversationInput) (any, error) {
		title, err := conversations.CleanTitle("title", in.Title)
		if err != nil {
			return nil, err
		}
		if err := a.store.SetTitle(c.wctx, c.run.ID, title); err != nil {
			return nil, err
		}
		if _, err := a.store.Append(c.wctx, c.run.ID, runs.Make(runs.KindTitle, runs.TitleData{Title: title})); err != nil {
			return nil, err
		}
		c.run.Title = title
		return map[string]string{"title": title}, nil
	})
}

// OwnTools is the agent's own tools as declared (name, description, input),
// by name: what its model is offered beside the registry's.
func (a *AgentService) OwnTools() []toolkit.Tool {
	out := make([]toolkit.Tool, 0, len(a.own))
	for _, name := range slices.Sorted(maps.Keys(a.own)) {
		out = append(out, a.own[name].tool)
	}
	return out
}
