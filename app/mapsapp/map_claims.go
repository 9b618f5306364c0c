package mapsapp

import (
	"context"

	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/domain/maps"
)

// mapClaimReadings bounds the readings a map's claims look through: its
// newest, each up to a snapshot's 100,000 accounts.
const mapClaimReadings = 20

var _ relationsapp.MapAccounts = (*MapService)(nil)

// MapAccounts implements MapAccounts for the site's claims: the map's own
// address (its id, a CAIP-10, or "" for a whole network's) and the accounts
// of its newest readings; not_found for a map that isn't on the map.
func (s *MapService) MapAccounts(ctx context.Context, id string) (string, []string, error) {
	id = maps.NormaliseID(id)
	st, err := s.current(ctx)
	if err != nil {
		return "", nil, err
	}
	shas, ok := st.index.ReadingSnapshots(id, mapClaimReadings)
	if !ok {
		return "", nil, notOnTheMap(id)
	}
	var accounts []string
	for _, sha := range shas {
		loaded, err := s.library.Load(ctx, sha)
		if err != nil {
			return "", nil, err
		}
		for _, a := range loaded.Snapshot.Accounts {
			accounts = append(accounts, a.ID)
		}
	}
	address := id
	if _, addr, _ := maps.SplitID(id); addr == "" {
		address = ""
	}
	return address, accounts, nil
}
