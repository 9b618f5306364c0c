package snapshotsapp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	adevm "github.com/petal-near/petal/adapters/evm"
	"github.com/petal-near/petal/adapters/evm/evmtest"
	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/nearrpc"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// erc20Chain is a simulated chain with OpenZeppelin's ERC20Votes after
// mints, transfers, burns and delegations, a rebasing token that has
// rebased, a fee-on-transfer token after a transfer and an ERC-721 after a
// mint, everything finalized.
type erc20Chain struct {
	*evmtest.Chain
	votes, rebasing, fee, nft evmtest.Contract
	token, rebaser            common.Address
	feeToken, nftToken        common.Address
	accounts                  []common.Address
}

func newERC20Chain(t *testing.T) *erc20Chain {
	t.Helper()
	c := evmtest.NewChain(t, evmtest.Options{Accounts: 4})
	contracts := evmtest.Contracts(t)
	e := &erc20Chain{Chain: c, votes: contracts["PetalVotes"], rebasing: contracts["PetalRebasing"], fee: contracts["PetalFeeOnTransfer"], nft: contracts["PetalNFT"]}
	e.token = c.Deploy(t, e.votes)
	e.rebaser = c.Deploy(t, e.rebasing)
	e.feeToken = c.Deploy(t, e.fee)
	e.nftToken = c.Deploy(t, e.nft)
	for i := range 4 {
		e.accounts = append(e.accounts, c.Address(i))
	}
	for i := range 5 {
		e.accounts = append(e.accounts, common.BigToAddress(big.NewInt(int64(0xfeed00+i))))
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	tokens := func(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), unit) }
	var txs []common.Hash
	for i := range 4 {
		txs = append(txs, c.Queue(t, 0, e.votes, e.token, "mint", e.accounts[i], tokens(int64(100*(i+1)))))
	}
	c.Commit(t, txs...)
	c.Transact(t, 3, e.votes, e.token, "scatter", e.accounts[4:9], []*big.Int{tokens(10), tokens(20), tokens(30), big.NewInt(1), big.NewInt(5)})
	c.Transact(t, 1, e.votes, e.token, "transfer", e.accounts[2], tokens(50))
	c.Transact(t, 0, e.votes, e.token, "burn", e.accounts[0], tokens(100)) // burnt empty
	c.Transact(t, 2, e.votes, e.token, "delegate", e.accounts[2])
	c.Transact(t, 3, e.votes, e.token, "delegate", e.accounts[2])
	c.Transact(t, 1, e.votes, e.token, "delegate", e.accounts[1])
	c.Transact(t, 3, e.votes, e.token, "transfer", e.accounts[1], tokens(7))

	c.Transact(t, 0, e.rebasing, e.rebaser, "mint", e.accounts[0], tokens(100))
	c.Transact(t, 0, e.rebasing, e.rebaser, "transfer", e.accounts[1], tokens(40))
	c.Transact(t, 0, e.rebasing, e.rebaser, "rebase", big.NewInt(2))

	c.Transact(t, 1, e.fee, e.feeToken, "mint", e.accounts[1], tokens(100))
	c.Transact(t, 1, e.fee, e.feeToken, "transfer", e.accounts[2], tokens(50))
	c.Transact(t, 0, e.nft, e.nftToken, "mint", e.accounts[1], big.NewInt(7))
	c.Finalize(t)
	return e
}

// evmService is a snapshot service reading the chain, with caps from env.
func evmService(t *testing.T, e *erc20Chain, env map[string]string) (*snapshotsapp.SnapshotService, ports.SnapshotStore) {
	t.Helper()
	cfg, err := config.LoadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	client, err := adevm.New(adevm.Options{Endpoints: map[uint64][]string{evmtest.ChainID: {e.URL}}})
	require.NoError(t, err)
	t.Cleanup(client.Close)
	store := memory.NewSnapshotStore()
	clock := &setClock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	near := nearrpc.New(nearrpc.Options{URLs: map[string]string{}})
	svc := snapshotsapp.NewSnapshotService(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)),
		snapshotsapp.NewSnapshotLibrary(cfg, store, ports.NoMetrics{}), memory.NewDAODirectory(), near, clock, memory.NewSemaphore(clock)).WithEVM(client)
	return svc, store
}

