package nearrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/ports"
)

// SocialDB's view methods (NEAR Social's social-db contract): get and keys
// take { keys: [paths], options? } and answer the matching tree, its top
// level keyed by account; get_accounts_paged pages through its accounts.

var _ ports.SocialDB = (*Client)(nil)

// maxTreeDepth bounds how deep an answer's tree may go: a SocialDB path is a
// handful of keys, never hundreds.
const maxTreeDepth = 32

// wireLimit is how many bytes of the node's answer hold maxBytes of a view
// method's result: each result byte travels as a number and a comma.
func wireLimit(maxBytes int) int64 { return 4*int64(maxBytes) + 64<<10 }

func socialContract(chain string) (string, error) {
	c, ok := published.SocialDBContract(chain)
	if !ok {
		return "", errs.Newf(errs.BadInput, "network must be near:mainnet or near:testnet, not %q", chain)
	}
	return c, nil
}

func (c *Client) socialView(ctx context.Context, chain, method string, args any, maxBytes int) ([]byte, error) {
	contract, err := socialContract(chain)
	if err != nil {
		return nil, err
	}
	b, err := c.callFunction(ctx, chain, 0, contract, method, args, wireLimit(maxBytes))
	if err != nil {
		return nil, err
	}
	if len(b) > maxBytes {
		return nil, errs.Newf(errs.CannotRead, "SocialDB's answer to %s is %d bytes, more than the %d petal reads", method, len(b), maxBytes)
	}
	return b, nil
}

// Get implements ports.SocialDB.
func (c *Client) Get(ctx context.Context, chain string, keys []string, maxBytes int) ([]ports.SocialValue, error) {
	b, err := c.socialView(ctx, chain, "get", map[string]any{"keys": keys}, maxBytes)
	if err != nil {
		return nil, err
	}
	var out []ports.SocialValue
	err = walkTree(b, func(path string, leaf json.RawMessage) error {
		var v string
		switch {
		case string(leaf) == "null": // deleted
			return nil
		case json.Unmarshal(leaf, &v) != nil:
			return fmt.Errorf("%s is not a string", path)
		}
		out = append(out, ports.SocialValue{Path: path, Value: v})
		return nil
	})
	if err != nil {
		return nil, unreadable("get", err)
	}
	slices.SortFunc(out, func(a, b ports.SocialValue) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// Keys implements ports.SocialDB.
func (c *Client) Keys(ctx context.Context, chain string, patterns []string, maxBytes int) ([]ports.SocialKey, error) {
	b, err := c.socialView(ctx, chain, "keys", map[string]any{"keys": patterns, "options": map[string]any{"return_type": "BlockHeight"}}, maxBytes)
	if err != nil {
		return nil, err
	}
	var out []ports.SocialKey
	err = walkTree(b, func(path string, leaf json.RawMessage) error {
		var h uint64
		if string(leaf) == "null" {
			return nil
		}
		if err := json.Unmarshal(leaf, &h); err != nil {
			return fmt.Errorf("%s is not a block height", path)
		}
		out = append(out, ports.SocialKey{Path: path, BlockHeight: h})
		return nil
	})
	if err != nil {
		return nil, unreadable("keys", err)
	}
	slices.SortFunc(out, func(a, b ports.SocialKey) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// Accounts implements ports.SocialDB. Versions of the contract answer either
// account ids or [account id, account] pairs; only the ids are read.
func (c *Client) Accounts(ctx context.Context, chain string, fromIndex, limit int) ([]string, error) {
	b, err := c.socialView(ctx, chain, "get_accounts_paged", pageArgs(fromIndex, limit), 4<<20)
	if err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, unreadable("get_accounts_paged", err)
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		var id string
		if json.Unmarshal(it, &id) != nil {
			var pair []json.RawMessage
			if json.Unmarshal(it, &pair) != nil || len(pair) == 0 || json.Unmarshal(pair[0], &id) != nil {
				return nil, unreadable("get_accounts_paged", errors.New("an item is neither an account id nor a pair"))
			}
		}
		out = append(out, id)
	}
	return out, nil
}

func unreadable(method string, err error) error {
	return errs.Newf(errs.CannotRead, "SocialDB answered %s with something petal can't read", method).WithCause(err)
}

// walkTree calls leaf for every leaf of a SocialDB answer (nested objects
// whose leaves are values) with its path, keys joined by "/"; a node's own
// value, kept under the empty key, is the node's path. It streams the
// tokens: no part of the answer is decoded into maps.
func walkTree(b []byte, leaf func(path string, value json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errors.New("the answer is not an object")
	}
	if err := walkObject(dec, nil, leaf); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the answer")
	}
	return nil
}

func walkObject(dec *json.Decoder, path []string, leaf func(string, json.RawMessage) error) error {
	if len(path) > maxTreeDepth {
		return errors.New("the tree is too deep")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("a key is not a string")
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return err
		}
		sub := path
		if key != "" {
			sub = append(slices.Clip(path), key)
		}
		if len(value) > 0 && value[0] == '{' {
			inner := json.NewDecoder(bytes.NewReader(value))
			_, _ = inner.Token() // {
			if err := walkObject(inner, sub, leaf); err != nil {
				return err
			}
			continue
		}
		if len(value) > 0 && value[0] == '[' {
			return fmt.Errorf("%s is an array", strings.Join(sub, "/"))
		}
		if err := leaf(strings.Join(sub, "/"), value); err != nil {
			return err
		}
	}
	_, err := dec.Token() // }
	return err
}
