// Package recorded is the model provider used when there is no model key: it
// replays a recorded conversation whose tool calls run for real, on the
// snapshot that ships inside petal, so a chat works with no key and no network
// and says so in done.model = "recorded".
package recorded

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

//go:embed transcript.json
var transcriptJSON []byte

// Transcript is a recorded conversation: the model's answers in order. A
// string argument "$tool.field" stands for that field of the latest answer of
// that tool in the thread, so the calls chain on what the tools really said.
type Transcript struct {
	Steps     []Step         `json:"steps"`
	FollowUp  string         `json:"follow_up"` // the answer to any later message
	Signature runs.Signature `json:"signature"`
}

// Step is one recorded answer.
type Step struct {
	Content   string         `json:"content"`
	ToolCalls []RecordedCall `json:"tool_calls"`
}

// RecordedCall is one recorded tool call.
type RecordedCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Provider replays the transcript.
type Provider struct {
	t    Transcript
	pace time.Duration
}

var _ ports.ModelProvider = (*Provider)(nil)

// New makes the recorded provider; pace is a pause before each answer, as a
// real model would take (0 for none).
func New(pace time.Duration) *Provider {
	var t Transcript
	if err := json.Unmarshal(transcriptJSON, &t); err != nil {
		panic("recorded: the embedded transcript is not valid: " + err.Error())
	}
	return &Provider{t: t, pace: pace}
}

// Name implements ports.ModelProvider.
func (p *Provider) Name() string { return runs.RecordedModel }

// Models implements ports.ModelProvider: the recorded conversation alone.
func (p *Provider) Models() []ports.ModelOffer { return []ports.ModelOffer{{ID: runs.RecordedModel}} }

// Complete implements ports.ModelProvider.
func (p *Provider) Complete(ctx context.Context, req ports.ModelRequest) (ports.ModelAnswer, error) {
	if p.pace > 0 {
		t := time.NewTimer(p.pace)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ports.ModelAnswer{}, ctx.Err()
		case <-t.C:
		}
	}
	users, lastUser := 0, -1
	for i, m := range req.Messages {
		if m.Role == runs.RoleUser {
			users++
			lastUser = i
		}
	}
	step := 0
	for _, m := range req.Messages[lastUser+1:] {
		if m.Role == runs.RoleAssistant {
			step++
		}
	}
	ans := ports.ModelAnswer{Model: runs.RecordedModel, ChatID: fmt.Sprintf("recorded-%d-%d", users, step)}
	ans.Message.Role = runs.RoleAssistant
	if users > 1 || step >= len(p.t.Steps) || req.Tools == nil {
		ans.Message.Content = p.t.FollowUp
		return ans, nil
	}
	s := p.t.Steps[step]
	ans.Message.Content = s.Content
	for j, c := range s.ToolCalls {
		args, err := resolve(c.Args, req.Messages)
		if err != nil {
			return ans, err
		}
		ans.Message.ToolCalls = append(ans.Message.ToolCalls, runs.ToolCall{ID: fmt.Sprintf("call_rec_%d_%d", step, j), Name: c.Name, Args: args})
	}
	return ans, nil
}

// WorstCase implements ports.ModelProvider: a recorded answer costs nothing.
func (p *Provider) WorstCase(ports.ModelRequest) credit.Micros { return 0 }

// WorstCall implements ports.ModelProvider: nothing, at no price.
func (p *Provider) WorstCall(ports.ModelRequest) ports.WorstCall {
	return ports.WorstCall{Model: runs.RecordedModel}
}

// Sign implements ports.ModelProvider: the recorded conversation's own
// signature, marked as recorded.
func (p *Provider) Sign(_ context.Context, ans ports.ModelAnswer) (*runs.Signature, error) {
	sig := p.t.Signature
	sig.ChatID = ans.ChatID
	sig.Model = runs.RecordedModel
	return &sig, nil
}

// resolve replaces "$tool.field.sub" strings in args by what the latest
// answer of that tool in the thread holds there.
func resolve(args json.RawMessage, thread []runs.Message) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return nil, fmt.Errorf("recorded: step arguments: %w", err)
	}
	var walk func(any) (any, error)
	walk = func(x any) (any, error) {
		switch t := x.(type) {
		case string:
			if !strings.HasPrefix(t, "$") {
				return t, nil
			}
			return lookup(strings.TrimPrefix(t, "$"), thread)
		case map[string]any:
			for k, e := range t {
				r, err := walk(e)
				if err != nil {
					return nil, err
				}
				t[k] = r
			}
		case []any:
			for i, e := range t {
				r, err := walk(e)
				if err != nil {
					return nil, err
				}
				t[i] = r
			}
		}
		return x, nil
	}
	out, err := walk(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

func lookup(ref string, thread []runs.Message) (any, error) {
	path := strings.Split(ref, ".")
	for i := len(thread) - 1; i >= 0; i-- {
		m := thread[i]
		if m.Role != runs.RoleTool || m.Name != path[0] {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(m.Content), &v); err != nil {
			return nil, nil
		}
		for _, key := range path[1:] {
			obj, ok := v.(map[string]any)
			if !ok {
				return nil, nil
			}
			v = obj[key]
		}
		return v, nil
	}
	// The tool never answered (it failed): the call goes out without it and
	// the tool says what is missing.
	return nil, nil
}
