package snapshotsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
)

// near-ft-balances: one fungible token's balances across a list of accounts
// or the accounts of another snapshot.

var ftBalancesReader = Reader{
	ID: "near-ft-balances", Title: "Fungible token balances", Chain: snapshots.Mainnet,
	Reads: "One fungible token's balances (ft_metadata, ft_balance_of) across the accounts of another snapshot or a list of up to 1,000 accounts, in the token's own units.",
	Params: json.RawMessage(`{"type":"object","properties":{"token":{"type":"string","description":"the token's contract, such as usdt.tether-token.near"},` +
		`"accounts":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":1000,"description":"the accounts to read, as NEAR account ids or CAIP-10 ids"},` +
		`"snapshot":{"type":"string","pattern":"^[0-9a-f]{64}$","description":"read the accounts of this snapshot instead (its top 1,000 by weight)"},` +
		chainProperty + `},"required":["token"],"additionalProperties":false}`),
	prepare: prepareFT,
}

// MaxFTAccounts bounds the accounts one token reading reads.
const MaxFTAccounts = 1000

type ftParams struct {
	Token    string   `json:"token"`
	Accounts []string `json:"accounts,omitempty"`
	Snapshot string   `json:"snapshot,omitempty"`
	Chain    string   `json:"chain"`
}

func prepareFT(svc *SnapshotService, raw json.RawMessage) (*target, error) {
	var p ftParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	chain, err := ChainOf(p.Chain)
	if err != nil {
		return nil, err
	}
	p.Chain = chain
	if strings.TrimSpace(p.Token) == "" {
		return nil, errs.New(errs.BadInput, "params.token is required: the token's contract, such as usdt.tether-token.near")
	}
	if p.Token, err = accountParam("token", chain, p.Token); err != nil {
		return nil, err
	}
	switch {
	case (len(p.Accounts) > 0) == (p.Snapshot != ""):
		return nil, errs.New(errs.BadInput, "params: give either accounts (a list of up to 1,000) or snapshot (a snapshot's sha256), not both or neither")
	case len(p.Accounts) > MaxFTAccounts:
		return nil, errs.Newf(errs.BadInput, "params.accounts holds %d accounts; at most %d", len(p.Accounts), MaxFTAccounts)
	case p.Snapshot != "":
		if err := CheckSHA256("params.snapshot", p.Snapshot); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	var accounts []string
	for i, a := range p.Accounts {
		id, err := accountParam(fmt.Sprintf("accounts[%d]", i), chain, a)
		if err != nil {
			return nil, err
		}
		if !seen[id] {
			seen[id] = true
			accounts = append(accounts, id)
		}
	}
	// The same set of accounts in any order is the same target.
	sort.Strings(accounts)
	p.Accounts = accounts
	params := marshalParams(p)
	return &target{network: "near-ft-balances", chain: chain, params: params, read: func(ctx context.Context, rc *readContext) (snapshots.Snapshot, error) {
		return readFT(ctx, rc, svc, p, params)
	}}, nil
}

// ftProgressEvery is how many balances go between two progress reports.
const ftProgressEvery = 50

func readFT(ctx context.Context, rc *readContext, svc *SnapshotService, p ftParams, params json.RawMessage) (snapshots.Snapshot, error) {
	accounts := p.Accounts
	var cut *snapshots.Cut
	from := "the given accounts"
	if p.Snapshot != "" {
		rc.say("accounts", "reading the accounts of snapshot "+p.Snapshot[:12], nil, nil)
		// Through the library, as every other reader of a stored snapshot:
		// its byte-bounded cache, and a large body decoded in its turn.
		loaded, err := svc.library.Load(ctx, p.Snapshot)
		if err != nil {
			return snapshots.Snapshot{}, err
		}
		// The cached snapshot is shared: KeepTop cuts a copy of its accounts.
		other := *loaded.Snapshot
		other.Accounts = slices.Clone(other.Accounts)
		if other.Chain != rc.network {
			return snapshots.Snapshot{}, errs.Newf(errs.BadInput, "params.snapshot is a reading of %s, not %s", other.Chain, rc.network)
		}
		total := len(other.Accounts)
		snapshots.KeepTop(&other, MaxFTAccounts)
		if total > MaxFTAccounts {
			cut = &snapshots.Cut{Total: total, Kept: MaxFTAccounts}
		}
		for _, a := range other.Accounts {
			accounts = append(accounts, strings.TrimPrefix(a.ID, rc.network+":"))
		}
		from = "the accounts of \"" + other.Title + "\""
	}
	tally, symbol, err := rc.tokenBalances(ctx, p.Token, accounts)
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	s := rc.reading("near-ft-balances", params, symbol+" balances",
		fmt.Sprintf("How much %s (%s) each of %s holds, in whole tokens.", symbol, p.Token, from), tally)
	if cut != nil {
		// The snapshot read was cut to its top accounts; say so.
		detail, _ := json.Marshal(map[string]any{"accounts_from": p.Snapshot, "accounts_cut": cut})
		s.Detail = detail
	}
	return s, nil
}

// tokenBalances reads token's metadata and the balances of accounts at the
// pinned block, with progress, and tallies them; symbol is the token's, or
// its account when it names none.
func (rc *readContext) tokenBalances(ctx context.Context, tokenAccount string, accounts []string) (tally snapshots.Tally, symbol string, err error) {
	rc.say("token", "reading "+tokenAccount+"'s metadata", nil, nil)
	token, err := rc.near.Token(ctx, tokenAccount)
	if err != nil {
		return snapshots.Tally{}, "", err
	}
	symbol = token.Symbol
	if symbol == "" {
		symbol = tokenAccount
	}
	amounts, err := rc.near.Balances(ctx, tokenAccount, accounts, func(read, total int) {
		switch {
		case read == 0:
			rc.say("balances", fmt.Sprintf("reading %d balances", total), intp(0), intp(total))
		case read%ftProgressEvery == 0 || read == total:
			rc.say("balances", fmt.Sprintf("read %d of %d balances", read, total), intp(read), intp(total))
		}
	})
	if err != nil {
		return snapshots.Tally{}, "", err
	}
	tally, err = snapshots.TallyBalances(rc.network, accounts, amounts, token, symbol)
	if err != nil {
		return snapshots.Tally{}, "", errs.Newf(errs.CannotRead, "%s gave a balance petal can't read", tokenAccount).WithCause(err)
	}
	return tally, symbol, nil
}
