package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/petal-near/petal/domain/errs"
	domevm "github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

var finalizedTag = big.NewInt(int64(rpc.FinalizedBlockNumber))

// The ABI petal reads: ERC-20's views and Transfer, ERC20Votes' getVotes and
// DelegateVotesChanged (OpenZeppelin's IVotes).
const tokenABI = `[
{"type":"function","name":"name","stateMutability":"view","inputs":[],"outputs":[{"type":"string"}]},
{"type":"function","name":"symbol","stateMutability":"view","inputs":[],"outputs":[{"type":"string"}]},
{"type":"function","name":"decimals","stateMutability":"view","inputs":[],"outputs":[{"type":"uint8"}]},
{"type":"function","name":"totalSupply","stateMutability":"view","inputs":[],"outputs":[{"type":"uint256"}]},
{"type":"function","name":"balanceOf","stateMutability":"view","inputs":[{"name":"account","type":"address"}],"outputs":[{"type":"uint256"}]},
{"type":"function","name":"getVotes","stateMutability":"view","inputs":[{"name":"account","type":"address"}],"outputs":[{"type":"uint256"}]},
{"type":"event","name":"Transfer","anonymous":false,"inputs":[{"name":"from","type":"address","indexed":true},{"name":"to","type":"address","indexed":true},{"name":"value","type":"uint256","indexed":false}]},
{"type":"event","name":"DelegateVotesChanged","anonymous":false,"inputs":[{"name":"delegate","type":"address","indexed":true},{"name":"previousVotes","type":"uint256","indexed":false},{"name":"newVotes","type":"uint256","indexed":false}]}
]`

var token = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(tokenABI))
	if err != nil {
		panic("adapters/evm: the token ABI: " + err.Error())
	}
	return a
}()

// reading is one reading pinned to a finalized block.
type reading struct {
	c     *Client
	cc    *chainClient
	block snapshots.Block
	hash  common.Hash
	at    rpc.BlockNumberOrHash

	mu    sync.Mutex
	calls map[[2]string]int // contract, method → calls
}

func newReading(c *Client, cc *chainClient, head *types.Header) *reading {
	h := head.Hash()
	return &reading{c: c, cc: cc, hash: h, at: rpc.BlockNumberOrHashWithHash(h, false), calls: map[[2]string]int{},
		block: snapshots.Block{Height: head.Number.Uint64(), Hash: h.Hex(), Time: time.Unix(int64(head.Time), 0).UTC().Format(time.RFC3339)}}
}

func (r *reading) Block() snapshots.Block { return r.block }

func (r *reading) Source() snapshots.Source {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := make([]snapshots.Call, 0, len(r.calls))
	for k, n := range r.calls {
		c := snapshots.Call{Contract: k[0], Method: k[1]}
		if n > 1 {
			c.Pages = n
		}
		calls = append(calls, c)
	}
	slices.SortFunc(calls, func(a, b snapshots.Call) int {
		return strings.Compare(a.Contract+" "+a.Method, b.Contract+" "+b.Method)
	})
	return snapshots.Source{Calls: calls}
}

func (r *reading) count(contract domevm.Address, method string, n int) {
	r.mu.Lock()
	r.calls[[2]string{contract.Hex(), method}] += n
	r.mu.Unlock()
}

// callArg is eth_call's transaction object; data and input both carry the
// call, for providers that know only one of the names.
func callArg(to domevm.Address, data []byte) map[string]any {
	addr := common.Address(to)
	return map[string]any{"to": &addr, "data": hexutil.Bytes(data), "input": hexutil.Bytes(data)}
}

// batchSize is how many eth_calls go in one JSON-RPC batch.
const batchSize = 100

