package evmtest

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/require"
)

// A real Baal (Moloch v3) for the tests: DAOhaus' own contracts from their
// published artifacts (@daohaus/baal-contracts, in solc/'s lock file), the
// bytecode DAOhaus deploys, never compiled or written here. It is summoned as
// DAOhaus summons one: the Gnosis Safe contracts (singleton, proxy factory,
// MultiSend, fallback handler) and Zodiac's module proxy factory, the Baal,
// Shares and Loot templates, and BaalSummoner behind its ERC-1967 proxy,
// whose summonBaal makes the Baal, its two tokens and its Safe.

// Baal is a summoned Baal and its parts.
type Baal struct {
	Address, Shares, Loot, Safe common.Address
	// Contract is the Baal's ABI; Token the shares and loot tokens' (both
	// ERC-20s DAOhaus wrote).
	Contract, SharesToken, LootToken Contract
	// Multisend encodes a proposal's actions as the Baal executes them.
	multisend func(calls [][]byte) []byte
}

// BaalOptions shape a Baal: its members' shares and loot by key index, and
// its voting and grace periods in seconds.
type BaalOptions struct {
	Shares, Loot        map[int]*big.Int
	VotingPeriod, Grace uint32
	SponsorThreshold    *big.Int // default 1 share-unit: any member sponsors
	// QuorumPercent is the yes votes a proposal needs, in percent of the
	// shares when it was sponsored (default 0: none).
	QuorumPercent int64
	Name, Symbol  string
}

func baalArtifact(t testing.TB, rel string) Contract {
	t.Helper()
	Contracts(t) // installs solc/'s node_modules, the package among them
	b, err := os.ReadFile(filepath.Join(solcDir(), "node_modules", "@daohaus", "baal-contracts", "export", "artifacts", rel))
	require.NoError(t, err, "@daohaus/baal-contracts' artifact %s", rel)
	var art struct {
		ABI      json.RawMessage `json:"abi"`
		Bytecode string          `json:"bytecode"`
	}
	require.NoError(t, json.Unmarshal(b, &art))
	a, err := abi.JSON(strings.NewReader(string(art.ABI)))
	require.NoError(t, err)
	bin, err := hex.DecodeString(strings.TrimPrefix(art.Bytecode, "0x"))
	require.NoError(t, err)
	return Contract{ABI: a, Bin: bin}
}

// DeployWith deploys ct from key 0 with constructor arguments.
func (c *Chain) DeployWith(t testing.TB, ct Contract, args ...any) common.Address {
	t.Helper()
	packed, err := ct.ABI.Pack("", args...)
	require.NoError(t, err)
	h := c.Send(t, 0, nil, append(append([]byte{}, ct.Bin...), packed...))
	c.Commit(t, h)
	r, err := c.Backend.Client().TransactionReceipt(context.Background(), h)
	require.NoError(t, err)
	return r.ContractAddress
}

