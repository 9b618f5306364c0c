package nearrpctest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/petal-near/petal/domain/canon"
)

// The block every recorded call_function answer says it was read at; the
// `block` recording (testdata/block_final.json) names the same one.
const (
	RecordedHeight = 131000000
	RecordedHash   = "4kbcD3NeZ7Gf8VQ5cFmLQAk1VtUTXK6wzCZnhZqK1nUj"
	RecordedTime   = "2026-11-01T12:00:00Z"
)

// Source is the readable form of a call_function recording.
type Source struct {
	Contract string          `json:"contract"`
	Method   string          `json:"method"`
	Args     json.RawMessage `json:"args"`
	Result   json.RawMessage `json:"result,omitempty"`
	// ResultBytes is a method's answer that isn't JSON (Borsh, raw bytes),
	// base64 in the source file.
	ResultBytes []byte          `json:"result_base64,omitempty"`
	ResultError string          `json:"result_error,omitempty"`
	RPCError    json.RawMessage `json:"rpc_error,omitempty"`
}

// FromSource builds the wire-shaped recording of a call_function exchange:
// the request a client sends, and the node's answer with the method's JSON
// result as an array of byte values (or the failure the source names).
func FromSource(s Source) (Recording, error) {
	args := []byte("{}")
	if len(s.Args) > 0 {
		c, err := canon.Transform(s.Args)
		if err != nil {
			return Recording{}, fmt.Errorf("args: %w", err)
		}
		args = c
	}
	params, err := json.Marshal(map[string]any{
		"request_type": "call_function",
		"finality":     "final",
		"account_id":   s.Contract,
		"method_name":  s.Method,
		"args_base64":  base64.StdEncoding.EncodeToString(args),
	})
	if err != nil {
		return Recording{}, err
	}
	var response any
	switch {
	case len(s.RPCError) > 0:
		response = map[string]any{"jsonrpc": "2.0", "error": s.RPCError, "id": "dontcare"}
	case s.ResultError != "":
		response = map[string]any{"jsonrpc": "2.0", "id": "dontcare", "result": map[string]any{
			"error": s.ResultError, "logs": []string{}, "block_height": RecordedHeight, "block_hash": RecordedHash,
		}}
	case s.ResultBytes != nil:
		values := make([]int, len(s.ResultBytes))
		for i, b := range s.ResultBytes {
			values[i] = int(b)
		}
		response = map[string]any{"jsonrpc": "2.0", "id": "dontcare", "result": map[string]any{
			"result": values, "logs": []string{}, "block_height": RecordedHeight, "block_hash": RecordedHash,
		}}
	default:
		// Contracts answer compact JSON (near-sdk uses serde_json::to_vec).
		var compact bytes.Buffer
		if err := json.Compact(&compact, s.Result); err != nil {
			return Recording{}, fmt.Errorf("result: %w", err)
		}
		values := make([]int, compact.Len())
		for i, b := range compact.Bytes() {
			values[i] = int(b)
		}
		response = map[string]any{"jsonrpc": "2.0", "id": "dontcare", "result": map[string]any{
			"result": values, "logs": []string{}, "block_height": RecordedHeight, "block_hash": RecordedHash,
		}}
	}
	resp, err := json.Marshal(response)
	if err != nil {
		return Recording{}, err
	}
	return Recording{Method: "query", Params: params, Response: resp}, nil
}

// Encode writes a recording as its testdata file holds it.
func Encode(r Recording) ([]byte, error) {
	b, err := json.MarshalIndent(struct {
		Method   string          `json:"method"`
		Params   json.RawMessage `json:"params"`
		Response json.RawMessage `json:"response"`
		Status   int             `json:"status,omitempty"`
	}{r.Method, r.Params, r.Response, r.Status}, "", "  ")
	if err != nil {
		return nil, err
	}
	// Keep byte arrays on one line, as a node's compact answer would be.
	b = numberArray.ReplaceAllFunc(b, func(m []byte) []byte { return spaces.ReplaceAll(m, nil) })
	return append(b, '\n'), nil
}

var (
	numberArray = regexp.MustCompile(`\[\s*(\d+,\s*)*\d+\s*\]`)
	spaces      = regexp.MustCompile(`\s+`)
)
