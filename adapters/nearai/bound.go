package nearai

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// Where an input bound came from (ports.WorstCall.Source).
const (
	boundBytes      = "bytes"
	boundPrefix     = "prefix"
	boundOtherHead  = "other_head"
	boundHead       = "head"
	boundDistrusted = "distrusted"
)

// requestShape is a request as its bound sees it on one model: what the
// model reads before the messages (the head: the system message, the
// tools, the effort), and each message after it, with its wire bytes plus
// the chat template's margin (the most tokens it can be) and the name of
// the prefix it ends.
type requestShape struct {
	model     Model
	head      string
	msgBytes  []int64
	prefixes  []string
	byteBound int64
}

// shapeOf is req's shape on m. The chain of prefix names is SHA-256 over
// the previous name and the message's wire bytes: the same messages in the
// same order, byte for byte, have the same name whatever follows.
func shapeOf(m Model, req ports.ModelRequest) requestShape {
	body := wireBody(m, req)
	s := requestShape{model: m, byteBound: inputBound(m, req)}
	msgs := body.Messages
	head := struct {
		System *wireMessage `json:"system"`
		Tools  []wireTool   `json:"tools"`
		Effort string       `json:"effort"`
	}{Tools: body.Tools, Effort: body.ReasoningEffort}
	if len(msgs) > 0 && msgs[0].Role == runs.RoleSystem {
		head.System, msgs = &msgs[0], msgs[1:]
	}
	raw, _ := json.Marshal(head)
	sum := sha256.Sum256(raw)
	s.head = hex.EncodeToString(sum[:])
	var prev [32]byte
	for _, msg := range msgs {
		raw, _ := json.Marshal(msg)
		h := sha256.New()
		h.Write(prev[:])
		h.Write(raw)
		copy(prev[:], h.Sum(nil))
		n := int64(len(raw))
		if m.RawMessages {
			n = textBytes(msg)
		}
		s.msgBytes = append(s.msgBytes, n+promptMargin)
		s.prefixes = append(s.prefixes, hex.EncodeToString(prev[:]))
	}
	return s
}

// textBytes is the text of msg a chat template that writes it as it is
// (Model.RawMessages) reads: its content, its tool calls' ids, names and
// arguments, the id of the call it answers, and for each tool call past
// the message's own margin the template's margin again (its special tokens
// wrap each call). Ids are counted though the templates seen write none: a
// template that does is still bounded.
func textBytes(msg wireMessage) int64 {
	n := len(msg.ToolCallID)
	if msg.Content != nil {
		n += len(*msg.Content)
	}
	for _, tc := range msg.ToolCalls {
		n += len(tc.ID) + len(tc.Function.Name) + len(tc.Function.Arguments) + promptMargin
	}
	return int64(n)
}

// suffixBytes is the most tokens the messages from the k-th on can be.
func (s requestShape) suffixBytes(k int) int64 {
	var n int64
	for _, b := range s.msgBytes[k:] {
		n += b
	}
	return n
}

// bound is the most input tokens the request can be on its model, given
// what the provider counted before, and where it came from. Each
// candidate is a true bound when a chat template tokenizes the head and
// each message apart (its special tokens split them), which every
// catalogue model's does; the least of them is taken, never more than one
// token a byte:
//   - prefix: the count for the same head and the first k messages, plus
//     a byte a token (and the margin) for each message since;
//   - other_head: the count for the first k messages under another head,
//     less the least that head can be (what is left is at most those
//     messages), plus the most this head can be, plus the messages since;
//   - head: the most this head can be, plus every message at a byte a token.
//
// A provider that bills more than a learned bound is caught (Complete),
// and its model held at one token a byte again until an operator looks.
func (s requestShape) bound(k ports.PromptKnown) (int64, string) {
	best, src := s.byteBound, boundBytes
	for _, d := range k.Distrusted {
		if d.Model == s.model.ID {
			return s.byteBound, boundDistrusted
		}
	}
	try := func(n int64, from string) {
		if n >= 0 && n < best {
			best, src = n, from
		}
	}
	var head *ports.PromptHead
	for i := range k.Heads {
		if h := k.Heads[i]; h.Model == s.model.ID && h.Head == s.head {
			head = &k.Heads[i]
		}
	}
	if head != nil {
		try(head.Upper+s.suffixBytes(0), boundHead)
	}
	for _, p := range k.Prefixes {
		c := p.Count
		if c.Model != s.model.ID || c.Messages < 1 || c.Messages > len(s.prefixes) || s.prefixes[c.Messages-1] != c.Prefix {
			continue
		}
		switch {
		case c.Head == s.head:
			try(c.PromptTokens+s.suffixBytes(c.Messages), boundPrefix)
		case head != nil:
			try(head.Upper+(c.PromptTokens-p.Head.Lower)+s.suffixBytes(c.Messages), boundOtherHead)
		}
	}
	return best, src
}