// SummonBaal deploys DAOhaus' contracts and summons one Baal through its
// BaalSummoner, key 0 summoning.
func (c *Chain) SummonBaal(t testing.TB, o BaalOptions) *Baal {
	t.Helper()
	if o.Name == "" {
		o.Name, o.Symbol = "Petal Baal", "PBAAL"
	}
	if o.SponsorThreshold == nil {
		o.SponsorThreshold = big.NewInt(1)
	}
	safe := c.Deploy(t, baalArtifact(t, "@gnosis.pm/safe-contracts/contracts/GnosisSafe.sol/GnosisSafe.json"))
	safeFactory := c.Deploy(t, baalArtifact(t, "@gnosis.pm/safe-contracts/contracts/proxies/GnosisSafeProxyFactory.sol/GnosisSafeProxyFactory.json"))
	multisend := c.Deploy(t, baalArtifact(t, "@gnosis.pm/safe-contracts/contracts/libraries/MultiSend.sol/MultiSend.json"))
	fallback := c.Deploy(t, baalArtifact(t, "@gnosis.pm/safe-contracts/contracts/handler/CompatibilityFallbackHandler.sol/CompatibilityFallbackHandler.json"))
	moduleFactory := c.Deploy(t, baalArtifact(t, "@gnosis.pm/zodiac/contracts/factory/ModuleProxyFactory.sol/ModuleProxyFactory.json"))
	lootC := baalArtifact(t, "contracts/LootERC20.sol/Loot.json")
	sharesC := baalArtifact(t, "contracts/SharesERC20.sol/Shares.json")
	baalC := baalArtifact(t, "contracts/Baal.sol/Baal.json")
	loot, shares, template := c.Deploy(t, lootC), c.Deploy(t, sharesC), c.Deploy(t, baalC)
	summonerC := baalArtifact(t, "contracts/BaalSummoner.sol/BaalSummoner.json")
	impl := c.Deploy(t, summonerC)
	initialize, err := summonerC.ABI.Pack("initialize")
	require.NoError(t, err)
	summoner := c.DeployWith(t, baalArtifact(t, "@openzeppelin/contracts/proxy/ERC1967/ERC1967Proxy.sol/ERC1967Proxy.json"), impl, initialize)
	c.Transact(t, 0, summonerC, summoner, "setAddrs", template, safe, fallback, multisend, safeFactory, moduleFactory, loot, shares)

	str, _ := abi.NewType("string", "", nil)
	addr, _ := abi.NewType("address", "", nil)
	u32, _ := abi.NewType("uint32", "", nil)
	u256, _ := abi.NewType("uint256", "", nil)
	params, err := abi.Arguments{{Type: str}, {Type: str}, {Type: addr}, {Type: addr}, {Type: addr}, {Type: addr}}.
		Pack(o.Name, o.Symbol, common.Address{}, common.Address{}, common.Address{}, common.Address{})
	require.NoError(t, err)
	config, err := abi.Arguments{{Type: u32}, {Type: u32}, {Type: u256}, {Type: u256}, {Type: u256}, {Type: u256}}.
		Pack(o.VotingPeriod, o.Grace, big.NewInt(0), big.NewInt(o.QuorumPercent), o.SponsorThreshold, big.NewInt(0))
	require.NoError(t, err)
	pack := func(method string, args ...any) []byte {
		b, err := baalC.ABI.Pack(method, args...)
		require.NoError(t, err)
		return b
	}
	members := func(m map[int]*big.Int) ([]common.Address, []*big.Int) {
		var to []common.Address
		var amounts []*big.Int
		for i := range len(c.Keys) {
			if v, ok := m[i]; ok {
				to, amounts = append(to, c.Address(i)), append(amounts, v)
			}
		}
		return to, amounts
	}
	actions := [][]byte{pack("setGovernanceConfig", config)}
	if to, amounts := members(o.Shares); len(to) > 0 {
		actions = append(actions, pack("mintShares", to, amounts))
	}
	if to, amounts := members(o.Loot); len(to) > 0 {
		actions = append(actions, pack("mintLoot", to, amounts))
	}
	h := c.Queue(t, 0, summonerC, summoner, "summonBaal", params, actions, big.NewInt(1))
	c.Commit(t, h)
	r, err := c.Backend.Client().TransactionReceipt(context.Background(), h)
	require.NoError(t, err)
	b := &Baal{Contract: baalC, SharesToken: sharesC, LootToken: lootC}
	summoned := summonerC.ABI.Events["SummonBaal"]
	for _, l := range r.Logs {
		if l.Address == summoner && len(l.Topics) == 4 && l.Topics[0] == summoned.ID {
			b.Address = common.BytesToAddress(l.Topics[1][:])
			b.Loot = common.BytesToAddress(l.Topics[2][:])
			b.Shares = common.BytesToAddress(l.Topics[3][:])
			vals, err := summoned.Inputs.NonIndexed().Unpack(l.Data)
			require.NoError(t, err)
			b.Safe = vals[0].(common.Address)
		}
	}
	require.NotEqual(t, common.Address{}, b.Address, "summonBaal emitted no SummonBaal")
	b.multisend = func(calls [][]byte) []byte {
		out, err := baalC.ABI.Pack("encodeMultisend", calls, b.Address)
		require.NoError(t, err)
		res, err := c.Backend.Client().CallContract(context.Background(), callMsg(b.Address, out), nil)
		require.NoError(t, err)
		vals, err := baalC.ABI.Unpack("encodeMultisend", res)
		require.NoError(t, err)
		return vals[0].([]byte)
	}
	return b
}

// Proposal is the proposal data a proposal with these Baal calls carries
// (MultiSend-encoded, as the Baal executes it when processed); none is an
// empty action list.
func (b *Baal) Proposal(t testing.TB, calls ...[]byte) []byte {
	t.Helper()
	if calls == nil {
		calls = [][]byte{}
	}
	return b.multisend(calls)
}

// Units is n whole shares or loot (18 decimals).
func Units(n int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
}

