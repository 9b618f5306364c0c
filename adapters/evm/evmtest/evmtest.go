// Package evmtest runs a real EVM for the tests: go-ethereum's simulated
// backend (the geth node and EVM in process, mining a block on each Commit)
// with its JSON-RPC served over HTTP on loopback, so petal's adapter talks to
// it as to any provider, and real contracts on it: OpenZeppelin's
// ERC20Votes and a rebasing token, compiled from their sources with solc-js
// from npm (solc/, installed from its lock file on first use as cmd/petal's
// npm tools are), and a Baal from DAOhaus' published artifacts (baal.go). Without node and npm the tests fail: they never skip.
package evmtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/params"
	"github.com/stretchr/testify/require"
)

// ChainID is the simulated chain's id (go-ethereum's dev chain).
var ChainID = params.AllDevChainProtocolChanges.ChainID.Uint64()

// Contract is one compiled contract.
type Contract struct {
	ABI abi.ABI
	Bin []byte
}

var (
	compileOnce sync.Once
	compiled    map[string]Contract
	compileErr  error
)

func solcDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "solc")
}

// Contracts compiles solc/contracts (once per process; the output is kept
// in node_modules beside the compiler, named by the sources' hash).
func Contracts(t testing.TB) map[string]Contract {
	t.Helper()
	compileOnce.Do(func() { compiled, compileErr = compileContracts() })
	require.NoError(t, compileErr)
	return compiled
}

func compileContracts() (map[string]Contract, error) {
	dir := solcDir()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s is not on PATH: the EVM tests compile their contracts with solc-js from npm and never skip", tool)
		}
	}
	// Test binaries of several packages may start at once: one installs.
	lock, err := os.OpenFile(filepath.Join(dir, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	defer func() { _ = lock.Close() }()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing the file unlocks it too
	// A node_modules installed before the lock named every package (the Baal's
	// artifacts came later) is brought up to it.
	_, solcErr := os.Stat(filepath.Join(dir, "node_modules", "solc", "soljson.js"))
	_, baalErr := os.Stat(filepath.Join(dir, "node_modules", "@daohaus", "baal-contracts", "package.json"))
	if solcErr != nil || baalErr != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("npm ci in %s: %v: %s", dir, err, out)
		}
	}
	h := sha256.New()
	for _, name := range []string{"compile.js", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		h.Write(b)
	}
	sols, _ := filepath.Glob(filepath.Join(dir, "contracts", "*.sol"))
	for _, f := range sols {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		h.Write([]byte(filepath.Base(f)))
		h.Write(b)
	}
	cache := filepath.Join(dir, "node_modules", ".petal-compiled-"+hex.EncodeToString(h.Sum(nil))[:16]+".json")
	out, err := os.ReadFile(cache)
	if err != nil {
		cmd := exec.Command("node", "compile.js")
		cmd.Dir = dir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if out, err = cmd.Output(); err != nil {
			return nil, fmt.Errorf("solc-js: %v: %s", err, stderr.String())
		}
		if err := os.WriteFile(cache, out, 0o644); err != nil {
			return nil, err
		}
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(out, &raw); err != nil {
		return nil, err
	}
	contracts := map[string]Contract{}
	for name, body := range raw {
		if name == "solc" {
			continue
		}
		var c struct {
			ABI json.RawMessage `json:"abi"`
			Bin string          `json:"bin"`
		}
		if err := json.Unmarshal(body, &c); err != nil {
			return nil, err
		}
		a, err := abi.JSON(strings.NewReader(string(c.ABI)))
		if err != nil {
			return nil, fmt.Errorf("%s's ABI: %w", name, err)
		}
		bin, err := hex.DecodeString(c.Bin)
		if err != nil {
			return nil, err
		}
		contracts[name] = Contract{ABI: a, Bin: bin}
	}
	return contracts, nil
}