// viewCalls makes each call at the pinned block, in batches, and gives each
// answer's bytes; a call that reverts fails the whole.
func (r *reading) viewCalls(ctx context.Context, to domevm.Address, method string, inputs [][]byte) ([][]byte, error) {
	out := make([][]byte, len(inputs))
	for lo := 0; lo < len(inputs); lo += batchSize {
		hi := min(lo+batchSize, len(inputs))
		batch := make([]rpc.BatchElem, hi-lo)
		results := make([]hexutil.Bytes, hi-lo)
		for i := range batch {
			batch[i] = rpc.BatchElem{Method: "eth_call", Args: []any{callArg(to, inputs[lo+i]), r.at}, Result: &results[i]}
		}
		cctx, cancel := context.WithTimeout(ctx, r.c.timeout)
		start := time.Now()
		err := r.cc.rpc.BatchCallContext(cctx, batch)
		cancel()
		r.c.observe(r.cc.id, "eth_call", start, err)
		if err != nil {
			return nil, sourceFailed(r.cc.id, method+" of "+to.Hex(), err)
		}
		r.count(to, method, hi-lo)
		for i, e := range batch {
			if e.Error != nil {
				return nil, errs.Newf(errs.CannotRead, "%s's %s failed at block %d: %s", to.Hex(), method, r.block.Height, clip(e.Error.Error())).
					WithHint("is it an ERC-20 (ERC20Votes for delegates) on " + domevm.Chain(r.cc.id) + "?").WithCause(e.Error)
			}
			out[lo+i] = results[i]
		}
	}
	return out, nil
}

func (r *reading) Token(ctx context.Context, addr domevm.Address) (domevm.Token, error) {
	cctx, cancel := context.WithTimeout(ctx, r.c.timeout)
	start := time.Now()
	code, err := r.cc.eth.CodeAtHash(cctx, common.Address(addr), r.hash)
	cancel()
	r.c.observe(r.cc.id, "eth_getCode", start, err)
	if err != nil {
		return domevm.Token{}, sourceFailed(r.cc.id, "the code at "+addr.Hex(), err)
	}
	r.count(addr, "eth_getCode", 1)
	if len(code) == 0 {
		return domevm.Token{}, errs.Newf(errs.NotFound, "no contract at %s on %s at block %d", addr.Hex(), domevm.Chain(r.cc.id), r.block.Height)
	}
	var t domevm.Token
	names := []string{"name", "symbol", "decimals", "totalSupply"}
	// The four views in one batch; a token may lack name and symbol (they
	// are optional in ERC-20), not decimals or totalSupply.
	batch := make([]rpc.BatchElem, len(names))
	results := make([]hexutil.Bytes, len(names))
	for i, m := range names {
		data, _ := token.Pack(m)
		batch[i] = rpc.BatchElem{Method: "eth_call", Args: []any{callArg(addr, data), r.at}, Result: &results[i]}
	}
	cctx, cancel = context.WithTimeout(ctx, r.c.timeout)
	start = time.Now()
	err = r.cc.rpc.BatchCallContext(cctx, batch)
	cancel()
	r.c.observe(r.cc.id, "eth_call", start, err)
	if err != nil {
		return domevm.Token{}, sourceFailed(r.cc.id, "the token "+addr.Hex(), err)
	}
	for i, m := range names {
		r.count(addr, m, 1)
		if batch[i].Error != nil && i >= 2 {
			return domevm.Token{}, notERC20(addr, m, batch[i].Error.Error())
		}
	}
	t.Name, t.Symbol = textAnswer("name", results[0]), textAnswer("symbol", results[1])
	dec, err := token.Unpack("decimals", results[2])
	if err != nil || len(dec) != 1 {
		return domevm.Token{}, notERC20(addr, "decimals", "an answer that is no uint8")
	}
	d, _ := dec[0].(uint8)
	if int(d) > snapshots.MaxTokenDecimals {
		return domevm.Token{}, errs.Newf(errs.CannotRead, "%s says it has %d decimals; petal reads at most %d", addr.Hex(), d, snapshots.MaxTokenDecimals)
	}
	t.Decimals = int(d)
	if len(results[3]) != 32 {
		return domevm.Token{}, notERC20(addr, "totalSupply", "an answer that is no uint256")
	}
	t.TotalSupply = domevm.AmountFromWord(results[3])
	return t, nil
}

func notERC20(addr domevm.Address, method, said string) error {
	return errs.Newf(errs.CannotRead, "%s is not an ERC-20 petal can read: its %s gave %s", addr.Hex(), method, clip(said))
}

// textAnswer reads a string view; some early tokens (MKR) answer bytes32.
func textAnswer(method string, raw []byte) string {
	if out, err := token.Unpack(method, raw); err == nil && len(out) == 1 {
		if s, ok := out[0].(string); ok && utf8.ValidString(s) {
			return snapshots.Clip(strings.TrimSpace(s), 100)
		}
	}
	if len(raw) == 32 {
		s := strings.TrimRight(string(raw), "\x00")
		if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
			return strings.TrimSpace(s)
		}
	}
	return ""
}

