package snapshotsapp_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/evm/evmtest"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/domain/snapshots"
)

// A real Baal from DAOhaus' published artifacts (evmtest.BaalStory): its
// members by shares and loot, and its proposals as proposals/v2 says.
func TestABaalsMembersAndProposalsAreWhatItSays(t *testing.T) {
	e := &erc20Chain{Chain: evmtest.NewChain(t, evmtest.Options{Accounts: 4})}
	b := e.BaalStory(t)
	svc, _ := evmService(t, e, nil)
	id := func(i int) string { return "eip155:1337:" + strings.ToLower(e.Address(i).Hex()) }
	dao := strings.ToLower(b.Address.Hex())
	p := json.RawMessage(fmt.Sprintf(`{"chain":"eip155:1337","dao":"%s"}`, b.Address.Hex()))

	members, err := svc.Read(t.Context(), "evm-baal-members", p, nil)
	require.NoError(t, err)
	require.Empty(t, snapshots.Validate(members))
	assert.Equal(t, fmt.Sprintf(`{"chain":"eip155:1337","dao":"%s"}`, dao), string(members.Params))
	type m struct {
		id, weight string
		groups     []string
	}
	var got []m
	for _, a := range members.Accounts {
		got = append(got, m{a.ID, a.Weight, a.Groups})
	}
	assert.Equal(t, []m{{id(0), "100", []string{"shares"}}, {id(1), "60", []string{"shares", "loot"}}, {id(2), "30", []string{"loot"}}}, got)
	assert.Equal(t, []string{"shares", "loot"}, []string{members.Groups[0].ID, members.Groups[1].ID})
	assert.Equal(t, "Members of PBAAL", members.Title)

	props, err := svc.Read(t.Context(), "evm-baal-proposals", p, nil)
	require.NoError(t, err)
	require.Empty(t, snapshots.Validate(props))
	weights := map[string]string{}
	for _, a := range props.Accounts {
		weights[a.ID] = a.Weight
	}
	assert.Equal(t, map[string]string{id(0): "2", id(1): "3", id(2): "2"}, weights, "votes cast and proposals made")
	v2, err := maps.ReadingProposals("eip155:1337:"+dao, "sha", &props)
	require.NoError(t, err)
	assert.Equal(t, "proposals/v2", v2.Schema)
	assert.Equal(t, "baal", v2.Source.Kind)
	assert.Equal(t, dao, v2.Source.Contract)
	require.Len(t, v2.Proposals, 4)
	at := func(s *string) time.Time {
		require.NotNil(t, s)
		v, err := time.Parse(time.RFC3339, *s)
		require.NoError(t, err)
		return v
	}
	type row struct{ id, title, kind, proposer, outcome, said string }
	var rows []row
	for _, pr := range v2.Proposals {
		rows = append(rows, row{pr.ID, pr.Title, pr.Kind, *pr.Proposer, pr.Outcome, pr.AsSaid})
		assert.Equal(t, fmt.Sprintf("eip155:1337:%s/proposals/%s", dao, pr.ID), pr.Ref)
		assert.Nil(t, pr.Recipient)
	}
	assert.Equal(t, []row{
		{"4", "Proposal 4", "proposal", id(2), "open", "Submitted"},
		{"3", "Plant a tree", "proposal", id(2), "open", "Voting"},
		{"2", "Paint the fence", "signal", id(1), "removed", "Cancelled"},
		{"1", "Fund the garden", "proposal", id(0), "approved", "Processed"},
	}, rows)
	four, three, two, one := v2.Proposals[0], v2.Proposals[1], v2.Proposals[2], v2.Proposals[3]
	assert.Nil(t, four.ClosesAt, "never sponsored: its vote never started")
	assert.Nil(t, four.DecidedAt)
	assert.Empty(t, four.Votes)
	// Self-sponsored: its vote starts at its submission and closes an hour on.
	assert.Equal(t, at(one.At).Add(time.Hour), at(one.ClosesAt))
	assert.True(t, at(one.DecidedAt).After(at(one.ClosesAt).Add(time.Minute)), "processed after its grace")
	require.Len(t, one.Votes, 2)
	for _, v := range one.Votes {
		assert.False(t, at(v.At).Before(at(one.At)))
		assert.False(t, at(v.At).After(at(one.ClosesAt)))
	}
	votes := map[string][3]string{}
	for _, v := range one.Votes {
		votes[v.Account] = [3]string{*v.Vote, v.AsSaid, *v.Power}
		assert.Equal(t, []maps.Choice{{Choice: v.AsSaid, Weight: *v.Power}}, v.Choices)
	}
	assert.Equal(t, map[string][3]string{id(0): {"for", "yes", "100"}, id(1): {"against", "no", "50"}}, votes)
	assert.Equal(t, at(two.At).Add(time.Hour), at(two.ClosesAt))
	assert.False(t, at(two.DecidedAt).Before(at(two.At)), "cancelled after its submission")
	// Sponsored after its submission: it closes an hour from its sponsoring.
	assert.True(t, at(three.ClosesAt).After(at(three.At).Add(time.Hour)))
	assert.Nil(t, three.DecidedAt)
	require.Len(t, three.Votes, 1)
	assert.Equal(t, id(1), three.Votes[0].Account)

	// find_target knows it by its tokens.
	ans, err := findTarget(t, svc, fmt.Sprintf(`{"query":"%s","chain":"eip155:1337"}`, b.Address.Hex()))
	require.NoError(t, err)
	require.Len(t, ans.Candidates, 2)
	assert.Equal(t, "evm-baal-members", ans.Candidates[0].Network)
	assert.Equal(t, "evm-baal-proposals", ans.Candidates[1].Network)
	assert.JSONEq(t, string(members.Params), string(ans.Candidates[0].Params))
	ans, err = findTarget(t, svc, fmt.Sprintf(`{"query":"proposals of %s","chain":"eip155:1337"}`, b.Address.Hex()))
	require.NoError(t, err)
	assert.Equal(t, "evm-baal-proposals", ans.Candidates[0].Network)

	// Its token is no Baal.
	_, err = svc.Read(t.Context(), "evm-baal-members", json.RawMessage(fmt.Sprintf(`{"chain":"eip155:1337","dao":"%s"}`, b.Shares.Hex())), nil)
	ee, ok := errs.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errs.CannotRead, ee.Code)
	assert.Contains(t, ee.Message, "is not a Baal petal can read")
}

