package snapshotsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
)

// near-staking-pool: a validator's delegators, weighted by staked NEAR.

var stakingPoolReader = Reader{
	ID: "near-staking-pool", Title: "Staking pool delegators", Chain: snapshots.Mainnet,
	Reads: "A validator's staking pool: its delegators weighted by staked NEAR (get_number_of_accounts, paged get_accounts).",
	Params: json.RawMessage(`{"type":"object","properties":{"pool":{"type":"string","description":"the pool's account, such as astro-stakers.poolv1.near"},` +
		chainProperty + `},"required":["pool"],"additionalProperties":false}`),
	prepare: preparePool,
}

type PoolParams struct {
	Pool  string `json:"pool"`
	Chain string `json:"chain"`
}

func preparePool(_ *SnapshotService, raw json.RawMessage) (*target, error) {
	var p PoolParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	chain, err := ChainOf(p.Chain)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Pool) == "" {
		return nil, errs.New(errs.BadInput, "params.pool is required: the pool's account, such as astro-stakers.poolv1.near")
	}
	if p.Pool, err = accountParam("pool", chain, p.Pool); err != nil {
		return nil, err
	}
	p.Chain = chain
	params := marshalParams(p)
	return &target{network: "near-staking-pool", chain: chain, params: params, read: func(ctx context.Context, rc *readContext) (snapshots.Snapshot, error) {
		return readPool(ctx, rc, p, params)
	}}, nil
}

// maxPoolAccounts bounds the delegators paged through in one reading; the
// snapshot keeps the top MaxAccounts of them.
const maxPoolAccounts = 1_000_000

func readPool(ctx context.Context, rc *readContext, p PoolParams, params json.RawMessage) (snapshots.Snapshot, error) {
	delegations, err := rc.near.Delegators(ctx, p.Pool, maxPoolAccounts, rc.paging("accounts", "delegators"))
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	tally, err := snapshots.TallyDelegators(rc.network, delegations)
	if err != nil {
		return snapshots.Snapshot{}, errs.Newf(errs.CannotRead, "%s gave a staked balance petal can't read", p.Pool).WithCause(err)
	}
	s := rc.reading("near-staking-pool", params, "Delegators of "+p.Pool,
		fmt.Sprintf("The accounts staking NEAR with the validator pool %s, each weighted by its staked NEAR.", p.Pool), tally)
	snapshots.KeepTop(&s, snapshots.MaxAccounts)
	return s, nil
}
