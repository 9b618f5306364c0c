package snapshotsapp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
)

// The params both DAO readers (near-dao-members, near-dao-proposals) take.

type DAOParams struct {
	DAO   string `json:"dao"`
	Chain string `json:"chain"`
}

const daoParamsSchema = `{"type":"object","properties":{"dao":{"type":"string","description":"the DAO's account, such as marketing.sputnik-dao.near; a bare name gets the factory's suffix"},` +
	chainProperty + `},"required":["dao"],"additionalProperties":false}`

// prepareDAO checks a DAO reader's params: a bare name gets the factory's
// suffix on the chain.
func prepareDAO(network string, read func(ctx context.Context, rc *readContext, p DAOParams, params json.RawMessage) (snapshots.Snapshot, error)) func(*SnapshotService, json.RawMessage) (*target, error) {
	return func(_ *SnapshotService, raw json.RawMessage) (*target, error) {
		var p DAOParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		chain, err := ChainOf(p.Chain)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(p.DAO) == "" {
			return nil, errs.New(errs.BadInput, "params.dao is required: the DAO's account, such as marketing.sputnik-dao.near")
		}
		dao := strings.TrimSpace(p.DAO)
		if !strings.Contains(dao, ".") && !strings.Contains(dao, ":") {
			dao += snapshots.DAOSuffix(chain)
		}
		if dao, err = accountParam("dao", chain, dao); err != nil {
			return nil, err
		}
		p = DAOParams{DAO: dao, Chain: chain}
		params := marshalParams(p)
		return &target{network: network, chain: chain, params: params, read: func(ctx context.Context, rc *readContext) (snapshots.Snapshot, error) {
			return read(ctx, rc, p, params)
		}}, nil
	}
}
