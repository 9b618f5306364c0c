package nearrpc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

var _ ports.NearViews = (*Client)(nil)

// viewCallResult is a call_function answer read in full: the method's bytes
// (as the node sends them, an array of byte values), its logs and block.
type viewCallResult struct {
	Result      []uint16 `json:"result"`
	Logs        []string `json:"logs"`
	BlockHeight uint64   `json:"block_height"`
	BlockHash   string   `json:"block_hash"`
}

// View calls any contract's view method at the final block (read_chain).
// args are the method's argument bytes, usually JSON (nil sends {}). The
// answer is at most max bytes: a node sends each byte as a number of up to
// three digits and a comma, so at most 4·max bytes of result (and 256 KiB of
// logs and envelope) are read off the wire; more is cannot_read.
func (c *Client) View(ctx context.Context, chain, contract, method string, args []byte, max int) (ports.NearView, error) {
	if len(args) == 0 {
		args = []byte("{}")
	}
	params := map[string]any{
		"request_type": "call_function",
		"finality":     "final",
		"account_id":   contract,
		"method_name":  method,
		"args_base64":  base64.StdEncoding.EncodeToString(args),
	}
	var raw json.RawMessage
	if err := c.callLimited(ctx, chain, "query", params, &raw, int64(max)*4+256<<10); err != nil {
		if ce, ok := errors.AsType[*ports.ChainError](err); ok && ce.Cause == "TOO_LARGE" {
			return ports.NearView{}, tooLarge(int64(max))
		}
		return ports.NearView{}, err
	}
	if err := resultError(raw); err != nil {
		return ports.NearView{}, err
	}
	var r viewCallResult
	if err := json.Unmarshal(raw, &r); err != nil || r.Result == nil {
		return ports.NearView{}, sourceFailed(fmt.Errorf("call_function result: %v", err), "BAD_ANSWER", "the chain's RPC gave an answer petal can't read")
	}
	if len(r.Result) > max {
		return ports.NearView{}, tooLarge(int64(max))
	}
	out := make([]byte, len(r.Result))
	for i, v := range r.Result {
		if v > 255 {
			return ports.NearView{}, sourceFailed(fmt.Errorf("byte %d out of range", v), "BAD_ANSWER", "the chain's RPC gave an answer petal can't read")
		}
		out[i] = byte(v)
	}
	return ports.NearView{Result: out, Logs: r.Logs, BlockHeight: r.BlockHeight, BlockHash: r.BlockHash}, nil
}

// tooLarge is an answer past what the caller reads: the chain answered, so
// it is not the source failing, and asking again won't help.
func tooLarge(limit int64) *errs.Error {
	return chainErr(errs.CannotRead, "TOO_LARGE", fmt.Sprintf("the chain's answer is larger than %d bytes", limit), "answer too large").
		WithHint("ask for less: most contracts page their lists (from_index and limit)")
}
