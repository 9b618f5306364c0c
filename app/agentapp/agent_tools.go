package agentapp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// toolResultMax bounds what one tool result puts in the model's thread.
const toolResultMax = 24 << 10

// runTool runs one tool call through the registry, as the agent's door, and
// stores its call, progress and result.
func (a *AgentService) runTool(ctx context.Context, c *chat, tc runs.ToolCall, ans *ports.ModelAnswer) (refused bool, err error) {
	ctx, span := a.startToolSpan(ctx, tc.Name)
	var toolRefusal *errs.Error
	var toolErr error
	defer func() { endToolSpan(span, toolRefusal, toolErr, err) }()
	args := tc.Args
	if len(args) == 0 || !json.Valid(args) {
		args = json.RawMessage(`{}`)
		tc.Args = args
	}
	if stage, message := runs.ToolStage(tc.Name); stage != "" {
		// run → stage → tool_call → tool_result, as the contract orders them.
		if _, err := a.store.Append(c.wctx, c.run.ID, runs.Make(runs.KindStage, runs.StageData{Stage: stage, Message: message})); err != nil {
			return false, err
		}
	}
	if _, err := a.store.Append(c.wctx, c.run.ID, runs.Make(runs.KindToolCall, runs.ToolCallData{ID: tc.ID, Name: tc.Name, Args: args})); err != nil {
		return false, err
	}
	key, by, refusal, err := a.consent(ctx, c, tc)
	if err != nil {
		return false, err
	}
	if refusal != nil {
		toolRefusal = refusal
		content, _ := json.Marshal(map[string]any{"error": map[string]string{"code": string(refusal.Code), "message": refusal.Message, "hint": refusal.Hint}})
		if _, err := a.store.Append(c.wctx, c.run.ID, runs.Make(runs.KindToolResult, runs.ToolResultData{ID: tc.ID, Name: tc.Name,
			Summary: string(refusal.Code) + ": " + refusal.Message})); err != nil {
			return true, err
		}
		c.thread = append(c.thread, runs.Message{Role: runs.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: string(content)})
		return true, a.store.SaveThread(c.wctx, c.run.ID, c.thread)
	}
	start := time.Now()
	call := toolkit.Call{Input: args, Caller: toolkit.Caller{Door: toolkit.DoorAgent, Address: c.caller.Address, Subject: c.caller.Subject, Session: c.caller.Session, Run: c.run.ID},
		Progress: func(p toolkit.Progress) {
			_, _ = a.store.Append(c.wctx, c.run.ID, runs.Make(runs.KindProgress, runs.ProgressData{Stage: p.Stage, Message: p.Message, Done: p.Done, Total: p.Total}))
		}}
	var out any
	if own := a.own[tc.Name]; own != nil {
		out, err = own.call(ctx, c, args)
	} else {
		out, err = a.registry.Call(ctx, tc.Name, call)
	}
	toolErr = err
	if ctx.Err() != nil {
		// Stopped or out of time: the tool's answer doesn't count.
		return false, ctx.Err()
	}
	c.toolsRun = append(c.toolsRun, tc.Name)
	c.reached(tc.Name)
	ms := time.Since(start).Milliseconds()
	var content []byte
	result := runs.ToolResultData{ID: tc.ID, Name: tc.Name, MS: ms}
	if err != nil {
		c.failed = true
		e, ok := errs.As(err)
		if !ok {
			a.log.Error("agent tool failed", "run", c.run.ID, "tool", tc.Name, "err", err)
			e = errs.New(errs.Internal, "the tool failed on our side")
		}
		result.Summary = string(e.Code) + ": " + e.Message
		content, _ = json.Marshal(map[string]any{"error": map[string]string{"code": string(e.Code), "message": e.Message, "hint": e.Hint}})
	} else {
		content, err = json.Marshal(out)
		if err != nil {
			return false, fmt.Errorf("encode %s's answer: %w", tc.Name, err)
		}
		result.OK = true
		result.Summary = runs.Summarize(content)
		switch tc.Name {
		case "hand_job":
			// The run may have got its exploration just now.
			if r, err := a.store.Get(c.wctx, c.run.ID); err == nil {
				c.run.Exploration = r.Exploration
			}
		case "propose_spec":
			c.proposed = ans
		case "render_flower":
			if f := a.flowerEvent(ctx, c.caller, args); f != nil {
				c.flower = f
				if c.proposed == nil {
					c.proposed = ans
				}
			}
		}
	}
	if _, err := a.store.Append(c.wctx, c.run.ID, runs.Make(runs.KindToolResult, result)); err != nil {
		return false, err
	}
	if result.OK && tc.Name == "render_flower" {
		content = withoutSVG(content)
	}
	if result.OK && tc.Name == "get_snapshot" {
		content = a.withEarlierReading(ctx, content)
	}
	if result.OK {
		content = forModel(content, args)
	}
	if len(content) > toolResultMax {
		content, _ = json.Marshal(map[string]any{"summary": result.Summary, "note": "the full answer was too long to show here"})
	}
	msg := runs.Message{Role: runs.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: string(content)}
	if result.OK && key != "" {
		// What is approved is read back from the thread.
		msg.Approved, msg.ApprovedBy = key, by
	}
	c.thread = append(c.thread, msg)
	return false, a.store.SaveThread(c.wctx, c.run.ID, c.thread)
}

