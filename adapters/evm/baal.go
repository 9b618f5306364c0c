package evm

import (
	"context"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/petal-near/petal/domain/errs"
	domevm "github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/ports"
)

// What petal reads of a Baal (Moloch v3, DAOhaus' Baal.sol): its two token
// views and its proposal events, their signatures exactly as Baal.sol
// declares them (the topics are their hashes).
const baalABI = `[
{"type":"function","name":"sharesToken","stateMutability":"view","inputs":[],"outputs":[{"type":"address"}]},
{"type":"function","name":"lootToken","stateMutability":"view","inputs":[],"outputs":[{"type":"address"}]},
{"type":"event","name":"SubmitProposal","anonymous":false,"inputs":[{"name":"proposal","type":"uint256","indexed":true},{"name":"proposalDataHash","type":"bytes32","indexed":true},{"name":"votingPeriod","type":"uint256","indexed":false},{"name":"proposalData","type":"bytes","indexed":false},{"name":"expiration","type":"uint256","indexed":false},{"name":"baalGas","type":"uint256","indexed":false},{"name":"selfSponsor","type":"bool","indexed":false},{"name":"timestamp","type":"uint256","indexed":false},{"name":"details","type":"string","indexed":false}]},
{"type":"event","name":"SponsorProposal","anonymous":false,"inputs":[{"name":"member","type":"address","indexed":true},{"name":"proposal","type":"uint256","indexed":true},{"name":"votingStarts","type":"uint256","indexed":true}]},
{"type":"event","name":"CancelProposal","anonymous":false,"inputs":[{"name":"proposal","type":"uint256","indexed":true}]},
{"type":"event","name":"SubmitVote","anonymous":false,"inputs":[{"name":"member","type":"address","indexed":true},{"name":"balance","type":"uint256","indexed":false},{"name":"proposal","type":"uint256","indexed":true},{"name":"approved","type":"bool","indexed":true}]},
{"type":"event","name":"ProcessProposal","anonymous":false,"inputs":[{"name":"proposal","type":"uint256","indexed":true},{"name":"passed","type":"bool","indexed":false},{"name":"actionFailed","type":"bool","indexed":false}]},
{"type":"event","name":"GovernanceConfigSet","anonymous":false,"inputs":[{"name":"voting","type":"uint32","indexed":false},{"name":"grace","type":"uint32","indexed":false},{"name":"newOffering","type":"uint256","indexed":false},{"name":"quorum","type":"uint256","indexed":false},{"name":"sponsor","type":"uint256","indexed":false},{"name":"minRetention","type":"uint256","indexed":false}]}
]`

var baal = func() abi.ABI {
	a, err := abi.JSON(strings.NewReader(baalABI))
	if err != nil {
		panic("adapters/evm: the Baal ABI: " + err.Error())
	}
	return a
}()

var baalTopics = func() map[common.Hash]string {
	out := map[common.Hash]string{}
	for name, e := range baal.Events {
		out[e.ID] = name
	}
	return out
}()

func (r *reading) BaalTokens(ctx context.Context, dao domevm.Address) (shares, loot domevm.Address, err error) {
	cctx, cancel := context.WithTimeout(ctx, r.c.timeout)
	start := time.Now()
	code, err := r.cc.eth.CodeAtHash(cctx, common.Address(dao), r.hash)
	cancel()
	r.c.observe(r.cc.id, "eth_getCode", start, err)
	if err != nil {
		return shares, loot, sourceFailed(r.cc.id, "the code at "+dao.Hex(), err)
	}
	r.count(dao, "eth_getCode", 1)
	if len(code) == 0 {
		return shares, loot, errs.Newf(errs.NotFound, "no contract at %s on %s at block %d", dao.Hex(), domevm.Chain(r.cc.id), r.block.Height)
	}
	var out [2]domevm.Address
	for i, m := range []string{"sharesToken", "lootToken"} {
		data, _ := baal.Pack(m)
		answers, err := r.viewCalls(ctx, dao, m, [][]byte{data})
		if err != nil {
			if errs.Is(err, errs.CannotRead) {
				return shares, loot, notBaal(dao, m)
			}
			return shares, loot, err
		}
		a, ok := domevm.AddressFromTopic(answers[0])
		if !ok || a.IsZero() {
			return shares, loot, notBaal(dao, m)
		}
		out[i] = a
	}
	return out[0], out[1], nil
}