func (r *reading) BalancesOf(ctx context.Context, addr domevm.Address, accounts []domevm.Address) ([]domevm.Amount, error) {
	return r.amountsOf(ctx, addr, "balanceOf", accounts)
}

func (r *reading) VotesOf(ctx context.Context, addr domevm.Address, accounts []domevm.Address) ([]domevm.Amount, error) {
	return r.amountsOf(ctx, addr, "getVotes", accounts)
}

func (r *reading) amountsOf(ctx context.Context, addr domevm.Address, method string, accounts []domevm.Address) ([]domevm.Amount, error) {
	inputs := make([][]byte, len(accounts))
	for i, a := range accounts {
		data, err := token.Pack(method, common.Address(a))
		if err != nil {
			return nil, errs.New(errs.Internal, "a call could not be encoded").WithCause(err)
		}
		inputs[i] = data
	}
	answers, err := r.viewCalls(ctx, addr, method, inputs)
	if err != nil {
		return nil, err
	}
	out := make([]domevm.Amount, len(answers))
	for i, a := range answers {
		if len(a) != 32 {
			return nil, notERC20(addr, method, "an answer that is no uint256")
		}
		out[i] = domevm.AmountFromWord(a)
	}
	return out, nil
}

// The events' topics, from the ABI.
var (
	transferTopic     = token.Events["Transfer"].ID
	votesChangedTopic = token.Events["DelegateVotesChanged"].ID
)

func (r *reading) Transfers(ctx context.Context, addr domevm.Address, from uint64, maxLogs int, apply func(domevm.Transfer) error, progress ports.BlockProgress) error {
	return r.logs(ctx, addr, []common.Hash{transferTopic}, "Transfer", from, maxLogs, func(l *types.Log) error {
		// Decoded by hand, word by word, rather than through abi's
		// reflection and a big.Int per log: a token's read is millions of
		// logs. ERC-721's Transfer has the same topic with the value indexed.
		if len(l.Topics) != 3 || len(l.Data) != 32 {
			return errs.Newf(errs.CannotRead, "%s's Transfer log at block %d is not an ERC-20's (%d topics, %d bytes of data): is it an NFT?",
				addr.Hex(), l.BlockNumber, len(l.Topics), len(l.Data))
		}
		f, ok1 := domevm.AddressFromTopic(l.Topics[1][:])
		t, ok2 := domevm.AddressFromTopic(l.Topics[2][:])
		if !ok1 || !ok2 {
			return errs.Newf(errs.CannotRead, "%s's Transfer log at block %d names no address", addr.Hex(), l.BlockNumber)
		}
		return apply(domevm.Transfer{From: f, To: t, Value: domevm.AmountFromWord(l.Data), Block: l.BlockNumber})
	}, progress)
}

func (r *reading) VotesChanges(ctx context.Context, addr domevm.Address, from uint64, maxLogs int, apply func(domevm.VotesChanged) error, progress ports.BlockProgress) error {
	return r.logs(ctx, addr, []common.Hash{votesChangedTopic}, "DelegateVotesChanged", from, maxLogs, func(l *types.Log) error {
		if len(l.Topics) != 2 || len(l.Data) != 64 {
			return errs.Newf(errs.CannotRead, "%s's DelegateVotesChanged log at block %d is not ERC20Votes' (%d topics, %d bytes of data)",
				addr.Hex(), l.BlockNumber, len(l.Topics), len(l.Data))
		}
		d, ok := domevm.AddressFromTopic(l.Topics[1][:])
		if !ok {
			return errs.Newf(errs.CannotRead, "%s's DelegateVotesChanged log at block %d names no address", addr.Hex(), l.BlockNumber)
		}
		return apply(domevm.VotesChanged{Delegate: d, Previous: domevm.AmountFromWord(l.Data[:32]), Now: domevm.AmountFromWord(l.Data[32:]), Block: l.BlockNumber})
	}, progress)
}

