package evm_test

import (
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/domain/snapshots"
)

func addr(t *testing.T, s string) evm.Address {
	t.Helper()
	a, err := evm.ParseAddress(s)
	require.NoError(t, err)
	return a
}

func TestAmountsAreExactUint256(t *testing.T) {
	max, ok := evm.AmountFromBig(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1)))
	require.True(t, ok)
	assert.Equal(t, "115792089237316195423570985008687907853269984665640564039457584007913129639935", max.String())
	_, over := max.Add(evm.AmountFromUint64(1))
	assert.True(t, over, "2^256 overflows")
	_, ok = evm.AmountFromBig(new(big.Int).Lsh(big.NewInt(1), 256))
	assert.False(t, ok, "2^256 is no uint256")
	_, ok = evm.AmountFromBig(big.NewInt(-1))
	assert.False(t, ok)

	// A carry across every limb and a borrow back.
	a, _ := evm.AmountFromBig(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 192), big.NewInt(1)))
	sum, over := a.Add(evm.AmountFromUint64(1))
	require.False(t, over)
	assert.Equal(t, new(big.Int).Lsh(big.NewInt(1), 192).String(), sum.String())
	back, short := sum.Sub(evm.AmountFromUint64(1))
	require.False(t, short)
	assert.Equal(t, a, back)
	_, short = evm.AmountFromUint64(1).Sub(evm.AmountFromUint64(2))
	assert.True(t, short)
	assert.Equal(t, -1, a.Cmp(sum))
	assert.Equal(t, 1, sum.Cmp(a))
	assert.Equal(t, 0, a.Cmp(back))

	word := make([]byte, 32)
	word[0], word[31] = 0x01, 0x02
	w := evm.AmountFromWord(word)
	assert.Equal(t, new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 248), big.NewInt(2)).String(), w.String())
}

func TestAddressesAndChainsAreCAIPInLowerCase(t *testing.T) {
	a := addr(t, "0xAbCDEF0123456789abcdef0123456789ABCDEF01")
	assert.Equal(t, "0xabcdef0123456789abcdef0123456789abcdef01", a.Hex())
	assert.Equal(t, "eip155:100:0xabcdef0123456789abcdef0123456789abcdef01", evm.AccountID("eip155:100", a))
	for _, bad := range []string{"", "0x", "abcdef0123456789abcdef0123456789abcdef01", "0xabcdef0123456789abcdef0123456789abcdef0", "0xzbcdef0123456789abcdef0123456789abcdef01"} {
		_, err := evm.ParseAddress(bad)
		assert.Error(t, err, bad)
	}
	for in, want := range map[string]uint64{"eip155:1": 1, "eip155:100": 100, "eip155:42161": 42161} {
		id, ok := evm.ChainID(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, id)
	}
	for _, bad := range []string{"near:mainnet", "eip155:", "eip155:0", "eip155:01", "eip155:-1", "eip155:x", "eip155:99999999999999999999"} {
		_, ok := evm.ChainID(bad)
		assert.False(t, ok, bad)
	}
	assert.Equal(t, "Gnosis", evm.ChainName(100))
	assert.Equal(t, "eip155:1337", evm.ChainName(1337))

	topic := make([]byte, 32)
	copy(topic[12:], a[:])
	got, ok := evm.AddressFromTopic(topic)
	assert.True(t, ok)
	assert.Equal(t, a, got)
	topic[0] = 1
	_, ok = evm.AddressFromTopic(topic)
	assert.False(t, ok, "an address topic is zero before its 20 bytes")
}

func TestTransfersMakeBalances(t *testing.T) {
	var zero evm.Address
	alice, bob, carol := addr(t, "0x00000000000000000000000000000000000a11ce"), addr(t, "0x0000000000000000000000000000000000000b0b"), addr(t, "0x00000000000000000000000000000000000ca201")
	l := evm.NewLedger(10)
	n := evm.AmountFromUint64
	for _, tr := range []evm.Transfer{
		{From: zero, To: alice, Value: n(1000)},
		{From: zero, To: bob, Value: n(50)},
		{From: alice, To: carol, Value: n(300)},
		{From: alice, To: alice, Value: n(700)}, // to oneself: nothing moves
		{From: bob, To: zero, Value: n(50)},     // a burn empties bob
		{From: carol, To: alice, Value: n(0)},
	} {
		require.NoError(t, l.ApplyTransfer(tr))
	}
	assert.Equal(t, n(700), l.Of(alice))
	assert.Equal(t, n(300), l.Of(carol))
	assert.Equal(t, n(0), l.Of(bob))
	assert.Equal(t, 2, l.Holders(), "an account emptied is no holder")
	assert.Equal(t, 6, l.Logs())
	assert.Equal(t, n(1000), l.Supply())
	assert.Equal(t, []evm.Holding{{alice, n(700)}, {carol, n(300)}}, l.Top(5))
	assert.Equal(t, []evm.Holding{{alice, n(700)}}, l.Top(1))

	require.NoError(t, l.CheckSupply(n(1000)))
	err := l.CheckSupply(n(1010))
	require.ErrorIs(t, err, evm.ErrLogsDontAddUp)
	assert.Contains(t, err.Error(), "its Transfer logs mint 1000 less burns, but totalSupply says 1010")

	require.NoError(t, evm.CheckHoldings(l.Top(2), []evm.Amount{n(700), n(300)}, "balanceOf"))
	err = evm.CheckHoldings(l.Top(2), []evm.Amount{n(700), n(297)}, "balanceOf")
	require.ErrorIs(t, err, evm.ErrLogsDontAddUp)
	assert.Contains(t, err.Error(), carol.Hex()+" holds 297 by balanceOf but 300 by its logs")

	// Sending more than the logs gave is refused, naming the sender.
	err = l.ApplyTransfer(evm.Transfer{From: carol, To: bob, Value: n(301), Block: 9})
	require.ErrorIs(t, err, evm.ErrLogsDontAddUp)
	assert.Contains(t, err.Error(), carol.Hex()+" sends 301 at block 9 but its Transfer logs gave it 300")
}

