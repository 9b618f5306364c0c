package snapshotsapp

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// find_target on an EVM chain. EVM chains have no directory of tokens or DAOs
// a view call could list (as a Sputnik factory lists its DAOs), so a target
// there is named by its address, and find_target says what the contract is
// by probing it at the finalized block as the readers would read it: an
// ERC-20 by its name, symbol, decimals and totalSupply, ERC20Votes by
// getVotes, a Baal by its sharesToken and lootToken.

// maxEVMProbes bounds the addresses one query probes.
const maxEVMProbes = 3

// delegateWords ask for a token's delegates rather than its holders.
var delegateWords = map[string]bool{"delegate": true, "delegates": true, "delegated": true, "delegation": true, "votes": true, "vote": true, "voting": true, "power": true, "proposals": true, "proposal": true}

// evmChainInQuery is the chain of a CAIP-10 id in the query (eip155:100:0x…), if any.
func evmChainInQuery(q string) (string, bool) {
	for _, w := range strings.Fields(q) {
		w = strings.Trim(w, ",;\"'()")
		if i := strings.LastIndex(w, ":"); i > 0 {
			if id, ok := evm.ChainID(w[:i]); ok {
				if _, err := evm.ParseAddress(w[i+1:]); err == nil {
					return evm.Chain(id), true
				}
			}
		}
	}
	return "", false
}

// evmAddresses are the EVM addresses a query names, in order, each once.
func evmAddresses(q, chain string) []evm.Address {
	var out []evm.Address
	seen := map[evm.Address]bool{}
	for _, w := range strings.Fields(q) {
		w = strings.TrimPrefix(strings.Trim(w, ",;\"'()"), chain+":")
		a, err := evm.ParseAddress(w)
		if err != nil || seen[a] {
			continue
		}
		seen[a] = true
		out = append(out, a)
	}
	return out
}

func (s *SnapshotService) findEVMTarget(ctx context.Context, q, chainParam string, limit int) (FindAnswer, error) {
	id, err := s.EVMChainOf(chainParam)
	if err != nil {
		return FindAnswer{}, err
	}
	chain := evm.Chain(id)
	addrs := evmAddresses(q, chain)
	if len(addrs) == 0 {
		return FindAnswer{}, errs.Newf(errs.BadInput, "on %s (%s) find_target needs the contract's address: EVM chains keep no directory of tokens or DAOs to search by name", chain, evm.ChainName(id)).
			WithHint("give the token's or the Baal's address, 0x and 40 hex digits")
	}
	addrs = addrs[:min(len(addrs), maxEVMProbes)]
	wantDelegates := false
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return r < 'a' || r > 'z' }) {
		wantDelegates = wantDelegates || delegateWords[w]
	}
	reading, err := s.evm.PinEVM(ctx, chain)
	if err != nil {
		return FindAnswer{}, err
	}
	out := FindAnswer{Query: q, Candidates: []Candidate{}}
	add := func(network, title, about string, params any, score float64) {
		raw := marshalParams(params)
		key, _ := snapshots.TargetKey(network, raw)
		out.Candidates = append(out.Candidates, Candidate{Network: network, Params: raw, Title: title, About: about, TargetKey: key, Score: math.Round(score*1000) / 1000})
	}
	var firstErr error
	for _, a := range addrs {
		c, err := ProbeEVM(ctx, reading, a)
		if errs.Is(err, errs.NotFound) || errs.Is(err, errs.CannotRead) {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if err != nil {
			return FindAnswer{}, err
		}
		switch c.Kind {
		case EVMBaal:
			name := a.Hex()
			if c.Token != nil {
				name = c.Token.Label(c.Shares)
			}
			p := baalParams{Chain: chain, DAO: a.Hex()}
			members, proposals := 3.0, 2.5
			if wantDelegates {
				members, proposals = 2.5, 3
			}
			add("evm-baal-members", "Members of "+name, "A Baal (Moloch v3): its members by shares (voting) and loot (non-voting).", p, members)
			add("evm-baal-proposals", "Votes in "+name, "A Baal (Moloch v3): its proposals and who voted how, from its events.", p, proposals)
		default:
			tok := c.Token
			symbol := tok.Label(a)
			p := erc20Params{Chain: chain, Token: a.Hex()}
			holders, delegates := 3.0, 0.0
			if c.Kind == EVMERC20Votes {
				delegates = 2.5
				if wantDelegates {
					holders, delegates = 2.5, 3
				}
			}
			add("evm-erc20-holders", "Holders of "+symbol,
				fmt.Sprintf("%s (%s, %d decimals): its holders from its Transfer logs, weighted by balance.", tok.Name, symbol, tok.Decimals), p, holders)
			if delegates > 0 {
				add("evm-erc20-delegates", "Delegates of "+symbol,
					fmt.Sprintf("%s (%s) is ERC20Votes: its delegates, weighted by the votes delegated to them.", tok.Name, symbol), p, delegates)
			}
		}
	}
	if len(out.Candidates) == 0 {
		return FindAnswer{}, firstErr
	}
	sortCandidates(out.Candidates)
	out.Ambiguous = len(out.Candidates) > 1 && out.Candidates[0].Score-out.Candidates[1].Score < ambiguityMargin
	out.Candidates = out.Candidates[:min(len(out.Candidates), limit)]
	return out, nil
}

// The kinds of contract ProbeEVM knows.
const (
	EVMBaal       = "baal"
	EVMERC20Votes = "erc20_votes"
	EVMERC20      = "erc20"
)

// EVMContract is what ProbeEVM found at an address.
type EVMContract struct {
	// Kind is EVMBaal, EVMERC20Votes or EVMERC20; Probe the view that said
	// so (sharesToken, getVotes, decimals).
	Kind, Probe string
	// Token is the ERC-20's own views; for a Baal its shares token's, nil
	// when that token doesn't answer them.
	Token *evm.Token
	// Shares and Loot are a Baal's two tokens.
	Shares, Loot evm.Address
}

// ProbeEVM says what the contract at a is, at the reading's block, as the
// EVM readers would read it; find_target and look_up both ask it. A Baal
// first (it answers sharesToken and lootToken, no ERC-20 view), then an
// ERC-20 by its name, symbol, decimals and totalSupply, ERC20Votes by
// getVotes. No contract there is not_found, a contract that is neither is
// cannot_read (the token probe's error, saying which view failed).
func ProbeEVM(ctx context.Context, reading ports.EVMReading, a evm.Address) (EVMContract, error) {
	shares, loot, err := reading.BaalTokens(ctx, a)
	if err == nil {
		c := EVMContract{Kind: EVMBaal, Probe: "sharesToken", Shares: shares, Loot: loot}
		if tok, err := reading.Token(ctx, shares); err == nil {
			c.Token = &tok
		} else if !errs.Is(err, errs.CannotRead) && !errs.Is(err, errs.NotFound) {
			return EVMContract{}, err
		}
		return c, nil
	}
	if !errs.Is(err, errs.CannotRead) {
		return EVMContract{}, err // not_found: no contract; else the chain failed
	}
	tok, err := reading.Token(ctx, a)
	if err != nil {
		return EVMContract{}, err
	}
	c := EVMContract{Kind: EVMERC20, Probe: "decimals", Token: &tok}
	if _, err := reading.VotesOf(ctx, a, []evm.Address{{}}); err == nil {
		c.Kind, c.Probe = EVMERC20Votes, "getVotes"
	} else if !errs.Is(err, errs.CannotRead) && !errs.Is(err, errs.NotFound) {
		return EVMContract{}, err
	}
	return c, nil
}
