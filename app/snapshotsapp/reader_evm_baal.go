package snapshotsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/domain/snapshots"
)

// evm-baal-members and evm-baal-proposals: a Baal (Moloch v3, DAOhaus) on an
// EVM chain, by its own address. Its members are the holders of its two
// tokens (shares vote, loot doesn't), each read as evm-erc20-holders reads a
// token and checked alike; its proposals and votes come from its events.

const evmDAOProperty = `"dao":{"type":"string","pattern":"^(eip155:[1-9][0-9]*:)?0[xX][0-9a-fA-F]{40}$","description":"the Baal's own contract address (0x and 40 hex digits), or its CAIP-10 id"}`

var baalMembersReader = Reader{
	ID: "evm-baal-members", Title: "Baal DAO members", Chain: "eip155:100",
	Reads: "A Baal's (Moloch v3, DAOhaus) members on an EVM chain: the holders of its shares (voting) and loot (non-voting) tokens as two groups, " +
		"each from its Transfer logs up to the finalized block, checked against totalSupply and balanceOf; each member weighs its shares and loot together, in whole units.",
	Params:  json.RawMessage(`{"type":"object","properties":{` + evmChainProperty + `,` + evmDAOProperty + `},"required":["chain","dao"],"additionalProperties":false}`),
	prepare: prepareBaal("evm-baal-members", readBaalMembers),
}

var baalProposalsReader = Reader{
	ID: "evm-baal-proposals", Title: "Baal DAO proposals and votes", Chain: "eip155:100",
	Reads: "A Baal's proposals and votes on an EVM chain from its events up to the finalized block (submissions, sponsorships, votes, processings, cancellings): " +
		"accounts weighted by the votes they cast and proposals they made, each proposal kept in detail as proposals/v2 says for a Baal.",
	Params:  json.RawMessage(`{"type":"object","properties":{` + evmChainProperty + `,` + evmDAOProperty + `},"required":["chain","dao"],"additionalProperties":false}`),
	prepare: prepareBaal("evm-baal-proposals", readBaalProposals),
}

type baalParams struct {
	Chain string `json:"chain"`
	DAO   string `json:"dao"`
}

func prepareBaal(network string, read func(context.Context, *readContext, *SnapshotService, evm.Address, json.RawMessage) (snapshots.Snapshot, error)) func(*SnapshotService, json.RawMessage) (*target, error) {
	return func(s *SnapshotService, raw json.RawMessage) (*target, error) {
		var p baalParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		id, err := s.EVMChainOf(p.Chain)
		if err != nil {
			return nil, err
		}
		chain := evm.Chain(id)
		text := strings.TrimPrefix(strings.TrimSpace(p.DAO), chain+":")
		if text == "" {
			return nil, errs.New(errs.BadInput, "params.dao is required: the Baal's contract address, 0x and 40 hex digits")
		}
		dao, err := evm.ParseAddress(text)
		if err != nil {
			return nil, errs.Newf(errs.BadInput, "params.dao: %q is not an EVM address on %s", p.DAO, chain).
				WithHint("0x and 40 hex digits, or its CAIP-10 id such as " + chain + ":0x…")
		}
		params := marshalParams(baalParams{Chain: chain, DAO: dao.Hex()})
		return &target{network: network, chain: chain, params: params, read: func(ctx context.Context, rc *readContext) (snapshots.Snapshot, error) {
			return read(ctx, rc, s, dao, params)
		}}, nil
	}
}

// tokenHolders reads a token's holders from its Transfer logs and checks
// them as evm-erc20-holders does: the supply against totalSupply, the
// largest against balanceOf.
func tokenHolders(ctx context.Context, rc *readContext, s *SnapshotService, token evm.Address, what string) (evm.Token, *evm.Ledger, error) {
	tok, err := rc.evm.Token(ctx, token)
	if err != nil {
		return evm.Token{}, nil, err
	}
	ledger := evm.NewLedger(s.cfg.EVMMaxHolders)
	kind := erc20Holders
	p := erc20Params{Token: token.Hex()}
	lastStep := -1
	err = rc.evm.Transfers(ctx, token, 0, s.cfg.EVMMaxLogs, ledger.ApplyTransfer, func(read, total uint64, logs int) {
		if step := int(read * evmProgressSteps / max(total, 1)); step != lastStep || read >= total {
			lastStep = step
			rc.say("logs", fmt.Sprintf("%s: read %d of %d blocks: %d Transfer logs, %d holders so far", what, read, total, logs, ledger.Holders()),
				intp(int(min(read, 1<<31))), intp(int(min(total, 1<<31))))
		}
	})
	if err == nil {
		err = ledger.CheckSupply(tok.TotalSupply)
	}
	if err != nil {
		return evm.Token{}, nil, refusal(token, kind, p, s.cfg.EVMMaxHolders, err)
	}
	checked := ledger.Top(evmChecked)
	accounts := make([]evm.Address, len(checked))
	for i, h := range checked {
		accounts[i] = h.Account
	}
	said, err := rc.evm.BalancesOf(ctx, token, accounts)
	if err != nil {
		return evm.Token{}, nil, err
	}
	if err := evm.CheckHoldings(checked, said, "balanceOf"); err != nil {
		return evm.Token{}, nil, refusal(token, kind, p, s.cfg.EVMMaxHolders, err)
	}
	return tok, ledger, nil
}