func TestALedgerRefusesPastItsCap(t *testing.T) {
	l := evm.NewLedger(2)
	var zero evm.Address
	one := evm.AmountFromUint64(1)
	a, b, c := evm.Address{1}, evm.Address{2}, evm.Address{3}
	require.NoError(t, l.ApplyTransfer(evm.Transfer{From: zero, To: a, Value: one}))
	require.NoError(t, l.ApplyTransfer(evm.Transfer{From: zero, To: b, Value: one}))
	require.NoError(t, l.ApplyTransfer(evm.Transfer{From: zero, To: b, Value: one}), "a holder kept is no new holder")
	require.ErrorIs(t, l.ApplyTransfer(evm.Transfer{From: zero, To: c, Value: one}), evm.ErrTooManyHolders)
	// An account emptied makes room.
	require.NoError(t, l.ApplyTransfer(evm.Transfer{From: a, To: zero, Value: one}))
	require.NoError(t, l.ApplyTransfer(evm.Transfer{From: zero, To: c, Value: one}))
	assert.Equal(t, 2, l.Holders())
}

func TestVotesFollowDelegateVotesChanged(t *testing.T) {
	n := evm.AmountFromUint64
	d1, d2 := evm.Address{0xd1}, evm.Address{0xd2}
	l := evm.NewLedger(10)
	require.NoError(t, l.ApplyVotes(evm.VotesChanged{Delegate: d1, Previous: n(0), Now: n(100)}))
	require.NoError(t, l.ApplyVotes(evm.VotesChanged{Delegate: d2, Previous: n(0), Now: n(40)}))
	require.NoError(t, l.ApplyVotes(evm.VotesChanged{Delegate: d1, Previous: n(100), Now: n(60)}))
	assert.Equal(t, n(100), l.Supply(), "the votes together")
	assert.Equal(t, []evm.Holding{{d1, n(60)}, {d2, n(40)}}, l.Top(10))
	require.NoError(t, l.CheckVotesWithin(n(100)))
	require.ErrorIs(t, l.CheckVotesWithin(n(99)), evm.ErrLogsDontAddUp)
	require.NoError(t, l.ApplyVotes(evm.VotesChanged{Delegate: d2, Previous: n(40), Now: n(0)}))
	assert.Equal(t, 1, l.Holders())

	err := l.ApplyVotes(evm.VotesChanged{Delegate: d1, Previous: n(61), Now: n(0), Block: 7})
	require.ErrorIs(t, err, evm.ErrLogsDontAddUp)
	assert.Contains(t, err.Error(), "votes change from 61 at block 7 but its earlier logs gave it 60")
}

func TestTallyHoldingsWeighsInWholeTokens(t *testing.T) {
	n := evm.AmountFromUint64
	held := []evm.Holding{{evm.Address{0xaa}, n(1_500_000)}, {evm.Address{0xbb}, n(1)}}
	group := snapshots.Group{ID: "holders", Label: "Holds USDC"}
	tally, err := evm.TallyHoldings("eip155:100", held, 3, 6, group)
	require.NoError(t, err)
	assert.Equal(t, []snapshots.Group{group}, tally.Groups)
	assert.Equal(t, []snapshots.Account{
		{ID: "eip155:100:0xaa00000000000000000000000000000000000000", Label: "0xaa00000000000000000000000000000000000000", Weight: "1.5", Groups: []string{"holders"}},
		{ID: "eip155:100:0xbb00000000000000000000000000000000000000", Label: "0xbb00000000000000000000000000000000000000", Weight: "0.000001", Groups: []string{"holders"}},
	}, tally.Accounts)
	assert.Equal(t, &snapshots.Cut{Total: 3, Kept: 2}, tally.Cut)
}

// A DAOhaus submission's details are JSON read whole, however long: cut
// first, a long description would leave broken JSON, and the title would
// come out as the object's first characters.
func TestBaalDetailsReadsTheTitleBeforeAnyCut(t *testing.T) {
	long := `{"title":"Fund the garden","proposalType":"FUNDING","description":"` + strings.Repeat("seeds ", 2000) + `"}`
	title, kind := evm.BaalDetails(long)
	if title != "Fund the garden" || kind != "funding" {
		t.Fatalf("read %q, %q from a %d-byte details", title, kind, len(long))
	}
	if title, kind := evm.BaalDetails("Plain text\nsecond line"); title != "Plain text\nsecond line" || kind != "" {
		t.Fatalf("plain text read as %q, %q", title, kind)
	}
	if title, _ := evm.BaalDetails(`{"title":"  ","description":"x"}`); title != `{"title":"  ","description":"x"}` {
		t.Fatalf("a JSON object without a title read as %q", title)
	}
	if _, kind := evm.BaalDetails(`{"title":"T","proposalType":"` + strings.Repeat("k", 41) + `"}`); kind != "" {
		t.Fatalf("a 41-character kind kept: %q", kind)
	}
}