// modelTools is what the model may call: the registry's tools this site
// runs, then the agent's own.
func (a *AgentService) modelTools() []ports.ModelTool {
	out := []ports.ModelTool{} // never nil: nil means "no tools this call"
	for _, t := range a.registry.OfferedToAgent() {
		if t.HiddenFromAgent {
			continue
		}
		out = append(out, ports.ModelTool{Name: t.Name, Description: t.Description, Parameters: t.Input})
	}
	return append(out, a.ownModelTools()...)
}

// withoutSVG is render_flower's answer as the model reads it: the drawing
// goes to the person (the flower event), not back into the thread, where it
// would be 10 KB a round held at a token a byte and read by no one.
func withoutSVG(content []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(content, &m) != nil {
		return content
	}
	svg, ok := m["svg"]
	if !ok {
		return content
	}
	delete(m, "svg")
	m["svg_shown"], _ = json.Marshal(fmt.Sprintf("drawn and shown to the person (%d bytes of SVG, not repeated here)", len(svg)))
	out, err := json.Marshal(m)
	if err != nil {
		return content
	}
	return out
}

// forModel is a tool's answer as the model reads it, with what it can't use
// left out: fields that are null (absent says the same), and top-level
// fields that repeat the call's own argument of that name (the model wrote
// it a message ago: find_target's query, compute_figures' sha256). Each
// byte of a tool result is held as a token on the next call and read on
// every call after; the typical chat's compute_figures answer is 13 %
// shorter (issue 25). Field order is kept; what isn't JSON is kept as is.
func forModel(content []byte, args json.RawMessage) []byte {
	var echo map[string]json.RawMessage
	_ = json.Unmarshal(args, &echo)
	dec := json.NewDecoder(bytes.NewReader(content))
	dec.UseNumber()
	var b bytes.Buffer
	if err := compactTo(&b, dec, echo); err != nil || dec.More() {
		return content
	}
	return b.Bytes()
}

// compactTo copies the next JSON value of dec to b compactly, without the
// null fields of its objects, nor (echo non-nil: the top level) the fields
// equal to echo's of the same name. Strings are written unescaped for HTML:
// the model reads "<", not "\u003c".
func compactTo(b *bytes.Buffer, dec *json.Decoder, echo map[string]json.RawMessage) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			b.WriteByte('[')
			for n := 0; dec.More(); n++ {
				if n > 0 {
					b.WriteByte(',')
				}
				if err := compactTo(b, dec, nil); err != nil {
					return err
				}
			}
			b.WriteByte(']')
		case '{':
			b.WriteByte('{')
			n := 0
			for dec.More() {
				key, err := dec.Token()
				if err != nil {
					return err
				}
				var v bytes.Buffer
				if err := compactTo(&v, dec, nil); err != nil {
					return err
				}
				k, _ := key.(string)
				if v.String() == "null" || (echo != nil && sameJSON(echo[k], v.Bytes())) {
					continue
				}
				if n > 0 {
					b.WriteByte(',')
				}
				writeString(b, k)
				b.WriteByte(':')
				b.Write(v.Bytes())
				n++
			}
			b.WriteByte('}')
		}
		_, err := dec.Token() // the closing delimiter
		return err
	case string:
		writeString(b, t)
	case json.Number:
		b.WriteString(t.String())
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case nil:
		b.WriteString("null")
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}

// sameJSON reports whether an argument's value is v, both compacted.
func sameJSON(arg json.RawMessage, v []byte) bool {
	if len(arg) == 0 {
		return false
	}
	var c bytes.Buffer
	return json.Compact(&c, arg) == nil && bytes.Equal(c.Bytes(), v)
}