func notBaal(dao domevm.Address, method string) error {
	return errs.Newf(errs.CannotRead, "%s is not a Baal petal can read: its %s gave no token", dao.Hex(), method).
		WithHint("evm-baal-members and evm-baal-proposals read a Baal (Moloch v3, DAOhaus) by its own address, not its Safe's or a token's")
}

func (r *reading) BaalEvents(ctx context.Context, dao domevm.Address, from uint64, maxLogs int, apply func(domevm.BaalEvent) error, progress ports.BlockProgress) error {
	topics := make([]common.Hash, 0, len(baal.Events))
	for _, e := range baal.Events {
		topics = append(topics, e.ID)
	}
	// The logs first (bounded by maxLogs), then their blocks' times and the
	// submissions' senders in batches: only then is each event whole.
	var events []domevm.BaalEvent
	var submitTx []common.Hash
	err := r.logs(ctx, dao, topics, "Baal", from, maxLogs, func(l *types.Log) error {
		e, err := baalEvent(dao, l)
		if err != nil {
			return err
		}
		if e.Kind == domevm.BaalSubmit {
			submitTx = append(submitTx, l.TxHash)
		}
		events = append(events, e)
		return nil
	}, progress)
	if err != nil {
		return err
	}
	times, err := r.blockTimes(ctx, dao, events)
	if err != nil {
		return err
	}
	senders, err := r.senders(ctx, dao, submitTx)
	if err != nil {
		return err
	}
	n := 0
	for _, e := range events {
		e.Time = times[e.Block]
		if e.Kind == domevm.BaalSubmit {
			e.Account = senders[n]
			n++
		}
		if err := apply(e); err != nil {
			return err
		}
	}
	return nil
}

// baalEvent decodes one of a Baal's logs.
func baalEvent(dao domevm.Address, l *types.Log) (domevm.BaalEvent, error) {
	name := baalTopics[l.Topics[0]]
	ev := baal.Events[name]
	bad := func() (domevm.BaalEvent, error) {
		return domevm.BaalEvent{}, errs.Newf(errs.CannotRead, "%s's %s log at block %d is not a Baal's (%d topics, %d bytes of data)",
			dao.Hex(), name, l.BlockNumber, len(l.Topics), len(l.Data))
	}
	indexed := 0
	for _, in := range ev.Inputs {
		if in.Indexed {
			indexed++
		}
	}
	if len(l.Topics) != indexed+1 {
		return bad()
	}
	vals, err := ev.Inputs.NonIndexed().Unpack(l.Data)
	if err != nil {
		return bad()
	}
	word := func(i int) uint64 {
		b := new(big.Int).SetBytes(l.Topics[i][:])
		if !b.IsUint64() {
			return 0
		}
		return b.Uint64()
	}
	e := domevm.BaalEvent{Block: l.BlockNumber}
	u64 := func(v any) uint64 {
		if b, ok := v.(*big.Int); ok && b.IsUint64() {
			return b.Uint64()
		}
		return 0
	}
	switch name {
	case "SubmitProposal":
		e.Kind, e.Proposal = domevm.BaalSubmit, word(1)
		e.VotingPeriod, e.Expiration = u64(vals[0]), u64(vals[2])
		e.SelfSponsor, _ = vals[4].(bool)
		if e.SelfSponsor {
			e.VotingStarts = u64(vals[5])
		}
		details, _ := vals[6].(string)
		title, kind := domevm.BaalDetails(details)
		e.Title, e.ProposalType = clipText(title, domevm.MaxBaalTitle), kind
	case "SponsorProposal":
		a, ok := domevm.AddressFromTopic(l.Topics[1][:])
		if !ok {
			return bad()
		}
		e.Kind, e.Account, e.Proposal, e.VotingStarts = domevm.BaalSponsor, a, word(2), word(3)
	case "CancelProposal":
		e.Kind, e.Proposal = domevm.BaalCancel, word(1)
	case "SubmitVote":
		a, ok := domevm.AddressFromTopic(l.Topics[1][:])
		if !ok {
			return bad()
		}
		balance, _ := vals[0].(*big.Int)
		amount, ok := domevm.AmountFromBig(balance)
		if !ok {
			return bad()
		}
		e.Kind, e.Account, e.Amount, e.Proposal, e.Approved = domevm.BaalVote, a, amount, word(2), word(3) == 1
	case "ProcessProposal":
		e.Kind, e.Proposal = domevm.BaalProcess, word(1)
		e.Passed, _ = vals[0].(bool)
		e.ActionFailed, _ = vals[1].(bool)
	case "GovernanceConfigSet":
		e.Kind = domevm.BaalConfig
		v, _ := vals[0].(uint32)
		g, _ := vals[1].(uint32)
		e.VotingPeriod, e.Grace = uint64(v), uint64(g)
	default:
		return bad()
	}
	return e, nil
}

