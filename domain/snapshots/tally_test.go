package snapshots

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestClipKeepsTextsWithinASnapshotsBounds(t *testing.T) {
	long := strings.Repeat("é", 3000)
	if got := []rune(Clip(long, MaxAbout)); len(got) != MaxAbout || got[len(got)-1] != '…' {
		t.Fatalf("clip: %d runes", len(got))
	}
	if Clip("short", 10) != "short" {
		t.Fatal("a short text is kept whole")
	}
	// A role with a very long name still makes a valid reading.
	ids := GroupIDs([]string{strings.Repeat("Council ", 40), "council", "Council"})
	if ids[1] != "council" || ids[2] != "council-2" || len(ids[0]) > 64 {
		t.Fatalf("group ids: %q", ids)
	}
}

func TestTallyMembersGroupsByRole(t *testing.T) {
	got := TallyMembers(Mainnet, []DAORole{
		{Name: "Council", Members: []string{"bob.near", "alice.near", "NOT AN ACCOUNT"}},
		{Name: "Community", Members: []string{"alice.near", "alice.near"}},
		{Name: "Empty", Members: []string{}},
	})
	if len(got.Groups) != 3 || got.Groups[0] != (Group{ID: "council", Label: "Council"}) {
		t.Fatalf("groups: %+v", got.Groups)
	}
	if len(got.Accounts) != 2 || got.Accounts[0].Label != "alice.near" || got.Accounts[1].Label != "bob.near" {
		t.Fatalf("accounts in account order, invalid ids left out: %+v", got.Accounts)
	}
	alice := got.Accounts[0]
	if alice.ID != "near:mainnet:alice.near" || alice.Weight != "1" || strings.Join(alice.Groups, ",") != "council,community" {
		t.Fatalf("alice: %+v", alice)
	}
	var attrs struct{ Roles []string }
	if err := json.Unmarshal(alice.Attrs, &attrs); err != nil {
		t.Fatal(err)
	}
	if roles := attrs.Roles; strings.Join(roles, ",") != "Council,Community" {
		t.Fatalf("alice's roles, each once: %v", roles)
	}
}

func TestTallyVotesWeighsVotesCast(t *testing.T) {
	got, err := TallyVotes(Mainnet, Proposals{Last: 3, List: []Proposal{
		{ID: 1, Proposer: "alice.near", Votes: map[string]string{"alice.near": "Approve", "bob.near": "Reject"}},
		{ID: 2, Proposer: "carol.near", Votes: map[string]string{"alice.near": "Remove", "BAD": "Approve"}},
		{ID: 3, Proposer: "dave.near"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	byLabel := map[string]Account{}
	for _, a := range got.Accounts {
		byLabel[a.Label] = a
	}
	if len(got.Accounts) != 4 || byLabel["alice.near"].Weight != "2" || byLabel["carol.near"].Weight != "0" {
		t.Fatalf("accounts: %+v", got.Accounts)
	}
	if g := strings.Join(byLabel["alice.near"].Groups, ","); g != "approve,remove,proposer" {
		t.Fatalf("alice's groups: %s", g)
	}
	if g := byLabel["carol.near"].Groups; len(g) != 1 || g[0] != "proposer" {
		t.Fatalf("a proposer who never voted: %v", g)
	}
	var detail struct {
		Proposals []Proposal `json:"proposals"`
		Last      uint64     `json:"last_proposal_id"`
	}
	if err := json.Unmarshal(got.Detail, &detail); err != nil || len(detail.Proposals) != 3 || detail.Last != 3 || detail.Proposals[2].Votes == nil {
		t.Fatalf("detail keeps every proposal, votes never null: %s", got.Detail)
	}
}

func TestTallyDelegatorsWeighsStakedNEAR(t *testing.T) {
	got, err := TallyDelegators(Mainnet, []Delegation{
		{Account: "whale.near", StakedYocto: "1200000000000000000000000000", UnstakedYocto: "0"},
		{Account: "leaving.near", StakedYocto: "0", UnstakedYocto: "5"},
		{Account: "alice.near", StakedYocto: "1500000000000000000000000", UnstakedYocto: "2", CanWithdraw: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Accounts) != 2 || got.Accounts[0].Weight != "1200" || got.Accounts[1].Weight != "1.5" {
		t.Fatalf("only accounts with NEAR staked, in NEAR: %+v", got.Accounts)
	}
	if g := strings.Join(got.Accounts[1].Groups, ","); g != "staking,unstaking" {
		t.Fatalf("alice also unstaking: %s", g)
	}
	if _, err := TallyDelegators(Mainnet, []Delegation{{Account: "x.near", StakedYocto: "1e24"}}); err == nil {
		t.Fatal("a stake that is not a whole number of yoctoNEAR is refused")
	}
}

func TestTallyBalancesInWholeTokens(t *testing.T) {
	got, err := TallyBalances(Mainnet, []string{"a.near", "b.near"}, []string{"1500000", "0"}, Token{Decimals: 6}, "USDt")
	if err != nil {
		t.Fatal(err)
	}
	if got.Accounts[0].Weight != "1.5" || got.Accounts[0].Groups[0] != "holders" || got.Accounts[1].Groups[0] != "none" {
		t.Fatalf("accounts: %+v", got.Accounts)
	}
	if got.Groups[0].Label != "Holds USDt" {
		t.Fatalf("groups: %+v", got.Groups)
	}
	if _, err := TallyBalances(Mainnet, []string{"a.near"}, nil, Token{}, "X"); err == nil {
		t.Fatal("a balance missing for an account is refused")
	}
}
