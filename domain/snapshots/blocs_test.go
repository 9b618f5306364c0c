package snapshots

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/errs"
)

// proposalsReading is a DAO's proposals reading with the votes given, one
// map a proposal.
func proposalsReading(t *testing.T, votes ...map[string]string) *Snapshot {
	t.Helper()
	var ps []Proposal
	for i, v := range votes {
		ps = append(ps, Proposal{ID: uint64(i), Proposer: "alice.near", Votes: v})
	}
	tally, err := TallyVotes(Mainnet, Proposals{List: ps, Last: uint64(len(ps))})
	require.NoError(t, err)
	return &Snapshot{Network: ProposalsNetwork, Chain: Mainnet, Groups: tally.Groups, Accounts: tally.Accounts, Detail: tally.Detail}
}

func TestVotingBlocsByHand(t *testing.T) {
	s := proposalsReading(t,
		map[string]string{"alice.near": "Approve", "bob.near": "Approve", "carol.near": "Reject", "dave.near": "Approve"},
		map[string]string{"alice.near": "Approve", "bob.near": "Approve", "carol.near": "Approve"},
		map[string]string{"alice.near": "Reject", "bob.near": "Reject", "carol.near": "Approve"},
		map[string]string{"alice.near": "Approve", "carol.near": "Reject", "Not An Account": "Approve"},
	)
	got, err := Blocs(s, BlocsQuery{})
	require.NoError(t, err)
	// alice–bob: 3 in common (1-3), the same each time: 1. bob–carol: 3 in
	// common, alike only on 2: 1/3. alice–carol: 4 in common, alike only on 2: 1/4.
	// dave voted once: in common with anyone on 1 proposal, under min_common 3.
	b, _ := json.Marshal(got)
	assert.JSONEq(t, `{"proposals":4,"voters":4,"paired":4,"min_common":3,"min_agreement":0.8,
		"pairs":{"total":3,"items":[
		 {"a":"near:mainnet:alice.near","b":"near:mainnet:bob.near","common":3,"agreed":3,"agreement":1},
		 {"a":"near:mainnet:bob.near","b":"near:mainnet:carol.near","common":3,"agreed":1,"agreement":0.333333},
		 {"a":"near:mainnet:alice.near","b":"near:mainnet:carol.near","common":4,"agreed":1,"agreement":0.25}]},
		"blocs":[{"accounts":["near:mainnet:alice.near","near:mainnet:bob.near"],"size":2}]}`, string(b))

	// Paged, and looser: one in common is enough, and a third alike joins carol.
	got, err = Blocs(s, BlocsQuery{MinCommon: 1, MinAgreement: Fraction{Millionths: 333_333, Defined: true}, Offset: 1, Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, 6, got.Pairs.Total)
	var pairs []string
	for _, p := range got.Pairs.Items {
		pairs = append(pairs, fmt.Sprintf("%s-%s %d/%d", p.A[13:], p.B[13:], p.Agreed, p.Common))
	}
	// All agreeing: alice–bob 3/3, then the 1/1s (alice–dave, bob–dave) by
	// account; carol–dave 0/1 last.
	assert.Equal(t, []string{"alice.near-dave.near 1/1", "bob.near-dave.near 1/1"}, pairs)
	require.Len(t, got.Blocs, 1)
	assert.Equal(t, 4, got.Blocs[0].Size)
}

func TestVotingBlocsRefusals(t *testing.T) {
	_, err := Blocs(&Snapshot{Network: "near-dao-members"}, BlocsQuery{})
	require.True(t, errs.Is(err, errs.BadInput))
	assert.Contains(t, err.Error(), "sha256")
	s := proposalsReading(t)
	for _, q := range []BlocsQuery{{Limit: MaxBlocsLimit + 1}, {MinCommon: -1}, {Offset: -1}, {MinAgreement: Fraction{Millionths: 1_000_001, Defined: true}}} {
		_, err := Blocs(s, q)
		assert.True(t, errs.Is(err, errs.BadInput), "%+v", q)
	}
	got, err := Blocs(s, BlocsQuery{})
	require.NoError(t, err)
	assert.Equal(t, 0, got.Pairs.Total)
	assert.NotNil(t, got.Pairs.Items)
	assert.NotNil(t, got.Blocs)
}