// The outcomes BaalStory doesn't reach, played on a real Baal by time
// travel (evmtest.BaalOutcomes), as proposals/v2 says them.
func TestABaalsDefeatedExpiredAndFailedProposalsAreWhatItSays(t *testing.T) {
	e := &erc20Chain{Chain: evmtest.NewChain(t, evmtest.Options{Accounts: 4})}
	b := e.BaalOutcomes(t)
	svc, _ := evmService(t, e, nil)
	dao := strings.ToLower(b.Address.Hex())
	props, err := svc.Read(t.Context(), "evm-baal-proposals", json.RawMessage(fmt.Sprintf(`{"chain":"eip155:1337","dao":"%s"}`, dao)), nil)
	require.NoError(t, err)
	require.Empty(t, snapshots.Validate(props))
	v2, err := maps.ReadingProposals("eip155:1337:"+dao, "sha", &props)
	require.NoError(t, err)
	type row struct {
		id, title, outcome, said string
		decided, closes          bool
		votes                    int
	}
	var rows []row
	for _, pr := range v2.Proposals {
		rows = append(rows, row{pr.ID, pr.Title, pr.Outcome, pr.AsSaid, pr.DecidedAt != nil, pr.ClosesAt != nil, len(pr.Votes)})
	}
	assert.Equal(t, []row{
		{"6", "Passed, not processed", "closed", "Ready", false, true, 1},
		{"5", "Never sponsored", "expired", "Submitted", false, false, 0},
		{"4", "Its action fails", "failed", "Processed", true, true, 1},
		{"3", "Expires", "expired", "Processed", true, true, 1},
		{"2", "Short of quorum", "rejected", "Processed", true, true, 1},
		{"1", "Defeated", "rejected", "Defeated", false, true, 1},
	}, rows)
	// What the Baal itself says of each, at the newest block.
	for _, pr := range v2.Proposals {
		var id uint32
		_, err := fmt.Sscan(pr.ID, &id)
		require.NoError(t, err)
		status := e.Call(t, b.Contract, b.Address, "getProposalStatus", id).([4]bool) // cancelled, processed, passed, actionFailed
		assert.Equal(t, pr.DecidedAt != nil, status[1], "proposal %s processed", pr.ID)
		assert.Equal(t, pr.Outcome == "failed", status[3], "proposal %s's action failed", pr.ID)
	}
	one, two := v2.Proposals[5], v2.Proposals[4]
	assert.Equal(t, "against", *one.Votes[0].Vote)
	assert.Equal(t, "100", *one.Votes[0].Power)
	assert.Equal(t, "for", *two.Votes[0].Vote)
	assert.Equal(t, "50", *two.Votes[0].Power, "a third of the shares, short of a quorum of half")
	at := func(s *string) time.Time {
		v, err := time.Parse(time.RFC3339, *s)
		require.NoError(t, err)
		return v
	}
	three, four := v2.Proposals[3], v2.Proposals[2]
	assert.True(t, at(three.DecidedAt).After(at(two.DecidedAt).Add(6*time.Minute)), "processed after its expiration, well after 2")
	assert.False(t, at(four.DecidedAt).Before(at(three.DecidedAt)))
}