// clipText cuts s to at most n bytes on a rune boundary, dropping invalid UTF-8.
func clipText(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// blockTimes reads the time of every block the events are in, in batches.
func (r *reading) blockTimes(ctx context.Context, dao domevm.Address, events []domevm.BaalEvent) (map[uint64]int64, error) {
	times := map[uint64]int64{}
	var blocks []uint64
	for _, e := range events {
		if _, ok := times[e.Block]; !ok {
			times[e.Block] = 0
			blocks = append(blocks, e.Block)
		}
	}
	for lo := 0; lo < len(blocks); lo += batchSize {
		hi := min(lo+batchSize, len(blocks))
		batch := make([]rpc.BatchElem, hi-lo)
		heads := make([]struct {
			Number    hexutil.Uint64 `json:"number"`
			Timestamp hexutil.Uint64 `json:"timestamp"`
		}, hi-lo)
		for i := range batch {
			batch[i] = rpc.BatchElem{Method: "eth_getBlockByNumber", Args: []any{hexutil.Uint64(blocks[lo+i]), false}, Result: &heads[i]}
		}
		if err := r.batch(ctx, dao, batch, "eth_getBlockByNumber", "its blocks' times"); err != nil {
			return nil, err
		}
		for i, b := range batch {
			if b.Error != nil || uint64(heads[i].Number) != blocks[lo+i] {
				return nil, errs.Newf(errs.CannotRead, "%s's RPC gave no block %d", domevm.Chain(r.cc.id), blocks[lo+i])
			}
			times[blocks[lo+i]] = int64(heads[i].Timestamp)
		}
	}
	return times, nil
}

// senders reads each transaction's sender, in batches.
func (r *reading) senders(ctx context.Context, dao domevm.Address, txs []common.Hash) ([]domevm.Address, error) {
	out := make([]domevm.Address, len(txs))
	for lo := 0; lo < len(txs); lo += batchSize {
		hi := min(lo+batchSize, len(txs))
		batch := make([]rpc.BatchElem, hi-lo)
		found := make([]struct {
			From *common.Address `json:"from"`
		}, hi-lo)
		for i := range batch {
			batch[i] = rpc.BatchElem{Method: "eth_getTransactionByHash", Args: []any{txs[lo+i]}, Result: &found[i]}
		}
		if err := r.batch(ctx, dao, batch, "eth_getTransactionByHash", "its proposals' senders"); err != nil {
			return nil, err
		}
		for i, b := range batch {
			if b.Error != nil || found[i].From == nil {
				return nil, errs.Newf(errs.CannotRead, "%s's RPC gave no transaction %s", domevm.Chain(r.cc.id), txs[lo+i].Hex())
			}
			out[lo+i] = domevm.Address(*found[i].From)
		}
	}
	return out, nil
}

// batch sends one JSON-RPC batch within the call deadline, timed and
// counted as calls made for contract.
func (r *reading) batch(ctx context.Context, contract domevm.Address, batch []rpc.BatchElem, method, what string) error {
	cctx, cancel := context.WithTimeout(ctx, r.c.timeout)
	defer cancel()
	start := time.Now()
	err := r.cc.rpc.BatchCallContext(cctx, batch)
	r.c.observe(r.cc.id, method, start, err)
	if err != nil {
		return sourceFailed(r.cc.id, what, err)
	}
	r.count(contract, method, len(batch))
	return nil
}
