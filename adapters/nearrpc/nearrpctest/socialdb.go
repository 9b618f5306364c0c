package nearrpctest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// SocialDB: the fake serves NEAR Social's contract (social.near,
// v1.social08.testnet) from data a test writes into it with SocialSet, the
// way a signed `set` transaction would, answering `get`, `keys` and
// `get_accounts_paged` view calls in their real wire shape (a call_function
// result of the JSON's bytes). Recordings are not consulted for these
// contracts, and faults apply as to any call.

// SocialContracts are the SocialDB contracts the fake answers for.
var SocialContracts = []string{"social.near", "v1.social08.testnet"}

// socialNode is one key of SocialDB's tree.
type socialNode struct {
	value    *string // a leaf's value; nil for none (or deleted)
	block    uint64  // the block it was last written at
	children map[string]*socialNode
	order    []string // children in the order they were first written
}

func (n *socialNode) child(key string) *socialNode {
	if n.children == nil {
		n.children = map[string]*socialNode{}
	}
	c, ok := n.children[key]
	if !ok {
		c = &socialNode{}
		n.children[key] = c
		n.order = append(n.order, key)
	}
	return c
}

// SocialSet applies a SocialDB `set` as signer sends it: args is the call's
// JSON arguments, { "data": { "<signer>": { … } } }. Like the contract, it
// refuses data under any account but the signer's, and keys outside
// SocialDB's alphabet; a string writes a value, a null deletes one. It
// returns the block the write is at.
func (s *Server) SocialSet(contract, signer string, args []byte) (uint64, error) {
	if !slices.Contains(SocialContracts, contract) {
		return 0, fmt.Errorf("nearrpctest: %s is not a SocialDB contract", contract)
	}
	var call struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&call); err != nil {
		return 0, fmt.Errorf("nearrpctest: set args: %w", err)
	}
	for account := range call.Data {
		if account != signer {
			return 0, fmt.Errorf("nearrpctest: %s can't write under %s", signer, account)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.social == nil {
		s.social = map[string]*socialNode{}
		s.socialBlock = RecordedHeight
	}
	root := s.social[contract]
	if root == nil {
		root = &socialNode{}
		s.social[contract] = root
	}
	s.socialBlock++
	for account, raw := range call.Data {
		if err := setTree(root.child(account), raw, s.socialBlock, 0); err != nil {
			return 0, err
		}
	}
	return s.socialBlock, nil
}

func setTree(n *socialNode, raw json.RawMessage, block uint64, depth int) error {
	if depth > 16 {
		return fmt.Errorf("nearrpctest: set: too deep")
	}
	n.block = block
	switch {
	case string(raw) == "null":
		n.value = nil
		return nil
	case len(raw) > 0 && raw[0] == '"':
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		n.value = &v
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("nearrpctest: set: a value must be a string, null or an object")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if len(k) > 256 || strings.Trim(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != "" {
			return fmt.Errorf("nearrpctest: set: key %q has characters SocialDB refuses", k)
		}
		if err := setTree(n.child(k), m[k], block, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// socialAnswer answers a view call on a SocialDB contract, or ok false when
// the call isn't one (then the recordings answer it). Callers hold mu.
func (s *Server) socialAnswer(params json.RawMessage) (result []byte, ok bool, err error) {
	var p struct {
		RequestType string `json:"request_type"`
		AccountID   string `json:"account_id"`
		MethodName  string `json:"method_name"`
		ArgsBase64  string `json:"args_base64"`
	}
	if json.Unmarshal(params, &p) != nil || p.RequestType != "call_function" || !slices.Contains(SocialContracts, p.AccountID) {
		return nil, false, nil
	}
	args, err := base64.StdEncoding.DecodeString(p.ArgsBase64)
	if err != nil {
		return nil, true, err
	}
	root := s.social[p.AccountID]
	if root == nil {
		root = &socialNode{}
	}
	switch p.MethodName {
	case "get", "keys":
		var a struct {
			Keys    []string `json:"keys"`
			Options struct {
				ReturnType    string `json:"return_type"`
				ReturnDeleted bool   `json:"return_deleted"`
			} `json:"options"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, true, err
		}
		out := map[string]any{}
		for _, k := range a.Keys {
			matchTree(root, strings.Split(k, "/"), out, p.MethodName == "keys", a.Options.ReturnType)
		}
		b, err := json.Marshal(out)
		return b, true, err
	case "get_accounts_paged":
		var a struct {
			FromIndex int `json:"from_index"`
			Limit     int `json:"limit"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, true, err
		}
		accounts := []string{}
		for i := a.FromIndex; i < len(root.order) && len(accounts) < a.Limit; i++ {
			accounts = append(accounts, root.order[i])
		}
		b, err := json.Marshal(accounts)
		return b, true, err
	}
	return nil, true, fmt.Errorf("SocialDB has no view method %s", p.MethodName)
}

// matchTree adds to out what the pattern's parts match under n, as SocialDB
// answers: get gives leaves' values (a node's own value under ""), keys
// gives true, or the block height with return_type BlockHeight. "*" matches
// one level, "**" everything below.
func matchTree(n *socialNode, parts []string, out map[string]any, keys bool, returnType string) {
	if len(parts) == 0 {
		return
	}
	part, rest := parts[0], parts[1:]
	names := []string{part}
	if part == "*" || part == "**" {
		names = n.order
	}
	for _, name := range names {
		c := n.children[name]
		if c == nil {
			continue
		}
		switch {
		case part == "**":
			if sub := wholeTree(c, keys, returnType); sub != nil {
				out[name] = sub
			}
		case len(rest) == 0:
			if v := leafAnswer(c, keys, returnType); v != nil {
				out[name] = v
			}
		default:
			sub, _ := out[name].(map[string]any)
			if sub == nil {
				sub = map[string]any{}
			}
			matchTree(c, rest, sub, keys, returnType)
			if len(sub) > 0 {
				out[name] = sub
			}
		}
	}
}

func leafAnswer(n *socialNode, keys bool, returnType string) any {
	if keys {
		if n.value == nil && len(n.children) == 0 {
			return nil
		}
		if returnType == "BlockHeight" {
			return n.block
		}
		return true
	}
	if n.value == nil {
		return nil
	}
	if len(n.children) > 0 {
		return map[string]any{"": *n.value}
	}
	return *n.value
}

func wholeTree(n *socialNode, keys bool, returnType string) any {
	if len(n.children) == 0 {
		return leafAnswer(n, keys, returnType)
	}
	out := map[string]any{}
	if n.value != nil && !keys {
		out[""] = *n.value
	}
	for _, k := range n.order {
		if v := wholeTree(n.children[k], keys, returnType); v != nil {
			out[k] = v
		}
	}
	return out
}

// callResultAnswer is a node's answer to a call_function: the result's
// bytes as numbers.
func callResultAnswer(id json.RawMessage, result []byte) []byte {
	values := make([]int, len(result))
	for i, b := range result {
		values[i] = int(b)
	}
	if len(id) == 0 {
		id = json.RawMessage(`"dontcare"`)
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": map[string]any{
		"result": values, "logs": []string{}, "block_height": RecordedHeight, "block_hash": RecordedHash,
	}})
	return out
}
