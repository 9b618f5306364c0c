package evm_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	adevm "github.com/petal-near/petal/adapters/evm"
	"github.com/petal-near/petal/adapters/evm/evmtest"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/evm"
)

// A real Baal, summoned from DAOhaus' published artifacts, read through the
// adapter: its two tokens, and its proposal events in order with their
// blocks' times and the submissions' senders.
func TestABaalsTokensAndEventsAreWhatItSays(t *testing.T) {
	c := evmtest.NewChain(t, evmtest.Options{Accounts: 4})
	b := c.BaalStory(t)
	cl := client(t, adevm.Options{Endpoints: map[uint64][]string{evmtest.ChainID: {c.URL}}})
	ctx := context.Background()
	r, err := cl.PinEVM(ctx, chainName())
	require.NoError(t, err)
	shares, loot, err := r.BaalTokens(ctx, evm.Address(b.Address))
	require.NoError(t, err)
	assert.Equal(t, evm.Address(b.Shares), shares)
	assert.Equal(t, evm.Address(b.Loot), loot)
	_, _, err = r.BaalTokens(ctx, evm.Address(b.Shares))
	assert.Equal(t, errs.CannotRead, errs.CodeOf(err), "a token is no Baal: %v", err)
	_, _, err = r.BaalTokens(ctx, evm.Address{0x12})
	assert.Equal(t, errs.NotFound, errs.CodeOf(err))

	var got []evm.BaalEvent
	require.NoError(t, r.BaalEvents(ctx, evm.Address(b.Address), 0, 1000, func(e evm.BaalEvent) error {
		got = append(got, e)
		return nil
	}, nil))
	type step struct {
		kind     evm.BaalEventKind
		proposal uint64
		account  int // key index, -1 none
	}
	want := []step{{evm.BaalConfig, 0, -1},
		{evm.BaalSubmit, 1, 0}, {evm.BaalVote, 1, 0}, {evm.BaalVote, 1, 1},
		{evm.BaalSubmit, 2, 1}, {evm.BaalCancel, 2, -1}, {evm.BaalProcess, 1, -1},
		{evm.BaalSubmit, 3, 2}, {evm.BaalSponsor, 3, 0}, {evm.BaalVote, 3, 1}, {evm.BaalSubmit, 4, 2}}
	require.Len(t, got, len(want))
	for i, w := range want {
		assert.Equal(t, w.kind, got[i].Kind, "event %d", i)
		assert.Equal(t, w.proposal, got[i].Proposal, "event %d", i)
		if w.account >= 0 {
			assert.Equal(t, evm.Address(c.Address(w.account)), got[i].Account, "event %d", i)
		}
		assert.Positive(t, got[i].Time)
		if i > 0 {
			assert.GreaterOrEqual(t, got[i].Time, got[i-1].Time)
		}
	}
	assert.EqualValues(t, 3600, got[0].VotingPeriod)
	assert.Equal(t, "Fund the garden\nSeeds and soil for spring.", got[1].Title, "plain text is its own title")
	assert.Empty(t, got[1].ProposalType)
	assert.True(t, got[1].SelfSponsor)
	assert.Equal(t, uint64(got[1].Time), got[1].VotingStarts, "self-sponsored: its vote starts at once")
	assert.Equal(t, evmtest.Units(100).String(), got[2].Amount.String())
	assert.True(t, got[2].Approved)
	assert.False(t, got[3].Approved)
	assert.True(t, got[6].Passed)
	assert.False(t, got[6].ActionFailed)
	assert.False(t, got[7].SelfSponsor, "loot alone can't sponsor")
	assert.Equal(t, uint64(got[8].Time), got[8].VotingStarts)
}
