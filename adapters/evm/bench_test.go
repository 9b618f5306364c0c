package evm_test

import (
	"bufio"
	"context"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/stretchr/testify/require"

	adevm "github.com/petal-near/petal/adapters/evm"
	"github.com/petal-near/petal/adapters/evm/evmtest"
	"github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/domain/snapshots"
)

// The read benchmark's chain runs in a child process (this test binary
// again, told so by benchChainEnv), so the heap measured here is the
// reader's alone, not the node's that answers it.
const benchChainEnv = "PETAL_EVM_BENCH_CHAIN"

func TestMain(m *testing.M) {
	if os.Getenv(benchChainEnv) != "" {
		serveBenchChain()
		return
	}
	os.Exit(m.Run())
}

// benchSize is the benchmark's transfers and holders:
// PETAL_EVM_BENCH_TRANSFERS (default 100,000) among a tenth as many holders.
func benchSize() (transfers, holders int) {
	transfers = 100_000
	if v, err := strconv.Atoi(os.Getenv("PETAL_EVM_BENCH_TRANSFERS")); err == nil && v > 0 {
		transfers = v
	}
	return transfers, max(transfers/10, 1)
}

// childTB is the testing.TB evmtest needs, in the child that serves the
// chain: any failure ends the process.
type childTB struct {
	testing.TB
	cleanups []func()
}

func (c *childTB) Helper()                   {}
func (c *childTB) Name() string              { return "bench-chain" }
func (c *childTB) Cleanup(f func())          { c.cleanups = append(c.cleanups, f) }
func (c *childTB) Logf(f string, a ...any)   { fmt.Fprintf(os.Stderr, f+"\n", a...) }
func (c *childTB) Errorf(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...); os.Exit(2) }
func (c *childTB) Fatalf(f string, a ...any) { c.Errorf(f, a...) }
func (c *childTB) FailNow()                  { os.Exit(2) }

// serveBenchChain builds the benchmark's chain, prints "ready <url>
// <token> <logs>" and serves until stdin closes.
func serveBenchChain() {
	t := &childTB{}
	transfers, holders := benchSize()
	chain := evmtest.NewChain(t, evmtest.Options{Accounts: 1, GasLimit: 2_000_000_000})
	bench := evmtest.Contracts(t)["PetalBench"]
	token := chain.Deploy(t, bench)
	ctx := context.Background()
	// Measure one small call of each, then fill transactions to ~12M gas.
	perCall := func(method string, probe int, args func(start, count int) []any) int {
		h := chain.Queue(t, 0, bench, token, method, args(0, probe)...)
		chain.Commit(t, h)
		r, err := chain.Backend.Client().TransactionReceipt(ctx, h)
		if err != nil {
			t.Fatalf("receipt: %v", err)
		}
		return max(int(12_000_000/(r.GasUsed/uint64(probe))), 1)
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(24), nil)
	seedArgs := func(start, count int) []any {
		return []any{big.NewInt(int64(start)), big.NewInt(int64(count)), unit}
	}
	shuffleArgs := func(start, count int) []any {
		return []any{big.NewInt(int64(start)), big.NewInt(int64(count)), big.NewInt(int64(holders))}
	}
	probe := min(100, holders)
	per := perCall("seed", probe, seedArgs)
	fill := func(method string, from, to int, args func(start, count int) []any) {
		var queued []common.Hash
		for start := from; start < to; start += per {
			queued = append(queued, chain.Queue(t, 0, bench, token, method, args(start, min(per, to-start))...))
			if len(queued) == 40 {
				chain.Commit(t, queued...)
				queued = nil
			}
		}
		if len(queued) > 0 {
			chain.Commit(t, queued...)
		}
	}
	fill("seed", probe, holders, seedArgs)
	shuffles := transfers - holders
	sprobe := min(100, shuffles)
	if sprobe > 0 {
		per = perCall("shuffle", sprobe, shuffleArgs)
		fill("shuffle", sprobe, shuffles, shuffleArgs)
	}
	chain.Finalize(t)
	fmt.Printf("ready %s %s %d\n", chain.URL, token.Hex(), transfers)
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// startBenchChain starts the child and waits for its chain.
func startBenchChain(b *testing.B) (url string, token common.Address, logs int) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchChainEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(b, err)
	out, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	b.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(b, err, "the benchmark's chain did not start")
	f := strings.Fields(line)
	require.Len(b, f, 4, line)
	require.Equal(b, "ready", f[0])
	logs, err = strconv.Atoi(f[3])
	require.NoError(b, err)
	return f[1], common.HexToAddress(f[2]), logs
}