// known reads what the store knows of shapes, in one round trip; without a
// store, or when it fails, nothing is known and the byte bound holds.
func (c *Client) known(ctx context.Context, shapes ...requestShape) ports.PromptKnown {
	if c.opt.Counts == nil {
		return ports.PromptKnown{}
	}
	var models, heads, prefixes []string
	for _, s := range shapes {
		models, heads = append(models, s.model.ID), append(heads, s.head)
		prefixes = append(prefixes, s.prefixes...)
	}
	k, err := c.opt.Counts.Known(ctx, models, heads, prefixes)
	if err != nil {
		c.log.Warn("nearai: reading the kept prompt counts; holding at one token a byte", "err", err)
		c.bounds.Add(1, shapes[0].model.ID, "store_failed")
		return ports.PromptKnown{}
	}
	return k
}

// WorstCallFor implements ports.ModelBounds: WorstCall with each model's
// input bound from what NEAR AI counted before (bound), the fallback left
// out when the request says none may answer.
func (c *Client) WorstCallFor(ctx context.Context, req ports.ModelRequest) ports.WorstCall {
	primary, fallback := c.models(req)
	shapes := []requestShape{shapeOf(primary, req)}
	if fallback != nil {
		shapes = append(shapes, shapeOf(*fallback, req))
	}
	k := c.known(ctx, shapes...)
	in, src := shapes[0].bound(k)
	c.bounds.Add(1, primary.ID, src)
	var fin int64
	if fallback != nil {
		fin, _ = shapes[1].bound(k)
	}
	return c.worstCall(primary, fallback, req, in, fin, src)
}

// models are the model req asks for (priced as NEAR AI lists it now) and
// the fallback that may answer instead (nil: none may).
func (c *Client) models(req ports.ModelRequest) (Model, *Model) {
	primary := c.model
	if m, ok := Find(req.Model); ok {
		primary = m
	}
	primary = c.priced(primary)
	if req.NoFallback || req.FallbackOf != nil || c.fallback.ID == primary.ID {
		return primary, nil
	}
	f := c.priced(c.fallback)
	return primary, &f
}

// worstCall prices a call of in input tokens on primary and, through a
// fallback, the failed attempt plus fin on it. The failed attempt is
// charged at the fallback's input count, never past in (Complete).
func (c *Client) worstCall(primary Model, fallback *Model, req ports.ModelRequest, in, fin int64, src string) ports.WorstCall {
	out := int64(req.MaxTokens)
	if out <= 0 {
		out = 4096
	}
	w := ports.WorstCall{Model: primary.ID, InputTokensMax: in, OutputTokensMax: out, InPerMTok: primary.InputPerMTok,
		OutPerMTok: primary.OutputPerMTok, Bill: primary.Cost(runs.Tokens{In: in, Out: out}), Source: src}
	if f := req.FallbackOf; f != nil {
		// The attempt this call falls back from, at its own input bound
		// (Complete charges it at most that).
		w.Bill += failedInput(*f, f.InputTokensMax)
	}
	if fallback != nil {
		w.FallbackInputTokensMax = fin
		failed := primary.Cost(runs.Tokens{In: in})
		if via := failed + fallback.Cost(runs.Tokens{In: fin, Out: out}); via > w.Bill {
			w.Bill, w.Fallback = via, fallback.ID
		}
	}
	return w
}

// check compares what NEAR AI counted for a call on m with the bound the
// call was held at: past a learned bound it is counted, logged, and m is
// distrusted (held at one token a byte) until an operator looks. Then it
// keeps the count, for the calls that start with the same bytes.
func (c *Client) check(ctx context.Context, s requestShape, held int64, src string, reported int64) {
	if src != boundBytes && src != boundDistrusted && reported > held {
		c.exceeded.Add(1, s.model.ID)
		c.log.Error("nearai: the provider counted more input than the bound held for the call; its model is held at one token a byte until an operator trusts it again",
			"model", s.model.ID, "reported", reported, "bound", held, "source", src, "request_bytes", s.byteBound)
		if c.opt.Counts != nil {
			d := ports.BoundDistrust{Model: s.model.ID, Since: c.now(), Reported: reported, Bound: held, RequestBytes: s.byteBound}
			if err := c.opt.Counts.Distrust(ctx, d); err != nil {
				c.log.Error("nearai: distrusting a model's counts", "model", s.model.ID, "err", err)
			}
		}
	}
	if held > 0 && reported > 0 {
		c.ratio.Observe(float64(held)/float64(reported), s.model.ID, src)
	}
	if c.opt.Counts == nil || len(s.prefixes) == 0 || reported <= 0 || reported > s.byteBound {
		return
	}
	n := len(s.prefixes)
	err := c.opt.Counts.Record(ctx, ports.PromptCount{Model: s.model.ID, Head: s.head, Prefix: s.prefixes[n-1], Messages: n,
		MessageBytes: s.suffixBytes(0), PromptTokens: reported, At: c.now()})
	if err != nil {
		c.log.Warn("nearai: keeping a prompt count", "model", s.model.ID, "err", err)
	}
}
