package maps

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/domain/snapshots"
)

// A Baal reading's records are served as they were kept, so a reading from
// elsewhere with records no Baal reader writes is refused, not put on a map.
func TestBaalProposalsRefuseRecordsTheReaderDoesNotWrite(t *testing.T) {
	const chain, dao = "eip155:100", "0x00000000000000000000000000000000000000aa"
	voter := chain + ":0x00000000000000000000000000000000000000bb"
	good := func() ProposalRecord {
		return ProposalRecord{ID: "1", Title: "t", Kind: "proposal", Proposer: &voter, Outcome: "approved",
			Ref: chain + ":" + dao + "/proposals/1", Votes: []VoteRecord{{Account: voter}}}
	}
	reading := func(dao string, r ProposalRecord) *snapshots.Snapshot {
		detail, _ := json.Marshal(map[string]any{"dao": dao, "proposals": []ProposalRecord{r}})
		return &snapshots.Snapshot{Network: BaalProposalsNetwork, Chain: chain, Detail: detail}
	}
	if _, err := BaalProposals("m", "s", reading(dao, good())); err != nil {
		t.Fatalf("a record as the reader writes it refused: %v", err)
	}
	other := "near:mainnet:alice.near"
	cases := map[string]func(*ProposalRecord){
		"ref":      func(r *ProposalRecord) { r.Ref = "https://example.com/x" },
		"outcome":  func(r *ProposalRecord) { r.Outcome = "won" },
		"proposer": func(r *ProposalRecord) { r.Proposer = &other },
		"vote":     func(r *ProposalRecord) { r.Votes[0].Account = strings.ToUpper(voter) },
	}
	for name, spoil := range cases {
		r := good()
		spoil(&r)
		if _, err := BaalProposals("m", "s", reading(dao, r)); err == nil {
			t.Errorf("%s: a record the reader doesn't write was served", name)
		}
	}
	if _, err := BaalProposals("m", "s", reading("0xAA", good())); err == nil {
		t.Error("a DAO that is no lower-case address was served")
	}
}

// A proposal never sponsored is open until the pinned block reaches its
// expiration, expired from then on (it can never be sponsored), and open
// forever without one.
func TestAnUnsponsoredBaalProposalExpiresAtItsExpiration(t *testing.T) {
	var dao evm.Address
	events := []evm.BaalEvent{
		{Kind: evm.BaalSubmit, Proposal: 1, Time: 1000, VotingPeriod: 3600, Expiration: 5000},
		{Kind: evm.BaalSubmit, Proposal: 2, Time: 1000, VotingPeriod: 3600},
	}
	for now, want := range map[int64][2]string{4999: {"open", "open"}, 5000: {"expired", "open"}, 90000: {"expired", "open"}} {
		recs, err := BaalProposalRecords("eip155:100", dao, events, now, 18)
		if err != nil {
			t.Fatal(err)
		}
		got := [2]string{recs[1].Outcome, recs[0].Outcome} // the newest first
		if got != want || recs[1].AsSaid != "Submitted" || recs[1].ClosesAt != nil || recs[1].DecidedAt != nil {
			t.Errorf("at %d: outcomes %v (as said %q), want %v", now, got, recs[1].AsSaid, want)
		}
	}
}