// peakHeap samples the live heap until stop is called, and gives its peak.
func peakHeap() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); <-finished; return peak.Load() }
}

// BenchmarkReadERC20Holders reads a token's holders from a local chain as
// evm-erc20-holders does (Transfer logs into the ledger, totalSupply and
// the largest 1,000 checked with balanceOf, the top 100,000 tallied), beside
// the floor: a plain loop of eth_getLogs over the same blocks, the answers
// decoded and dropped. Run with -benchtime=1x; PETAL_EVM_BENCH_TRANSFERS
// sets the size (docs/snapshots.md has the figures).
func BenchmarkReadERC20Holders(b *testing.B) {
	url, token, logs := startBenchChain(b)
	_, holders := benchSize()
	b.Run("petal", func(b *testing.B) {
		for b.Loop() {
			c, err := adevm.New(adevm.Options{Endpoints: map[uint64][]string{evmtest.ChainID: {url}}, CallTimeout: time.Minute})
			require.NoError(b, err)
			runtime.GC()
			stop := peakHeap()
			ctx := context.Background()
			r, err := c.PinEVM(ctx, evm.Chain(evmtest.ChainID))
			require.NoError(b, err)
			tok, err := r.Token(ctx, evm.Address(token))
			require.NoError(b, err)
			ledger := evm.NewLedger(1_000_000)
			logsStart := time.Now()
			require.NoError(b, r.Transfers(ctx, evm.Address(token), 0, 10_000_000, ledger.ApplyTransfer, nil))
			logsTook := time.Since(logsStart)
			checkStart := time.Now()
			require.NoError(b, ledger.CheckSupply(tok.TotalSupply))
			top := ledger.Top(snapshots.MaxAccounts)
			checked := top[:min(len(top), 1000)]
			accounts := make([]evm.Address, len(checked))
			for i, h := range checked {
				accounts[i] = h.Account
			}
			said, err := r.BalancesOf(ctx, evm.Address(token), accounts)
			require.NoError(b, err)
			require.NoError(b, evm.CheckHoldings(checked, said, "balanceOf"))
			checkTook := time.Since(checkStart)
			tally, err := evm.TallyHoldings(evm.Chain(evmtest.ChainID), top, ledger.Holders(), tok.Decimals, snapshots.Group{ID: "holders", Label: "Holds PBN"})
			require.NoError(b, err)
			peak := stop()
			require.Equal(b, logs, ledger.Logs())
			require.Equal(b, holders, len(tally.Accounts))
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(c.Requests(evmtest.ChainID)), "rpc-requests")
			b.ReportMetric(float64(logs), "logs")
			b.ReportMetric(float64(ledger.Holders()), "holders")
			// The logs' part is what the floor does; the check (the largest
			// 1,000 by balanceOf, the sort) is petal's own.
			b.ReportMetric(logsTook.Seconds(), "logs-s")
			b.ReportMetric(checkTook.Seconds(), "check-s")
			c.Close()
		}
	})
	b.Run("floor", func(b *testing.B) {
		for b.Loop() {
			ec, err := ethclient.Dial(url)
			require.NoError(b, err)
			runtime.GC()
			stop := peakHeap()
			ctx := context.Background()
			head, err := ec.HeaderByNumber(ctx, big.NewInt(-3))
			require.NoError(b, err)
			height := head.Number.Uint64()
			// About 5,000 logs a call, as petal's ranges settle on.
			span := max(uint64(1), 5000*height/uint64(max(logs, 1)))
			seen, calls := 0, 1
			for pos := uint64(0); pos <= height; pos += span {
				got, err := ec.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(pos), ToBlock: new(big.Int).SetUint64(min(pos+span-1, height)),
					Addresses: []common.Address{token}})
				require.NoError(b, err)
				seen += len(got)
				calls++
			}
			peak := stop()
			require.Equal(b, logs, seen)
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(calls), "rpc-requests")
			b.ReportMetric(float64(seen), "logs")
			ec.Close()
		}
	})
}