// logs reads one event of addr from block from to the pinned block, range by
// range, in order, the ranges sized by ranges. A range the provider refuses
// (too many results, a range limit, an answer too large, a time-out) is
// asked again smaller; a range of one block refused is cannot_read.
func (r *reading) logs(ctx context.Context, addr domevm.Address, topics []common.Hash, event string, from uint64, maxLogs int,
	each func(*types.Log) error, progress ports.BlockProgress) error {
	to := r.block.Height
	if from > to {
		return nil
	}
	total := to - from + 1
	sizes := newRanges(r.c.first, r.c.most)
	seen := 0
	method := "eth_getLogs(" + event + ")"
	var lastBlock uint64
	var lastIndex uint
	first := true
	busy := 0
	for pos := from; pos <= to; {
		end := min(pos+sizes.span-1, to)
		q := ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(pos), ToBlock: new(big.Int).SetUint64(end),
			Addresses: []common.Address{common.Address(addr)}, Topics: [][]common.Hash{topics}}
		cctx, cancel := context.WithTimeout(ctx, r.c.timeout)
		start := time.Now()
		got, err := r.cc.eth.FilterLogs(cctx, q)
		timedOut := cctx.Err() != nil && ctx.Err() == nil
		cancel()
		r.c.observe(r.cc.id, "eth_getLogs", start, err)
		r.count(addr, method, 1)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if rateLimited(err) && busy < 3 {
				// Turned away for the rate, not the range: the same range again,
				// after a pause.
				busy++
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(time.Duration(busy) * 500 * time.Millisecond):
				}
				continue
			}
			if refusedRange(err) || timedOut {
				if sizes.span == 1 {
					return errs.Newf(errs.CannotRead, "%s's RPC refuses the %s logs of %s even for block %d alone: %s",
						domevm.Chain(r.cc.id), event, addr.Hex(), pos, clip(err.Error())).WithCause(err)
				}
				sizes.refused(err.Error(), errors.Is(err, errAnswerTooLarge) || timedOut)
				continue
			}
			return sourceFailed(r.cc.id, "the "+event+" logs of "+addr.Hex(), err)
		}
		busy = 0
		seen += len(got)
		if seen > maxLogs {
			return errs.Newf(errs.CannotRead, "%s has more than %d %s logs up to block %d; a reading reads at most %d",
				addr.Hex(), maxLogs, event, to, maxLogs).WithHint("PETAL_EVM_MAX_LOGS sets the cap")
		}
		for i := range got {
			l := &got[i]
			if l.Removed || l.BlockNumber < pos || l.BlockNumber > end || l.Address != common.Address(addr) || len(l.Topics) == 0 || !slices.Contains(topics, l.Topics[0]) {
				return errs.Newf(errs.CannotRead, "%s's RPC answered eth_getLogs with a log it was not asked for (block %d)", domevm.Chain(r.cc.id), l.BlockNumber)
			}
			if !first && (l.BlockNumber < lastBlock || (l.BlockNumber == lastBlock && l.Index <= lastIndex)) {
				return errs.Newf(errs.CannotRead, "%s's RPC answered eth_getLogs out of order (block %d)", domevm.Chain(r.cc.id), l.BlockNumber)
			}
			first, lastBlock, lastIndex = false, l.BlockNumber, l.Index
			if err := each(l); err != nil {
				return err
			}
		}
		sizes.answered(end-pos+1, len(got))
		pos = end + 1
		if progress != nil {
			progress(pos-from, total, seen)
		}
	}
	return nil
}

// refusedRange reports whether an eth_getLogs failure is the provider
// refusing the range as too large or too full (each provider words it its
// own way: "query returned more than 10000 results", "block range is too
// wide", "exceed maximum block range: 5000", "Log response size exceeded"),
// rather than failing.
func refusedRange(err error) bool {
	if errors.Is(err, errAnswerTooLarge) {
		return true
	}
	var httpErr rpc.HTTPError
	if errors.As(err, &httpErr) {
		return httpErr.StatusCode == http.StatusRequestEntityTooLarge
	}
	var rpcErr rpc.Error
	if !errors.As(err, &rpcErr) {
		return false
	}
	if rateLimited(err) {
		return false
	}
	msg := strings.ToLower(rpcErr.Error())
	for _, s := range []string{"range", "too many", "more than", "too large", "exceed", "limit", "results", "response size"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// rateLimited reports whether a JSON-RPC error is a provider's rate limit
// answered inside a 200 (the 429s the transport waits out).
func rateLimited(err error) bool {
	var rpcErr rpc.Error
	if !errors.As(err, &rpcErr) {
		return false
	}
	msg := strings.ToLower(rpcErr.Error())
	return rpcErr.ErrorCode() == 429 || strings.Contains(msg, "rate limit") || strings.Contains(msg, "too many requests") || strings.Contains(msg, "capacity")
}

// String names a reading in logs.
func (r *reading) String() string {
	return fmt.Sprintf("%s at %d", domevm.Chain(r.cc.id), r.block.Height)
}
