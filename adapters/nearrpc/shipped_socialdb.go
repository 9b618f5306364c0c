package nearrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// ShippedSocialDB answers SocialDB's reads from copies of its answers that
// ship inside petal (a public site's map, docs/map.md "Public mode"): each
// file a `get` answer exactly in SocialDB's wire shape, { "<account>": {
// "petal": { "flower": { "<id>": "<record>" } } } }, under a folder named by
// its network (mainnet/, testnet/). It never reads the chain.
type ShippedSocialDB struct {
	values map[string][]ports.SocialValue // by network, in path order
}

var _ ports.SocialDB = (*ShippedSocialDB)(nil)

// shippedHeight is the block every shipped value says it was written at:
// the copies carry no block of their own.
const shippedHeight = 1

// NewShippedSocialDB reads every *.json file under mainnet/ and testnet/ of
// files; a file not in SocialDB's shape is an error.
func NewShippedSocialDB(files fs.FS) (*ShippedSocialDB, error) {
	s := &ShippedSocialDB{values: map[string][]ports.SocialValue{}}
	for dir, network := range map[string]string{"mainnet": "near:mainnet", "testnet": "near:testnet"} {
		names, err := fs.Glob(files, dir+"/*.json")
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			b, err := fs.ReadFile(files, name)
			if err != nil {
				return nil, err
			}
			err = walkTree(b, func(p string, leaf json.RawMessage) error {
				var v string
				if string(leaf) == "null" {
					return nil
				}
				if err := json.Unmarshal(leaf, &v); err != nil {
					return fmt.Errorf("%s is not a string", p)
				}
				s.values[network] = append(s.values[network], ports.SocialValue{Path: p, Value: v})
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("shipped SocialDB answer %s: %w", name, err)
			}
		}
		slices.SortFunc(s.values[network], func(a, b ports.SocialValue) int { return strings.Compare(a.Path, b.Path) })
	}
	return s, nil
}

// matches reports whether a value's path is under a pattern: * matches one
// key, ** everything below.
func matches(pattern, p string) bool {
	ps, keys := strings.Split(pattern, "/"), strings.Split(p, "/")
	for i, part := range ps {
		if part == "**" {
			return true
		}
		if i >= len(keys) || (part != "*" && part != keys[i]) {
			return false
		}
	}
	return len(ps) == len(keys)
}

func (s *ShippedSocialDB) matching(chain string, patterns []string, each func(ports.SocialValue)) error {
	vals, ok := s.values[chain]
	if !ok && chain != "near:mainnet" && chain != "near:testnet" {
		return errs.Newf(errs.BadInput, "network must be near:mainnet or near:testnet, not %q", chain)
	}
	for _, v := range vals {
		for _, pat := range patterns {
			if matches(pat, v.Path) {
				each(v)
				break
			}
		}
	}
	return nil
}

// Get implements ports.SocialDB.
func (s *ShippedSocialDB) Get(_ context.Context, chain string, keys []string, maxBytes int) ([]ports.SocialValue, error) {
	var out []ports.SocialValue
	size := 0
	err := s.matching(chain, keys, func(v ports.SocialValue) {
		size += len(v.Path) + len(v.Value)
		out = append(out, v)
	})
	if err == nil && size > maxBytes {
		return nil, errs.Newf(errs.CannotRead, "SocialDB's answer to get is %d bytes, more than the %d petal reads", size, maxBytes)
	}
	return out, err
}

// Keys implements ports.SocialDB.
func (s *ShippedSocialDB) Keys(_ context.Context, chain string, patterns []string, _ int) ([]ports.SocialKey, error) {
	var out []ports.SocialKey
	err := s.matching(chain, patterns, func(v ports.SocialValue) {
		out = append(out, ports.SocialKey{Path: v.Path, BlockHeight: shippedHeight})
	})
	return out, err
}

// Accounts implements ports.SocialDB: the accounts the copies hold, in order.
func (s *ShippedSocialDB) Accounts(_ context.Context, chain string, fromIndex, limit int) ([]string, error) {
	var accounts []string
	for _, v := range s.values[chain] {
		a, _, _ := strings.Cut(v.Path, "/")
		if len(accounts) == 0 || accounts[len(accounts)-1] != a {
			accounts = append(accounts, a)
		}
	}
	if fromIndex >= len(accounts) {
		return []string{}, nil
	}
	return accounts[fromIndex:min(fromIndex+limit, len(accounts))], nil
}