func readBaalMembers(ctx context.Context, rc *readContext, s *SnapshotService, dao evm.Address, params json.RawMessage) (snapshots.Snapshot, error) {
	rc.say("dao", "reading "+dao.Hex()+"'s shares and loot tokens", nil, nil)
	sharesAt, lootAt, err := rc.evm.BaalTokens(ctx, dao)
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	shares, sharesHeld, err := tokenHolders(ctx, rc, s, sharesAt, "shares")
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	loot, lootHeld, err := tokenHolders(ctx, rc, s, lootAt, "loot")
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	if shares.Decimals != loot.Decimals {
		return snapshots.Snapshot{}, errs.Newf(errs.CannotRead, "%s's shares have %d decimals and its loot %d: petal can't weigh them together", dao.Hex(), shares.Decimals, loot.Decimals)
	}
	// A member weighs its shares and loot together: what it would take out
	// on ragequit; its groups say which it holds.
	both := map[evm.Address]evm.Amount{}
	for _, l := range []*evm.Ledger{sharesHeld, lootHeld} {
		for _, h := range l.Top(s.cfg.EVMMaxHolders) {
			sum, overflow := both[h.Account].Add(h.Amount)
			if overflow {
				return snapshots.Snapshot{}, errs.Newf(errs.CannotRead, "%s's shares and loot of %s overflow", dao.Hex(), h.Account.Hex())
			}
			both[h.Account] = sum
		}
	}
	held := make([]evm.Holding, 0, len(both))
	for a, v := range both {
		held = append(held, evm.Holding{Account: a, Amount: v})
	}
	slices.SortFunc(held, func(x, y evm.Holding) int {
		if c := y.Amount.Cmp(x.Amount); c != 0 {
			return c
		}
		return slices.Compare(x.Account[:], y.Account[:])
	})
	total := len(held)
	held = held[:min(len(held), snapshots.MaxAccounts)]
	name := shares.Label(sharesAt)
	sharesGroup := snapshots.Group{ID: "shares", Label: snapshots.Clip("Shares (voting) of "+name, snapshots.MaxLabel)}
	lootGroup := snapshots.Group{ID: "loot", Label: snapshots.Clip("Loot (non-voting) of "+name, snapshots.MaxLabel)}
	tally, err := evm.TallyHoldings(rc.network, held, total, shares.Decimals, sharesGroup)
	if err != nil {
		return snapshots.Snapshot{}, errs.Newf(errs.CannotRead, "%s gave an amount petal can't read", dao.Hex()).WithCause(err)
	}
	tally.Groups = []snapshots.Group{sharesGroup, lootGroup}
	for i, h := range held {
		var groups []string
		if !sharesHeld.Of(h.Account).IsZero() {
			groups = append(groups, "shares")
		}
		if !lootHeld.Of(h.Account).IsZero() {
			groups = append(groups, "loot")
		}
		tally.Accounts[i].Groups = groups
	}
	detail, _ := json.Marshal(map[string]any{
		"dao":    dao.Hex(),
		"shares": map[string]any{"address": sharesAt.Hex(), "name": shares.Name, "symbol": shares.Symbol, "decimals": shares.Decimals, "total_supply": shares.TotalSupply.String(), "holders": sharesHeld.Holders()},
		"loot":   map[string]any{"address": lootAt.Hex(), "name": loot.Name, "symbol": loot.Symbol, "decimals": loot.Decimals, "total_supply": loot.TotalSupply.String(), "holders": lootHeld.Holders()},
	})
	chainName := evm.ChainName(mustChainID(rc.network))
	snap := rc.reading("evm-baal-members", params, "Members of "+name,
		fmt.Sprintf("The members of the Baal %s on %s by its shares (voting) and loot (non-voting), each weighing both in whole units, up to block %d.", dao.Hex(), chainName, rc.evm.Block().Height),
		snapshots.Tally{Groups: tally.Groups, Accounts: tally.Accounts, Detail: detail})
	snap.Source.Cut = tally.Cut
	return snap, nil
}

