package snapshots

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/errs"
)

// Problem is one thing wrong with a snapshot, located by a JSON path.
type Problem = errs.Problem

// Bounds on a snapshot's texts, so a stored reading stays readable.
const (
	MaxTitle  = 200
	MaxAbout  = 2000
	MaxLabel  = 200
	MaxGroups = 1000
	// maxProblems keeps an answer about a broken 100,000-account file short.
	maxProblems = 20
)

var (
	networkID = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
	// CAIP-2 chain id and CAIP-10 account address, as the CAIP specs define them.
	caip2       = regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`)
	caip10Addr  = regexp.MustCompile(`^[-.%a-zA-Z0-9]{1,128}$`)
	groupID     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)
	decimalText = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]+)?$`)
	// nearAccount is NEAR's account id rule (nearcore's validation).
	nearAccount = regexp.MustCompile(`^(([a-z\d]+[\-_])*[a-z\d]+\.)*([a-z\d]+[\-_])*[a-z\d]+$`)
)

// NEAR chains.
const (
	Mainnet = "near:mainnet"
	Testnet = "near:testnet"
)

// ValidNearAccount reports whether id is a valid NEAR account id.
func ValidNearAccount(id string) bool {
	return len(id) >= 2 && len(id) <= 64 && nearAccount.MatchString(id)
}

// AccountID is an account's CAIP-10 id on chain: near:mainnet:alice.near.
func AccountID(chain, account string) string { return chain + ":" + account }

// IsDecimal reports whether w is an exact non-negative decimal as snapshots
// write weights: no sign, no exponent, no leading zeros.
func IsDecimal(w string) bool { return len(w) <= 100 && decimalText.MatchString(w) }