// A Baal's story the tests read: keys 0 and 1 hold 100 and 50 shares, keys 2
// and 1 hold 30 and 10 loot; the voting period is an hour, grace a minute.
//   - proposal 1, submitted by key 0 (self-sponsored): key 0 votes yes, key
//     1 no; processed after its grace, passed;
//   - proposal 2, submitted by key 1 (self-sponsored): cancelled by key 1;
//   - proposal 3, submitted by key 2 (loot only, so not sponsored), sponsored
//     by key 0, key 1 votes yes: still voting when finalized;
//   - proposal 4, submitted by key 2, never sponsored.
//
// Everything is finalized.
func (c *Chain) BaalStory(t testing.TB) *Baal {
	t.Helper()
	b := c.SummonBaal(t, BaalOptions{
		Shares: map[int]*big.Int{0: Units(100), 1: Units(50)}, Loot: map[int]*big.Int{2: Units(30), 1: Units(10)},
		VotingPeriod: 3600, Grace: 60,
	})
	none := b.Proposal(t)
	c.Transact(t, 0, b.Contract, b.Address, "submitProposal", none, uint32(0), big.NewInt(0), "Fund the garden\nSeeds and soil for spring.")
	// A vote weighs the shares held before its vote started (getPastVotes
	// refuses the present), so it goes in a later block than the start.
	c.Backend.Commit()
	c.Transact(t, 0, b.Contract, b.Address, "submitVote", uint32(1), true)
	c.Transact(t, 1, b.Contract, b.Address, "submitVote", uint32(1), false)
	c.Transact(t, 1, b.Contract, b.Address, "submitProposal", none, uint32(0), big.NewInt(0), `{"title":"Paint the fence","description":"white","proposalType":"SIGNAL"}`)
	c.Transact(t, 1, b.Contract, b.Address, "cancelProposal", uint32(2))
	c.AdjustTime(t, 3700*time.Second)
	c.Transact(t, 3, b.Contract, b.Address, "processProposal", uint32(1), none)
	c.Transact(t, 2, b.Contract, b.Address, "submitProposal", none, uint32(0), big.NewInt(0), "Plant a tree")
	c.Transact(t, 0, b.Contract, b.Address, "sponsorProposal", uint32(3))
	c.Backend.Commit()
	c.Transact(t, 1, b.Contract, b.Address, "submitVote", uint32(3), true)
	c.Transact(t, 2, b.Contract, b.Address, "submitProposal", none, uint32(0), big.NewInt(0), "")
	c.Finalize(t)
	return b
}

// BaalOutcomes is a Baal's story of the outcomes BaalStory doesn't play:
// keys 0 and 1 hold 100 and 50 shares, key 2 holds 30 loot; the voting
// period is an hour, grace a minute, the quorum 50% of the shares. All six
// proposals are submitted at once (five self-sponsored), then:
//   - 1, key 0's, voted no by key 0: defeated, never processable;
//   - 2, key 1's, voted yes by key 1 alone (a third of the shares):
//     processed, short of its quorum;
//   - 3, key 0's, expiring 5 minutes after its grace, voted yes by key 0:
//     processed after its expiration;
//   - 4, key 0's, whose action (mintShares with arrays of unequal lengths)
//     reverts, voted yes by key 0: processed, its action failed;
//   - 5, key 2's (loot only, so not sponsored), expiring 100 seconds after
//     a vote's window: never sponsored, and past its expiration;
//   - 6, key 0's, voted yes by key 0: its vote passed, never processed.
//
// The chain is then moved an hour and 6 minutes on (2 processed first, 3
// and 4 after) and everything finalized.
func (c *Chain) BaalOutcomes(t testing.TB) *Baal {
	t.Helper()
	b := c.SummonBaal(t, BaalOptions{
		Shares: map[int]*big.Int{0: Units(100), 1: Units(50)}, Loot: map[int]*big.Int{2: Units(30)},
		VotingPeriod: 3600, Grace: 60, QuorumPercent: 50,
	})
	none := b.Proposal(t)
	bad, err := b.Contract.ABI.Pack("mintShares", []common.Address{c.Address(2)}, []*big.Int{})
	require.NoError(t, err)
	failing := b.Proposal(t, bad)
	head, err := c.Backend.Client().HeaderByNumber(context.Background(), nil)
	require.NoError(t, err)
	// Expirations must pass the submission's time plus voting and grace; the
	// next block is a few seconds on at most.
	window := head.Time + 3600 + 60
	submit := func(from int, data []byte, expiration uint64, details string) {
		c.Transact(t, from, b.Contract, b.Address, "submitProposal", data, uint32(expiration), big.NewInt(0), details)
	}
	submit(0, none, 0, "Defeated")
	submit(1, none, 0, "Short of quorum")
	submit(0, none, window+300, "Expires")
	submit(0, failing, 0, "Its action fails")
	submit(2, none, window+100, "Never sponsored")
	submit(0, none, 0, "Passed, not processed")
	// A vote weighs the shares held before its vote started.
	c.Backend.Commit()
	c.Transact(t, 0, b.Contract, b.Address, "submitVote", uint32(1), false)
	c.Transact(t, 1, b.Contract, b.Address, "submitVote", uint32(2), true)
	c.Transact(t, 0, b.Contract, b.Address, "submitVote", uint32(3), true)
	c.Transact(t, 0, b.Contract, b.Address, "submitVote", uint32(4), true)
	c.Transact(t, 0, b.Contract, b.Address, "submitVote", uint32(6), true)
	c.AdjustTime(t, 3700*time.Second)
	c.Transact(t, 3, b.Contract, b.Address, "processProposal", uint32(2), none)
	c.AdjustTime(t, 400*time.Second)
	c.Transact(t, 3, b.Contract, b.Address, "processProposal", uint32(3), none)
	c.Transact(t, 3, b.Contract, b.Address, "processProposal", uint32(4), failing)
	c.Finalize(t)
	return b
}
