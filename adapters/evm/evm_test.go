package evm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	adevm "github.com/petal-near/petal/adapters/evm"
	"github.com/petal-near/petal/adapters/evm/evmtest"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/ports"
)

// votesChain is a chain with OpenZeppelin's ERC20Votes on it after mints,
// transfers, burns and delegations, everything finalized.
type votesChain struct {
	*evmtest.Chain
	token    evmtest.Contract
	at       common.Address
	accounts []common.Address
}

func newVotesChain(t *testing.T) *votesChain {
	t.Helper()
	c := evmtest.NewChain(t, evmtest.Options{Accounts: 4})
	token := evmtest.Contracts(t)["PetalVotes"]
	v := &votesChain{Chain: c, token: token, at: c.Deploy(t, token)}
	for i := range 4 {
		v.accounts = append(v.accounts, c.Address(i))
	}
	// Accounts that never send: only received.
	for i := range 6 {
		v.accounts = append(v.accounts, common.BigToAddress(big.NewInt(int64(0xbeef00+i))))
	}
	e18 := new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	units := func(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), e18) }
	// Mints in one block, transfers and burns over several.
	var txs []common.Hash
	for i := range 4 {
		txs = append(txs, c.Queue(t, 0, token, v.at, "mint", v.accounts[i], units(int64(1000*(i+1)))))
	}
	c.Commit(t, txs...)
	c.Transact(t, 1, token, v.at, "transfer", v.accounts[4], units(250))
	c.Transact(t, 2, token, v.at, "transfer", v.accounts[5], units(1))
	c.Transact(t, 3, token, v.at, "scatter", v.accounts[4:10], []*big.Int{units(1), units(2), units(3), units(4), units(5), big.NewInt(7)})
	c.Transact(t, 0, token, v.at, "burn", v.accounts[3], units(100))
	c.Transact(t, 0, token, v.at, "burn", v.accounts[4], units(251)) // empties it
	// Delegations: two to themselves, one to another, one moved away later.
	c.Transact(t, 1, token, v.at, "delegate", v.accounts[1])
	c.Transact(t, 2, token, v.at, "delegate", v.accounts[1])
	c.Transact(t, 3, token, v.at, "delegate", v.accounts[3])
	c.Transact(t, 0, token, v.at, "delegate", v.accounts[2])
	c.Transact(t, 0, token, v.at, "delegate", v.accounts[0])
	c.Transact(t, 2, token, v.at, "transfer", v.accounts[3], units(500)) // moves votes between delegates
	c.Finalize(t)
	return v
}