func whole(v *big.Int) string {
	r := new(big.Rat).SetFrac(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
	s := r.FloatString(18)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func params(e *erc20Chain, token common.Address) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"chain":"eip155:%d","token":"%s"}`, evmtest.ChainID, token.Hex()))
}

func TestERC20HoldersAndDelegatesAreWhatTheTokenSays(t *testing.T) {
	e := newERC20Chain(t)
	svc, _ := evmService(t, e, nil)
	var events []toolkit.Progress
	snap, err := svc.Read(t.Context(), "evm-erc20-holders", params(e, e.token), func(p toolkit.Progress) { events = append(events, p) })
	require.NoError(t, err)
	require.Empty(t, snapshots.Validate(snap))
	assert.Equal(t, "eip155:1337", snap.Chain)
	assert.Equal(t, "PVT holders", snap.Title)
	assert.Equal(t, fmt.Sprintf(`{"chain":"eip155:1337","token":"%s"}`, strings.ToLower(e.token.Hex())), string(snap.Params))

	// Every account with a balance, weighed as balanceOf says, in whole tokens.
	want := map[string]string{}
	for _, a := range e.accounts {
		if b := e.Call(t, e.votes, e.token, "balanceOf", a).(*big.Int); b.Sign() > 0 {
			want["eip155:1337:"+strings.ToLower(a.Hex())] = whole(b)
		}
	}
	got := map[string]string{}
	for _, a := range snap.Accounts {
		got[a.ID] = a.Weight
		assert.Equal(t, []string{"holders"}, a.Groups)
	}
	assert.Equal(t, want, got)
	assert.Len(t, snap.Accounts, 8, "the account burnt empty is no holder")
	assert.Equal(t, "eip155:1337:"+strings.ToLower(e.accounts[2].Hex()), snap.Accounts[0].ID, "largest first")
	var stages []string
	for _, p := range events {
		stages = append(stages, p.Stage)
	}
	assert.Equal(t, []string{"block", "token", "logs"}, stages[:3])
	assert.Contains(t, stages, "check")
	last := events[len(events)-1]
	for _, p := range events {
		if p.Stage == "logs" && p.Done != nil {
			last = p
		}
	}
	assert.Equal(t, *last.Total, *last.Done, "every block read")
	assert.Contains(t, last.Message, "8 holders so far")

	delegates, err := svc.Read(t.Context(), "evm-erc20-delegates", params(e, e.token), nil)
	require.NoError(t, err)
	require.Empty(t, snapshots.Validate(delegates))
	wantVotes := map[string]string{}
	for _, a := range e.accounts {
		if v := e.Call(t, e.votes, e.token, "getVotes", a).(*big.Int); v.Sign() > 0 {
			wantVotes["eip155:1337:"+strings.ToLower(a.Hex())] = whole(v)
		}
	}
	gotVotes := map[string]string{}
	for _, a := range delegates.Accounts {
		gotVotes[a.ID] = a.Weight
	}
	assert.Equal(t, wantVotes, gotVotes)
	assert.Len(t, gotVotes, 2)
	assert.Equal(t, "PVT delegates", delegates.Title)
}

func TestATokenWhoseLogsDontAddUpIsRefused(t *testing.T) {
	e := newERC20Chain(t)
	svc, store := evmService(t, e, nil)
	_, err := svc.Read(t.Context(), "evm-erc20-holders", params(e, e.rebaser), nil)
	ee, ok := errs.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errs.CannotRead, ee.Code)
	assert.Contains(t, ee.Message, "Transfer logs don't add up, so petal won't draw them")
	assert.Contains(t, ee.Message, "totalSupply says 200000000000000000000", "the supply doubled by the rebase")
	assert.Contains(t, ee.Hint, "rebasing or fee-on-transfer")

	// Fresh through get_snapshot: refused, and nothing kept.
	_, err = runGetSnapshot(t, svc, "evm-erc20-holders", params(e, e.rebaser))
	assert.Equal(t, errs.CannotRead, errs.CodeOf(err))
	key, _ := snapshots.TargetKey("evm-erc20-holders", json.RawMessage(fmt.Sprintf(`{"chain":"eip155:1337","token":"%s"}`, strings.ToLower(e.rebaser.Hex()))))
	_, err = store.Latest(t.Context(), key)
	assert.True(t, errs.Is(err, errs.NotFound), "a failed read keeps nothing: %v", err)
}

// A fee-on-transfer token's supply adds up but its balances don't: the
// check of the largest holders against balanceOf refuses it. An NFT is
// refused as no ERC-20, before any log is read.
func TestAFeeOnTransferTokenAndAnNFTAreRefused(t *testing.T) {
	e := newERC20Chain(t)
	svc, store := evmService(t, e, nil)
	_, err := runGetSnapshot(t, svc, "evm-erc20-holders", params(e, e.feeToken))
	ee, ok := errs.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errs.CannotRead, ee.Code)
	assert.Contains(t, ee.Message, "Transfer logs don't add up, so petal won't draw them")
	assert.Contains(t, ee.Message, fmt.Sprintf("%s holds 49000000000000000000 by balanceOf but 50000000000000000000 by its logs", strings.ToLower(e.accounts[2].Hex())),
		"the recipient got 2% less than its log says")
	assert.Contains(t, ee.Hint, "fee-on-transfer")
	key, _ := snapshots.TargetKey("evm-erc20-holders", json.RawMessage(fmt.Sprintf(`{"chain":"eip155:1337","token":"%s"}`, strings.ToLower(e.feeToken.Hex()))))
	_, err = store.Latest(t.Context(), key)
	assert.True(t, errs.Is(err, errs.NotFound), "a failed read keeps nothing: %v", err)

	for _, network := range []string{"evm-erc20-holders", "evm-erc20-delegates"} {
		_, err = runGetSnapshot(t, svc, network, params(e, e.nftToken))
		ee, ok = errs.As(err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, errs.CannotRead, ee.Code, network)
		assert.Contains(t, ee.Message, strings.ToLower(e.nftToken.Hex())+" is not an ERC-20 petal can read: its decimals gave execution reverted", network)
	}
}

func findTarget(t *testing.T, svc *snapshotsapp.SnapshotService, input string) (snapshotsapp.FindAnswer, error) {
	t.Helper()
	for _, tool := range svc.Tools() {
		if tool.Name == "find_target" {
			out, err := tool.Run(t.Context(), toolkit.Call{Input: json.RawMessage(input), Progress: func(toolkit.Progress) {}})
			if err != nil {
				return snapshotsapp.FindAnswer{}, err
			}
			return out.(snapshotsapp.FindAnswer), nil
		}
	}
	t.Fatal("no find_target tool")
	return snapshotsapp.FindAnswer{}, nil
}

func TestFindTargetKnowsAnEVMTokenByProbingIt(t *testing.T) {
	e := newERC20Chain(t)
	svc, _ := evmService(t, e, nil)
	token := strings.ToLower(e.token.Hex())
	p := fmt.Sprintf(`{"chain":"eip155:1337","token":"%s"}`, token)

	ans, err := findTarget(t, svc, fmt.Sprintf(`{"query":"who holds %s","chain":"eip155:1337"}`, e.token.Hex()))
	require.NoError(t, err)
	require.Len(t, ans.Candidates, 2, "ERC20Votes: its holders and its delegates")
	assert.Equal(t, "evm-erc20-holders", ans.Candidates[0].Network)
	assert.JSONEq(t, p, string(ans.Candidates[0].Params))
	assert.Equal(t, "evm-erc20-holders"+p, ans.Candidates[0].TargetKey)
	assert.Equal(t, "Holders of PVT", ans.Candidates[0].Title)
	assert.Contains(t, ans.Candidates[0].About, "Petal Votes (PVT, 18 decimals)")
	assert.Equal(t, "evm-erc20-delegates", ans.Candidates[1].Network)
	assert.False(t, ans.Ambiguous)
	// What it proposes reads.
	_, err = svc.Read(t.Context(), ans.Candidates[1].Network, ans.Candidates[1].Params, nil)
	require.NoError(t, err)

	// Asked for delegates, by the token's CAIP-10 id and no chain.
	ans, err = findTarget(t, svc, fmt.Sprintf(`{"query":"delegates of eip155:1337:%s"}`, token))
	require.NoError(t, err)
	require.Len(t, ans.Candidates, 2)
	assert.Equal(t, "evm-erc20-delegates", ans.Candidates[0].Network)
	assert.Equal(t, "Delegates of PVT", ans.Candidates[0].Title)

	// A plain ERC-20 has holders only.
	ans, err = findTarget(t, svc, fmt.Sprintf(`{"query":"%s","chain":"eip155:1337","limit":1}`, e.rebaser.Hex()))
	require.NoError(t, err)
	require.Len(t, ans.Candidates, 1)
	assert.Equal(t, "evm-erc20-holders", ans.Candidates[0].Network)

	for _, c := range []struct{ input, code, says string }{
		{fmt.Sprintf(`{"query":"%s","chain":"eip155:1337"}`, e.nftToken.Hex()), "cannot_read", "is not an ERC-20 petal can read: its decimals gave execution reverted"},
		{`{"query":"0x00000000000000000000000000000000000000aa","chain":"eip155:1337"}`, "not_found", "no contract at 0x00000000000000000000000000000000000000aa"},
		{`{"query":"the petal votes token","chain":"eip155:1337"}`, "bad_input", "find_target needs the contract's address"},
		{`{"query":"0x00000000000000000000000000000000000000aa","chain":"eip155:100"}`, "bad_input", "eip155:100 (Gnosis) can't be read here"},
		{`{"query":"0x00000000000000000000000000000000000000aa"}`, "bad_input", "names an EVM address but no EVM chain"},
	} {
		_, err := findTarget(t, svc, c.input)
		ee, ok := errs.As(err)
		require.True(t, ok, "%s: %v", c.input, err)
		assert.Equal(t, errs.Code(c.code), ee.Code, c.input)
		assert.Contains(t, ee.Message, c.says, c.input)
	}
}

func runGetSnapshot(t *testing.T, svc *snapshotsapp.SnapshotService, network string, p json.RawMessage) (snapshotsapp.SnapshotAnswer, error) {
	t.Helper()
	for _, tool := range svc.Tools() {
		if tool.Name == "get_snapshot" {
			in, _ := json.Marshal(map[string]any{"network": network, "params": p, "fresh": true})
			out, err := tool.Run(t.Context(), toolkit.Call{Input: in, Caller: toolkit.Caller{Address: "203.0.113.9"}, Progress: func(toolkit.Progress) {}})
			if err != nil {
				return snapshotsapp.SnapshotAnswer{}, err
			}
			return out.(snapshotsapp.SnapshotAnswer), nil
		}
	}
	t.Fatal("no get_snapshot tool")
	return snapshotsapp.SnapshotAnswer{}, nil
}

func TestAFreshEVMReadIsStoredAsAnyOther(t *testing.T) {
	e := newERC20Chain(t)
	svc, _ := evmService(t, e, nil)
	answer, err := runGetSnapshot(t, svc, "evm-erc20-holders", params(e, e.token))
	require.NoError(t, err)
	assert.Equal(t, 8, answer.Count)
	assert.False(t, answer.StoredOnly)
	assert.Equal(t, fmt.Sprintf(`evm-erc20-holders{"chain":"eip155:1337","token":"%s"}`, strings.ToLower(e.token.Hex())), answer.TargetKey)
}

func TestEVMReadsPastTheirCapsAreRefused(t *testing.T) {
	e := newERC20Chain(t)
	holders, _ := evmService(t, e, map[string]string{"PETAL_EVM_MAX_HOLDERS": "3"})
	_, err := holders.Read(t.Context(), "evm-erc20-holders", params(e, e.token), nil)
	ee, ok := errs.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errs.CannotRead, ee.Code)
	assert.Contains(t, ee.Message, "more than 3 accounts hold")
	assert.Contains(t, ee.Hint, "PETAL_EVM_MAX_HOLDERS")

	logs, _ := evmService(t, e, map[string]string{"PETAL_EVM_MAX_LOGS": "4"})
	_, err = logs.Read(t.Context(), "evm-erc20-holders", params(e, e.token), nil)
	ee, ok = errs.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errs.CannotRead, ee.Code)
	assert.Contains(t, ee.Message, "more than 4 Transfer logs")
}

func TestEVMParamsAreChecked(t *testing.T) {
	e := newERC20Chain(t)
	svc, _ := evmService(t, e, nil)
	for _, c := range []struct {
		network, params, code, says string
	}{
		{"evm-erc20-holders", `{"chain":"eip155:100","token":"0x0000000000000000000000000000000000000001"}`, "bad_input", "eip155:100 (Gnosis) can't be read here"},
		{"evm-erc20-holders", `{"chain":"near:mainnet","token":"0x0000000000000000000000000000000000000001"}`, "bad_input", "must be an EVM chain's CAIP-2 id"},
		{"evm-erc20-holders", `{"chain":"eip155:1337","token":"usdt.near"}`, "bad_input", "is not an EVM address"},
		{"evm-erc20-holders", `{"chain":"eip155:1337"}`, "bad_input", "params.token is required"},
		{"evm-erc20-delegates", `{"chain":"eip155:1337","token":"0x0000000000000000000000000000000000000001","from_block":3}`, "bad_input", "params.from_block"},
		{"evm-erc20-holders", `{"chain":"eip155:1337","token":"0x00000000000000000000000000000000000000aa"}`, "not_found", "no contract at 0x00000000000000000000000000000000000000aa"},
	} {
		_, err := svc.Read(t.Context(), c.network, json.RawMessage(c.params), nil)
		ee, ok := errs.As(err)
		require.True(t, ok, "%s: %v", c.params, err)
		assert.Equal(t, errs.Code(c.code), ee.Code, c.params)
		assert.Contains(t, ee.Message, c.says, c.params)
	}
	_, err := svc.Read(t.Context(), "evm-erc20-holders", json.RawMessage(`{"chain":"eip155:100","token":"0x0000000000000000000000000000000000000001"}`), nil)
	ee, _ := errs.As(err)
	assert.Contains(t, ee.Hint, "PETAL_EVM_RPC_100")

	// The same token by its CAIP-10 id, in capitals, is the same target.
	caip := json.RawMessage(fmt.Sprintf(`{"chain":"eip155:1337","token":"eip155:1337:0x%s","from_block":0}`, strings.ToUpper(e.token.Hex()[2:])))
	snap, err := svc.Read(t.Context(), "evm-erc20-holders", caip, nil)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf(`{"chain":"eip155:1337","token":"%s"}`, strings.ToLower(e.token.Hex())), string(snap.Params))
}

// A provider that never answers holds a fresh read no longer than the
// fresh-read deadline: source_failed, and nothing kept.
func TestAStalledEVMReadEndsAtTheFreshReadDeadline(t *testing.T) {
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read to the end first: only then does net/http watch the
		// connection, so the client going away ends the wait (unread,
		// the handler sat out its minute and Close waited on it).
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
	}))
	t.Cleanup(stall.Close)
	cfg, err := config.LoadConfig(func(k string) string { return map[string]string{"PETAL_FRESH_READ_TIMEOUT_S": "1"}[k] })
	require.NoError(t, err)
	client, err := adevm.New(adevm.Options{Endpoints: map[uint64][]string{evmtest.ChainID: {stall.URL}}})
	require.NoError(t, err)
	t.Cleanup(client.Close)
	store := memory.NewSnapshotStore()
	clock := &setClock{now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	svc := snapshotsapp.NewSnapshotService(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)),
		snapshotsapp.NewSnapshotLibrary(cfg, store, ports.NoMetrics{}), memory.NewDAODirectory(), nearrpc.New(nearrpc.Options{}), clock, memory.NewSemaphore(clock)).WithEVM(client)
	p := json.RawMessage(`{"chain":"eip155:1337","token":"0x0000000000000000000000000000000000000001"}`)
	_, err = runGetSnapshot(t, svc, "evm-erc20-holders", p)
	ee, ok := errs.As(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, errs.SourceFailed, ee.Code)
	assert.Contains(t, ee.Message, "longer than 1 s")
	key, _ := snapshots.TargetKey("evm-erc20-holders", p)
	_, err = store.Latest(t.Context(), key)
	assert.True(t, errs.Is(err, errs.NotFound), "nothing kept: %v", err)
}