func readBaalProposals(ctx context.Context, rc *readContext, s *SnapshotService, dao evm.Address, params json.RawMessage) (snapshots.Snapshot, error) {
	rc.say("dao", "reading "+dao.Hex()+"'s shares token", nil, nil)
	sharesAt, _, err := rc.evm.BaalTokens(ctx, dao)
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	shares, err := rc.evm.Token(ctx, sharesAt)
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	var events []evm.BaalEvent
	lastStep := -1
	err = rc.evm.BaalEvents(ctx, dao, 0, s.cfg.EVMMaxLogs, func(e evm.BaalEvent) error {
		events = append(events, e)
		return nil
	}, func(read, total uint64, logs int) {
		if step := int(read * evmProgressSteps / max(total, 1)); step != lastStep || read >= total {
			lastStep = step
			rc.say("logs", fmt.Sprintf("read %d of %d blocks: %d Baal events so far", read, total, logs), intp(int(min(read, 1<<31))), intp(int(min(total, 1<<31))))
		}
	})
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	block := rc.evm.Block()
	now, err := blockUnix(block)
	if err != nil {
		return snapshots.Snapshot{}, errs.New(errs.CannotRead, "the pinned block's time can't be read").WithCause(err)
	}
	records, err := maps.BaalProposalRecords(rc.network, dao, events, now, shares.Decimals)
	if err != nil {
		return snapshots.Snapshot{}, errs.Newf(errs.CannotRead, "%s's events don't make its proposals: %v", dao.Hex(), err).WithCause(err)
	}
	// Accounts weigh the votes they cast and the proposals they made.
	type part struct{ votes, proposed int }
	parts := map[string]*part{}
	get := func(a string) *part {
		if parts[a] == nil {
			parts[a] = &part{}
		}
		return parts[a]
	}
	for _, r := range records {
		if r.Proposer != nil {
			get(*r.Proposer).proposed++
		}
		for _, v := range r.Votes {
			get(v.Account).votes++
		}
	}
	ids := make([]string, 0, len(parts))
	for a := range parts {
		ids = append(ids, a)
	}
	slices.Sort(ids)
	accounts := make([]snapshots.Account, 0, len(ids))
	for _, a := range ids {
		pt := parts[a]
		var groups []string
		if pt.votes > 0 {
			groups = append(groups, "voters")
		}
		if pt.proposed > 0 {
			groups = append(groups, "proposers")
		}
		accounts = append(accounts, snapshots.Account{ID: a, Label: a[strings.LastIndex(a, ":")+1:], Weight: fmt.Sprint(pt.votes + pt.proposed), Groups: groups})
	}
	slices.SortStableFunc(accounts, func(x, y snapshots.Account) int {
		return parts[y.ID].votes + parts[y.ID].proposed - parts[x.ID].votes - parts[x.ID].proposed
	})
	detail, _ := json.Marshal(map[string]any{"dao": dao.Hex(), "shares": sharesAt.Hex(), "events": len(events), "proposals": records})
	name := shares.Label(sharesAt)
	snap := rc.reading("evm-baal-proposals", params, "Votes in "+name,
		fmt.Sprintf("Who voted on and proposed the Baal %s's proposals on %s: each account weighs its votes and proposals, over %d proposals up to block %d.",
			dao.Hex(), evm.ChainName(mustChainID(rc.network)), len(records), block.Height),
		snapshots.Tally{Groups: []snapshots.Group{{ID: "voters", Label: "Voted"}, {ID: "proposers", Label: "Proposed"}}, Accounts: accounts, Detail: detail})
	snapshots.KeepTop(&snap, snapshots.MaxAccounts)
	return snap, nil
}

// blockUnix is a pinned block's time in Unix seconds.
func blockUnix(b snapshots.Block) (int64, error) {
	t, err := time.Parse(time.RFC3339, b.Time)
	if err != nil {
		return 0, err
	}
	return t.Unix(), nil
}
