package snapshotsapp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
)

// near-dao-proposals: who voted how on a Sputnik DAO's proposals.

var daoProposalsReader = Reader{
	ID: "near-dao-proposals", Title: "Sputnik DAO proposals and votes", Chain: snapshots.Mainnet,
	Reads:   "A Sputnik DAO's proposals and who voted how (get_last_proposal_id, paged get_proposals, get_policy for the proposal period): accounts weighted by votes cast, each proposal kept in detail with when its vote closes.",
	Params:  json.RawMessage(daoParamsSchema),
	prepare: prepareDAO("near-dao-proposals", readDAOProposals),
}

// maxProposals bounds one reading of a DAO's proposals.
const maxProposals = 20_000

func readDAOProposals(ctx context.Context, rc *readContext, p DAOParams, params json.RawMessage) (snapshots.Snapshot, error) {
	rc.say("config", "reading "+p.DAO+"'s config", nil, nil)
	if _, err := rc.near.DAOProfile(ctx, p.DAO); err != nil {
		return snapshots.Snapshot{}, err
	}
	props, err := rc.near.DAOProposals(ctx, p.DAO, maxProposals, rc.paging("proposals", "proposals"))
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	tally, err := snapshots.TallyVotes(rc.network, props)
	if err != nil {
		return snapshots.Snapshot{}, errs.New(errs.Internal, "the proposals could not be kept").WithCause(err)
	}
	s := rc.reading("near-dao-proposals", params, "Votes in "+p.DAO,
		fmt.Sprintf("Who voted on %s's proposals and how: each account weighs the number of votes it cast, over %d proposals.", p.DAO, len(props.List)), tally)
	snapshots.KeepTop(&s, snapshots.MaxAccounts)
	return s, nil
}