// Validate checks a snapshot against snapshot/v1 and the rules a schema can't
// say: account ids on the snapshot's chain, unique ids, groups that exist,
// at most MaxAccounts accounts. It returns at most a few problems, the first
// ones found.
func Validate(s Snapshot) []Problem {
	var ps []Problem
	add := func(path, format string, args ...any) bool {
		if len(ps) < maxProblems {
			ps = append(ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
		}
		return len(ps) < maxProblems
	}
	if s.Schema != Schema {
		add("/schema", "must be %q", Schema)
	}
	if !networkID.MatchString(s.Network) {
		add("/network", "must be a reader id such as near-dao-members (lower-case letters, digits, -)")
	}
	if p := strings.TrimSpace(string(s.Params)); p == "" || p[0] != '{' {
		add("/params", "must be a JSON object")
	}
	if !caip2.MatchString(s.Chain) {
		add("/chain", "must be a CAIP-2 chain id such as near:mainnet")
	}
	if s.Block.Hash == "" || len(s.Block.Hash) > 128 {
		add("/block/hash", "must be the block's hash")
	}
	if _, err := time.Parse(time.RFC3339Nano, s.Block.Time); err != nil {
		add("/block/time", "must be an RFC 3339 time such as 2026-11-30T00:00:00Z")
	}
	if strings.TrimSpace(s.Title) == "" || len([]rune(s.Title)) > MaxTitle {
		add("/title", "must be a title of 1 to %d characters", MaxTitle)
	}
	if len([]rune(s.About)) > MaxAbout {
		add("/about", "must be at most %d characters", MaxAbout)
	}
	if s.Groups == nil {
		add("/groups", "must be an array (it may be empty)")
	}
	if len(s.Groups) > MaxGroups {
		add("/groups", "holds %d groups; at most %d", len(s.Groups), MaxGroups)
	}
	groups := make(map[string]bool, len(s.Groups))
	for i, g := range s.Groups {
		path := fmt.Sprintf("/groups/%d", i)
		if !groupID.MatchString(g.ID) {
			add(path+"/id", "must be 1 to 64 letters, digits, _ . : or -, starting with a letter or digit")
		} else if groups[g.ID] {
			add(path+"/id", "group %q is listed twice", g.ID)
		}
		groups[g.ID] = true
		if len([]rune(g.Label)) > MaxLabel {
			add(path+"/label", "must be at most %d characters", MaxLabel)
		}
	}
	if s.Accounts == nil {
		add("/accounts", "must be an array (it may be empty)")
	}
	if len(s.Accounts) > MaxAccounts {
		add("/accounts", "holds %d accounts; a snapshot holds at most %d", len(s.Accounts), MaxAccounts)
		return ps
	}
	prefix := s.Chain + ":"
	near := s.Chain == Mainnet || s.Chain == Testnet
	seen := make(map[string]bool, len(s.Accounts))
	for i, a := range s.Accounts {
		path := fmt.Sprintf("/accounts/%d", i)
		addr, onChain := strings.CutPrefix(a.ID, prefix)
		switch {
		case !onChain:
			if !add(path+"/id", "must be a CAIP-10 id on %s, such as %salice.near", s.Chain, prefix) {
				return ps
			}
		case near && !ValidNearAccount(addr):
			if !add(path+"/id", "%q is not a valid NEAR account id", addr) {
				return ps
			}
		case !near && !caip10Addr.MatchString(addr):
			if !add(path+"/id", "%q is not a valid CAIP-10 account address", addr) {
				return ps
			}
		case seen[a.ID]:
			if !add(path+"/id", "%s is listed twice", a.ID) {
				return ps
			}
		}
		seen[a.ID] = true
		if !IsDecimal(a.Weight) {
			if !add(path+"/weight", "must be an exact non-negative decimal string such as \"12.5\", never a float") {
				return ps
			}
		}
		if len([]rune(a.Label)) > MaxLabel {
			add(path+"/label", "must be at most %d characters", MaxLabel)
		}
		if a.Groups == nil {
			add(path+"/groups", "must be an array (it may be empty)")
		}
		if len(a.Attrs) > 0 && !nonEmptyObject(a.Attrs) {
			add(path+"/attrs", "must be a non-empty JSON object when present")
		}
		for j, g := range a.Groups {
			if !groups[g] {
				if !add(fmt.Sprintf("%s/groups/%d", path, j), "group %q is not in /groups", g) {
					return ps
				}
			}
		}
	}
	for i, c := range s.Source.Calls {
		if c.Contract == "" || c.Method == "" {
			add(fmt.Sprintf("/source/calls/%d", i), "a call names its contract and method")
		}
	}
	if len(s.Detail) > 0 && !nonEmptyObject(s.Detail) {
		add("/detail", "must be a non-empty JSON object when present")
	}
	if s.Source.Calls == nil {
		add("/source/calls", "must be an array of the contract calls that made the reading")
	}
	if s.Source.Cut != nil && (s.Source.Cut.Kept != len(s.Accounts) || s.Source.Cut.Total < s.Source.Cut.Kept) {
		add("/source/cut", "kept must equal the number of accounts and total must be at least kept")
	}
	return ps
}

// nonEmptyObject reports whether raw is a JSON object with at least one
// member, looking only at its first bytes: whether the rest is JSON is for
// the decoder and the canonical form to say, and a stranger's 16 MiB detail
// is never decoded into maps to find out.
func nonEmptyObject(raw json.RawMessage) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	t = bytes.TrimLeft(t[1:], " \t\r\n")
	return len(t) > 0 && t[0] == '"'
}

// SumWeights adds decimal weights exactly.
func SumWeights(ws ...string) (*big.Rat, error) {
	total := new(big.Rat)
	for _, w := range ws {
		r, ok := new(big.Rat).SetString(w)
		if !ok || !IsDecimal(w) {
			return nil, fmt.Errorf("weight %q is not a decimal", w)
		}
		total.Add(total, r)
	}
	return total, nil
}

func asErr[T error](err error, target *T) bool { return errors.As(err, target) }