// Chain is a running simulated chain served over HTTP.
type Chain struct {
	Backend *simulated.Backend
	URL     string
	Keys    []*ecdsa.PrivateKey
	nonces  map[common.Address]uint64
	mu      sync.Mutex
}

// Options shape a chain.
type Options struct {
	// Accounts is how many funded keys it has (default 4).
	Accounts int
	// GasLimit is each block's gas limit (default go-ethereum's).
	GasLimit uint64
}

// NewChain starts a chain; it stops when the test ends.
func NewChain(t testing.TB, o Options) *Chain {
	t.Helper()
	if o.Accounts <= 0 {
		o.Accounts = 4
	}
	alloc := types.GenesisAlloc{}
	c := &Chain{nonces: map[common.Address]uint64{}}
	for range o.Accounts {
		k, err := crypto.GenerateKey()
		require.NoError(t, err)
		c.Keys = append(c.Keys, k)
		alloc[crypto.PubkeyToAddress(k.PublicKey)] = types.Account{Balance: new(big.Int).Lsh(big.NewInt(1), 100)}
	}
	port := freePort(t)
	c.Backend = simulated.NewBackend(alloc, func(nc *node.Config, ec *ethconfig.Config) {
		nc.HTTPHost = "127.0.0.1"
		nc.HTTPPort = port
		nc.HTTPModules = []string{"eth", "net", "web3"}
		nc.HTTPVirtualHosts = []string{"*"}
		if o.GasLimit > 0 {
			ec.Genesis.GasLimit = o.GasLimit
			ec.Miner.GasCeil = o.GasLimit
		}
		// Logs are searched by each block's bloom (as the simulated chain
		// does by default), not an index that builds in the background.
		ec.LogNoHistory = true
	})
	t.Cleanup(func() { _ = c.Backend.Close() })
	c.URL = fmt.Sprintf("http://127.0.0.1:%d/", port)
	return c
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// Address is key i's address.
func (c *Chain) Address(i int) common.Address { return crypto.PubkeyToAddress(c.Keys[i].PublicKey) }

// Send signs and sends a transaction from key i (to nil deploys data); it is
// mined at the next Commit.
func (c *Chain) Send(t testing.TB, from int, to *common.Address, data []byte) common.Hash {
	t.Helper()
	ctx := context.Background()
	cl := c.Backend.Client()
	sender := c.Address(from)
	c.mu.Lock()
	nonce, known := c.nonces[sender]
	if !known {
		n, err := cl.PendingNonceAt(ctx, sender)
		require.NoError(t, err)
		nonce = n
	}
	c.nonces[sender] = nonce + 1
	c.mu.Unlock()
	head, err := cl.HeaderByNumber(ctx, nil)
	require.NoError(t, err)
	// Estimates fall short of some calls that refund storage; the margin is
	// generous.
	gas, err := cl.EstimateGas(ctx, ethereum.CallMsg{From: sender, To: to, Data: data})
	require.NoError(t, err, "estimating gas")
	fee := new(big.Int).Add(new(big.Int).Mul(head.BaseFee, big.NewInt(2)), big.NewInt(params.GWei))
	tx := types.NewTx(&types.DynamicFeeTx{ChainID: new(big.Int).SetUint64(ChainID), Nonce: nonce, To: to, Data: data,
		Gas: min(max(gas*2, 2_000_000), params.MaxTxGas), GasFeeCap: fee, GasTipCap: big.NewInt(params.GWei)})
	signed, err := types.SignTx(tx, types.LatestSignerForChainID(tx.ChainId()), c.Keys[from])
	require.NoError(t, err)
	require.NoError(t, cl.SendTransaction(ctx, signed))
	return signed.Hash()
}

// Commit mines the pending transactions into a block and checks each succeeded.
func (c *Chain) Commit(t testing.TB, txs ...common.Hash) {
	t.Helper()
	c.Backend.Commit()
	for _, h := range txs {
		r, err := c.Backend.Client().TransactionReceipt(context.Background(), h)
		// The pool takes a sent transaction in the background: one it had
		// not yet made pending goes in a next block.
		for tries := 0; errors.Is(err, ethereum.NotFound) && tries < 50; tries++ {
			time.Sleep(10 * time.Millisecond)
			c.Backend.Commit()
			r, err = c.Backend.Client().TransactionReceipt(context.Background(), h)
		}
		require.NoError(t, err)
		if r.Status != types.ReceiptStatusSuccessful {
			tx, _, _ := c.Backend.Client().TransactionByHash(context.Background(), h)
			_, why := c.Backend.Client().CallContract(context.Background(), ethereum.CallMsg{From: c.sender(tx), To: tx.To(), Data: tx.Data()}, new(big.Int).Sub(r.BlockNumber, big.NewInt(1)))
			require.FailNow(t, "a transaction failed", "%s: gas %d of %d; replayed: %v", h.Hex(), r.GasUsed, tx.Gas(), why)
		}
	}
}

// AdjustTime seals an empty block d after the last. The simulated beacon
// refuses while its pool lists a transaction as pending, and the pool drops
// the transactions a block mined in the background, after the block: so it is
// asked again until the pool has caught up (a transaction really waiting to
// be mined keeps it refused, and the test fails at the deadline).
func (c *Chain) AdjustTime(t testing.TB, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := c.Backend.AdjustTime(d)
		if err == nil || time.Now().After(deadline) {
			require.NoError(t, err)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (c *Chain) sender(tx *types.Transaction) common.Address {
	from, _ := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
	return from
}

// Deploy deploys a compiled contract from key 0 and mines it.
func (c *Chain) Deploy(t testing.TB, ct Contract) common.Address {
	t.Helper()
	h := c.Send(t, 0, nil, ct.Bin)
	c.Commit(t, h)
	r, err := c.Backend.Client().TransactionReceipt(context.Background(), h)
	require.NoError(t, err)
	return r.ContractAddress
}

// Transact calls a contract's method from key i and mines it at once.
func (c *Chain) Transact(t testing.TB, from int, ct Contract, at common.Address, method string, args ...any) {
	t.Helper()
	c.Commit(t, c.Queue(t, from, ct, at, method, args...))
}

// Queue sends a method call from key i, mined at the next Commit.
func (c *Chain) Queue(t testing.TB, from int, ct Contract, at common.Address, method string, args ...any) common.Hash {
	t.Helper()
	data, err := ct.ABI.Pack(method, args...)
	require.NoError(t, err)
	return c.Send(t, from, &at, data)
}

// Finalize mines empty blocks until everything mined so far is finalized
// (the simulated beacon finalizes every 32nd block).
func (c *Chain) Finalize(t testing.TB) uint64 {
	t.Helper()
	ctx := context.Background()
	head, err := c.Backend.Client().BlockNumber(ctx)
	require.NoError(t, err)
	target := (head + 31) / 32 * 32
	for n := head; n < target; n++ {
		c.Backend.Commit()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		h, err := c.Backend.Client().HeaderByNumber(ctx, big.NewInt(-3))
		require.NoError(t, err)
		if h.Number.Uint64() >= head {
			return h.Number.Uint64()
		}
		require.True(t, time.Now().Before(deadline), "block %d never finalized", head)
		c.Backend.Commit()
	}
}

// Call calls a view at the newest block and unpacks its one answer.
func (c *Chain) Call(t testing.TB, ct Contract, at common.Address, method string, args ...any) any {
	t.Helper()
	data, err := ct.ABI.Pack(method, args...)
	require.NoError(t, err)
	out, err := c.Backend.Client().CallContract(context.Background(), ethereum.CallMsg{To: &at, Data: data}, nil)
	require.NoError(t, err)
	vals, err := ct.ABI.Unpack(method, out)
	require.NoError(t, err)
	require.Len(t, vals, 1)
	return vals[0]
}

func callMsg(to common.Address, data []byte) ethereum.CallMsg {
	return ethereum.CallMsg{To: &to, Data: data}
}