func client(t *testing.T, o adevm.Options) *adevm.Client {
	t.Helper()
	c, err := adevm.New(o)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func chainName() string { return evm.Chain(evmtest.ChainID) }

// readAll reads the token's holders and delegates through the adapter.
func readAll(t *testing.T, c *adevm.Client, token common.Address, maxLogs int) (ports.EVMReading, *evm.Ledger, *evm.Ledger) {
	t.Helper()
	ctx := context.Background()
	r, err := c.PinEVM(ctx, chainName())
	require.NoError(t, err)
	holders, delegates := evm.NewLedger(1000), evm.NewLedger(1000)
	var last [2]uint64
	require.NoError(t, r.Transfers(ctx, evm.Address(token), 0, maxLogs, holders.ApplyTransfer, func(read, total uint64, _ int) {
		assert.Greater(t, read, last[0], "progress only goes forward")
		last = [2]uint64{read, total}
	}))
	assert.Equal(t, last[0], last[1], "every block read")
	require.NoError(t, r.VotesChanges(ctx, evm.Address(token), 0, maxLogs, delegates.ApplyVotes, nil))
	return r, holders, delegates
}

func TestHoldersAndDelegatesAreWhatTheTokenSays(t *testing.T) {
	v := newVotesChain(t)
	c := client(t, adevm.Options{Endpoints: map[uint64][]string{evmtest.ChainID: {v.URL}}})
	r, holders, delegates := readAll(t, c, v.at, 1000)
	ctx := context.Background()

	accounts := make([]evm.Address, len(v.accounts))
	for i, a := range v.accounts {
		accounts[i] = evm.Address(a)
	}
	balances, err := r.BalancesOf(ctx, evm.Address(v.at), accounts)
	require.NoError(t, err)
	votes, err := r.VotesOf(ctx, evm.Address(v.at), accounts)
	require.NoError(t, err)
	for i, a := range v.accounts {
		assert.Equal(t, v.Call(t, v.token, v.at, "balanceOf", a).(*big.Int).String(), holders.Of(evm.Address(a)).String(), "balance of %s", a.Hex())
		assert.Equal(t, balances[i], holders.Of(evm.Address(a)), "balanceOf at the pinned block, %s", a.Hex())
		assert.Equal(t, v.Call(t, v.token, v.at, "getVotes", a).(*big.Int).String(), delegates.Of(evm.Address(a)).String(), "votes of %s", a.Hex())
		assert.Equal(t, votes[i], delegates.Of(evm.Address(a)))
	}
	assert.Equal(t, 9, holders.Holders(), "the account burnt empty holds nothing")
	assert.Equal(t, 3, delegates.Holders(), "three delegates hold votes")

	tok, err := r.Token(ctx, evm.Address(v.at))
	require.NoError(t, err)
	assert.Equal(t, evm.Token{Name: "Petal Votes", Symbol: "PVT", Decimals: 18, TotalSupply: holders.Supply()}, tok)
	require.NoError(t, holders.CheckSupply(tok.TotalSupply))
	require.NoError(t, delegates.CheckVotesWithin(tok.TotalSupply))

	assert.Equal(t, chainName(), "eip155:1337")
	src := r.Source()
	methods := map[string]int{}
	for _, call := range src.Calls {
		assert.Equal(t, strings.ToLower(v.at.Hex()), call.Contract)
		methods[call.Method] = max(call.Pages, 1)
	}
	assert.Equal(t, len(accounts), methods["balanceOf"])
	assert.Contains(t, methods, "eth_getLogs(Transfer)")
	assert.Contains(t, methods, "eth_getLogs(DelegateVotesChanged)")
}

func TestAReadingIsPinnedToTheFinalizedBlock(t *testing.T) {
	v := newVotesChain(t)
	c := client(t, adevm.Options{Endpoints: map[uint64][]string{evmtest.ChainID: {v.URL}}})
	ctx := context.Background()
	r, err := c.PinEVM(ctx, chainName())
	require.NoError(t, err)
	before := v.Call(t, v.token, v.at, "balanceOf", v.accounts[0]).(*big.Int)
	// Mined after the pin, and not finalized: not in the reading.
	v.Transact(t, 0, v.token, v.at, "mint", v.accounts[0], big.NewInt(5))
	holders := evm.NewLedger(100)
	require.NoError(t, r.Transfers(ctx, evm.Address(v.at), 0, 1000, holders.ApplyTransfer, nil))
	assert.Equal(t, before.String(), holders.Of(evm.Address(v.accounts[0])).String())
	got, err := r.BalancesOf(ctx, evm.Address(v.at), []evm.Address{evm.Address(v.accounts[0])})
	require.NoError(t, err)
	assert.Equal(t, before.String(), got[0].String(), "balanceOf at the pinned block, by its hash")
	head, err := v.Backend.Client().BlockNumber(ctx)
	require.NoError(t, err)
	assert.Less(t, r.Block().Height, head)
	assert.Zero(t, r.Block().Height%32, "the simulated beacon finalizes every 32nd block")
	assert.Regexp(t, `^0x[0-9a-f]{64}$`, r.Block().Hash)
}

// refusingProxy stands in front of a chain as a public provider does: it
// refuses eth_getLogs over more than maxRange blocks (with the words of the
// JSON-RPC error Infura and others send), answers the first request of all
// with 429 and a Retry-After, and counts what it forwards.
type refusingProxy struct {
	*httptest.Server
	refused, forwarded, throttled atomic.Int64
}

func newRefusingProxy(t *testing.T, upstream string, maxRange uint64) *refusingProxy {
	p := &refusingProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if p.throttled.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		var req struct {
			ID     json.RawMessage   `json:"id"`
			Method string            `json:"method"`
			Params []json.RawMessage `json:"params"`
		}
		if json.Unmarshal(body, &req) == nil && req.Method == "eth_getLogs" {
			var q struct{ FromBlock, ToBlock string }
			require.NoError(t, json.Unmarshal(req.Params[0], &q))
			from, _ := hexutil.DecodeUint64(q.FromBlock)
			to, _ := hexutil.DecodeUint64(q.ToBlock)
			if to-from+1 > maxRange {
				p.refused.Add(1)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32005,"message":"query returned more than 10000 results. Try with this block range [` + strconv.FormatUint(from, 10) + `, ...]."}}`))
				return
			}
		}
		p.forwarded.Add(1)
		res, err := http.Post(upstream, "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(res.StatusCode)
		_, _ = io.Copy(w, res.Body)
	}))
	t.Cleanup(p.Close)
	return p
}

func TestAProviderThatRefusesLargeRangesIsStillReadWhole(t *testing.T) {
	v := newVotesChain(t)
	want, wantHolders, wantDelegates := readAll(t, client(t, adevm.Options{Endpoints: map[uint64][]string{evmtest.ChainID: {v.URL}}}), v.at, 1000)

	proxy := newRefusingProxy(t, v.URL, 4)
	// The first endpoint is down: every call fails over to the proxy.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	c := client(t, adevm.Options{Endpoints: map[uint64][]string{evmtest.ChainID: {deadURL, proxy.URL}}, FirstRange: 1000})
	got, holders, delegates := readAll(t, c, v.at, 1000)

	assert.Equal(t, want.Block(), got.Block())
	assert.Equal(t, wantHolders.Top(100), holders.Top(100))
	assert.Equal(t, wantDelegates.Top(100), delegates.Top(100))
	assert.Positive(t, proxy.refused.Load(), "the proxy refused ranges")
	assert.GreaterOrEqual(t, proxy.throttled.Load(), int64(2), "the 429 was tried again")
	assert.GreaterOrEqual(t, c.Requests(evmtest.ChainID), proxy.forwarded.Load()+proxy.refused.Load()+1)
}

func TestAReadPastTheLogCapIsRefused(t *testing.T) {
	v := newVotesChain(t)
	c := client(t, adevm.Options{Endpoints: map[uint64][]string{evmtest.ChainID: {v.URL}}})
	ctx := context.Background()
	r, err := c.PinEVM(ctx, chainName())
	require.NoError(t, err)
	err = r.Transfers(ctx, evm.Address(v.at), 0, 5, evm.NewLedger(100).ApplyTransfer, nil)
	require.Error(t, err)
	assert.Equal(t, errs.CannotRead, errs.CodeOf(err))
	assert.Contains(t, err.Error(), "more than 5 Transfer logs")
}

func TestAChainWithoutASettingIsBadInput(t *testing.T) {
	c := client(t, adevm.Options{Endpoints: map[uint64][]string{1: {"http://127.0.0.1:1/"}}})
	_, err := c.PinEVM(context.Background(), "eip155:100")
	e, ok := errs.As(err)
	require.True(t, ok)
	assert.Equal(t, errs.BadInput, e.Code)
	assert.Contains(t, e.Message, "eip155:100 (Gnosis)")
	assert.Contains(t, e.Hint, "PETAL_EVM_RPC_100")
	assert.Equal(t, []uint64{1}, c.EVMChains())

	_, err = adevm.New(adevm.Options{Endpoints: map[uint64][]string{5: {"ftp://x"}}})
	require.ErrorContains(t, err, "PETAL_EVM_RPC_5")
}

func TestNoContractIsNotFoundAndAnNFTIsNoToken(t *testing.T) {
	v := newVotesChain(t)
	c := client(t, adevm.Options{Endpoints: map[uint64][]string{evmtest.ChainID: {v.URL}}})
	ctx := context.Background()
	r, err := c.PinEVM(ctx, chainName())
	require.NoError(t, err)
	_, err = r.Token(ctx, evm.Address{0x12})
	assert.Equal(t, errs.NotFound, errs.CodeOf(err))
}
