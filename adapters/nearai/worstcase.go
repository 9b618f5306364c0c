package nearai

import (
	"encoding/json"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/ports"
)

// WorstCase implements ports.ModelProvider: the input counted at one token
// per byte of the request petal sends (what byte-level tokenizers make of rare
// scripts, and more than any makes of anything: a token is at least one
// byte), uncached, plus max_tokens of output, on the model the request asks
// for; and when a fallback may answer instead, the failed attempt's input on
// that model plus the fallback's whole call, as Complete charges it. The
// larger of the two is the worst case.
func (c *Client) WorstCase(req ports.ModelRequest) credit.Micros {
	return c.WorstCall(req).Bill
}

// WorstCall implements ports.ModelProvider: WorstCase, and how it comes
// about, at one token a byte (WorstCallFor uses what NEAR AI counted).
func (c *Client) WorstCall(req ports.ModelRequest) ports.WorstCall {
	primary, fallback := c.models(req)
	var fin int64
	if fallback != nil {
		fin = inputBound(*fallback, req)
	}
	return c.worstCall(primary, fallback, req, inputBound(primary, req), fin, boundBytes)
}

// promptMargin is what a model's chat template may add per message and per
// tool beyond the request's own bytes (role markers, separators).
const promptMargin = 16

// inputBound is the most input tokens req can be on m: one per byte of the
// request body, plus the template's margin per message and per tool. A body
// that cannot be encoded (it never happens: it is built from strings) counts
// as its messages' bytes.
func inputBound(m Model, req ports.ModelRequest) int64 {
	n := int64(promptMargin * (len(req.Messages) + len(req.Tools) + 1))
	if raw, err := json.Marshal(wireBody(m, req)); err == nil {
		return n + int64(len(raw))
	}
	for _, msg := range req.Messages {
		n += int64(len(msg.Content))
		for _, tc := range msg.ToolCalls {
			n += int64(len(tc.Name) + len(tc.Args))
		}
	}
	for _, t := range req.Tools {
		n += int64(len(t.Name) + len(t.Description) + len(t.Parameters))
	}
	return n
}
