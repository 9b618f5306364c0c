package snapshotsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/petal-near/petal/domain/snapshots"
)

// near-dao-members: a Sputnik DAO's members, grouped by role.

var daoMembersReader = Reader{
	ID: "near-dao-members", Title: "Sputnik DAO members", Chain: snapshots.Mainnet,
	Reads:   "A Sputnik DAO's members, grouped by role (get_config, get_policy); each member weighs 1.",
	Params:  json.RawMessage(daoParamsSchema),
	prepare: prepareDAO("near-dao-members", readDAOMembers),
}

func readDAOMembers(ctx context.Context, rc *readContext, p DAOParams, params json.RawMessage) (snapshots.Snapshot, error) {
	rc.say("config", "reading "+p.DAO+"'s config", nil, nil)
	profile, err := rc.near.DAOProfile(ctx, p.DAO)
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	rc.say("policy", "reading "+p.DAO+"'s roles", nil, nil)
	roles, err := rc.near.DAORoles(ctx, p.DAO)
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	about := fmt.Sprintf("The accounts holding a role in %s, grouped by role, each weighing 1.", p.DAO)
	if profile.Purpose != "" {
		about = strings.TrimSpace(profile.Purpose) + " " + about
	}
	s := rc.reading("near-dao-members", params, "Members of "+p.DAO, about, snapshots.TallyMembers(rc.network, roles))
	snapshots.KeepTop(&s, snapshots.MaxAccounts)
	return s, nil
}
