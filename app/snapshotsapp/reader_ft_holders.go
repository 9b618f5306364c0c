package snapshotsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
)

// near-ft-holders: a NEAR fungible token's largest holders. NEP-141 keeps no
// list of holders, so their names come from an indexer (FastNEAR's top 100,
// ports.FTHolderIndex) and each balance is read on chain with ft_balance_of
// at the pinned block: the weights are the chain's, the names the index's,
// and the reading says it holds the top holders only.

var ftHoldersReader = Reader{
	ID: "near-ft-holders", Title: "Fungible token top holders", Chain: snapshots.Mainnet,
	Reads: "A fungible token's largest holders: their names from FastNEAR's index (its top 100 by balance), each balance read with ft_balance_of at the final block, in whole tokens. The top holders only, not every holder.",
	Params: json.RawMessage(`{"type":"object","properties":{"token":{"type":"string","description":"the token's contract, such as usdt.tether-token.near"},` +
		chainProperty + `},"required":["token"],"additionalProperties":false}`),
	prepare: prepareFTHolders,
}

type ftHoldersParams struct {
	Token string `json:"token"`
	Chain string `json:"chain"`
}

func prepareFTHolders(s *SnapshotService, raw json.RawMessage) (*target, error) {
	var p ftHoldersParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	chain, err := ChainOf(p.Chain)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Token) == "" {
		return nil, errs.New(errs.BadInput, "params.token is required: the token's contract, such as usdt.tether-token.near")
	}
	if p.Token, err = accountParam("token", chain, p.Token); err != nil {
		return nil, err
	}
	p.Chain = chain
	params := marshalParams(p)
	return &target{network: "near-ft-holders", chain: chain, params: params, read: func(ctx context.Context, rc *readContext) (snapshots.Snapshot, error) {
		return readFTHolders(ctx, rc, s, p, params)
	}}, nil
}

func readFTHolders(ctx context.Context, rc *readContext, s *SnapshotService, p ftHoldersParams, params json.RawMessage) (snapshots.Snapshot, error) {
	if s.ftIndex == nil {
		return snapshots.Snapshot{}, errs.New(errs.BadInput, "near-ft-holders can't be read here: no holder index is set up")
	}
	rc.say("holders", "asking FastNEAR's index for "+p.Token+"'s largest holders", nil, nil)
	accounts, err := s.ftIndex.TopHolders(ctx, rc.network, p.Token)
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	tally, symbol, err := rc.tokenBalances(ctx, p.Token, accounts)
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	// An account the index lists but that holds nothing at the block (it
	// sold since the index looked) is no holder.
	held := tally.Accounts[:0]
	for _, a := range tally.Accounts {
		if a.Weight != "0" {
			held = append(held, a)
		}
	}
	tally.Accounts = held
	tally.Groups = tally.Groups[:1]
	tally.Detail, _ = json.Marshal(map[string]any{"holders_from": "FastNEAR /v1/ft/{token}/top", "top_only": true, "listed": len(accounts)})
	return rc.reading("near-ft-holders", params, symbol+" top holders",
		fmt.Sprintf("The largest holders of %s (%s) as FastNEAR's index names them (its top %d), each balance read on chain at block %d, in whole tokens: the top holders only, not every holder.",
			symbol, p.Token, len(accounts), rc.near.Block().Height), tally), nil
}
