package snapshotsapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/domain/snapshots"
)

// evm-erc20-holders and evm-erc20-delegates: an ERC-20's holders from its
// Transfer logs, and an ERC20Votes token's delegates from its
// DelegateVotesChanged logs, on any EVM chain with an RPC setting. The logs
// are read up to the finalized block and checked against what the token
// says at that block (totalSupply, balanceOf or getVotes of the largest);
// a token whose logs don't add up is refused, never drawn wrong.

const evmChainProperty = `"chain":{"type":"string","pattern":"^eip155:[1-9][0-9]{0,19}$","description":"the EVM chain as a CAIP-2 id: eip155:100 (Gnosis), eip155:1 (Ethereum), eip155:8453 (Base), eip155:42161 (Arbitrum One), eip155:10 (Optimism), or any chain with a PETAL_EVM_RPC_<id> setting"}`

const evmTokenProperty = `"token":{"type":"string","pattern":"^(eip155:[1-9][0-9]*:)?0[xX][0-9a-fA-F]{40}$","description":"the token's contract address (0x and 40 hex digits), or its CAIP-10 id"}`

var erc20HoldersReader = Reader{
	ID: "evm-erc20-holders", Title: "ERC-20 token holders", Chain: "eip155:100",
	Reads: "An ERC-20 token's holders on an EVM chain (Gnosis, Ethereum, Base, Arbitrum One, Optimism …): balances from its Transfer logs up to the finalized block, " +
		"checked against totalSupply and the largest holders' balanceOf at that block, in whole tokens; a token whose logs don't add up (rebasing, fee-on-transfer) is refused.",
	Params: json.RawMessage(`{"type":"object","properties":{` + evmChainProperty + `,` + evmTokenProperty + `,` +
		`"from_block":{"type":"integer","minimum":0,"description":"the first block to read logs from: the token's deployment block saves reading the blocks before it (default 0)"}},` +
		`"required":["chain","token"],"additionalProperties":false}`),
	prepare: prepareERC20(erc20Holders),
}

var erc20DelegatesReader = Reader{
	ID: "evm-erc20-delegates", Title: "ERC-20 token delegates", Chain: "eip155:100",
	Reads: "An ERC20Votes token's delegates on an EVM chain: each delegate's voting power from its DelegateVotesChanged logs up to the finalized block, " +
		"the largest checked with getVotes at that block, in whole tokens.",
	Params: json.RawMessage(`{"type":"object","properties":{` + evmChainProperty + `,` + evmTokenProperty + `},` +
		`"required":["chain","token"],"additionalProperties":false}`),
	prepare: prepareERC20(erc20Delegates),
}

// evmChains are the chains an EVM reader lists: the ones the docs name (any
// other with a setting is read too).
func evmChains() []string {
	out := make([]string, 0, len(evm.KnownChains))
	for _, k := range evm.KnownChains {
		out = append(out, evm.Chain(k.ID))
	}
	return out
}

type erc20Params struct {
	Chain     string `json:"chain"`
	Token     string `json:"token"`
	FromBlock uint64 `json:"from_block,omitempty"`
}

// erc20Kind is what differs between the two readers.
type erc20Kind struct {
	network   string
	event     string // the logs read
	hasFrom   bool   // takes from_block
	checkWith string // the view the largest are checked with
}

var (
	erc20Holders   = erc20Kind{network: "evm-erc20-holders", event: "Transfer", hasFrom: true, checkWith: "balanceOf"}
	erc20Delegates = erc20Kind{network: "evm-erc20-delegates", event: "DelegateVotesChanged", checkWith: "getVotes"}
)

// EVMChainOf checks an EVM chain param: a CAIP-2 eip155 id with an RPC
// setting here.
func (s *SnapshotService) EVMChainOf(chain string) (uint64, error) {
	chain = strings.TrimSpace(chain)
	if chain == "" {
		return 0, errs.New(errs.BadInput, "params.chain is required: the EVM chain as a CAIP-2 id such as eip155:100 (Gnosis)")
	}
	id, ok := evm.ChainID(chain)
	if !ok {
		return 0, errs.Newf(errs.BadInput, "params.chain must be an EVM chain's CAIP-2 id such as eip155:100, not %q", chain)
	}
	if s.evm == nil || !slices.Contains(s.evm.EVMChains(), id) {
		return 0, errs.Newf(errs.BadInput, "params.chain: %s (%s) can't be read here: it has no RPC endpoint", evm.Chain(id), evm.ChainName(id)).
			WithHint(fmt.Sprintf("set PETAL_EVM_RPC_%d to its JSON-RPC URL (several, comma-separated, fail over)", id))
	}
	return id, nil
}

func prepareERC20(kind erc20Kind) func(*SnapshotService, json.RawMessage) (*target, error) {
	return func(s *SnapshotService, raw json.RawMessage) (*target, error) {
		var p erc20Params
		if kind.hasFrom {
			if err := decodeParams(raw, &p); err != nil {
				return nil, err
			}
		} else {
			var q struct {
				Chain string `json:"chain"`
				Token string `json:"token"`
			}
			if err := decodeParams(raw, &q); err != nil {
				return nil, err
			}
			p = erc20Params{Chain: q.Chain, Token: q.Token}
		}
		id, err := s.EVMChainOf(p.Chain)
		if err != nil {
			return nil, err
		}
		chain := evm.Chain(id)
		tokenText := strings.TrimPrefix(strings.TrimSpace(p.Token), chain+":")
		if tokenText == "" {
			return nil, errs.New(errs.BadInput, "params.token is required: the token's contract address, 0x and 40 hex digits")
		}
		token, err := evm.ParseAddress(tokenText)
		if err != nil {
			return nil, errs.Newf(errs.BadInput, "params.token: %q is not an EVM address on %s", p.Token, chain).
				WithHint("0x and 40 hex digits, or its CAIP-10 id such as " + chain + ":0x…")
		}
		p = erc20Params{Chain: chain, Token: token.Hex(), FromBlock: p.FromBlock}
		params := marshalParams(p)
		return &target{network: kind.network, chain: chain, params: params, read: func(ctx context.Context, rc *readContext) (snapshots.Snapshot, error) {
			return readERC20(ctx, rc, s, kind, token, p, params)
		}}, nil
	}
}

// evmChecked is how many of the largest holders (or delegates) a reading
// checks against the token itself: the ones that shape the flower, in 10
// JSON-RPC batches.
const evmChecked = 1000

// evmProgressSteps is about how many progress events a read of logs sends.
const evmProgressSteps = 50

func readERC20(ctx context.Context, rc *readContext, s *SnapshotService, kind erc20Kind, token evm.Address, p erc20Params, params json.RawMessage) (snapshots.Snapshot, error) {
	rc.say("token", "reading "+token.Hex()+"'s name, symbol, decimals and totalSupply", nil, nil)
	tok, err := rc.evm.Token(ctx, token)
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	symbol := tok.Label(token)
	ledger := evm.NewLedger(s.cfg.EVMMaxHolders)
	noun := "holders"
	if kind == erc20Delegates {
		noun = "delegates"
	}
	lastStep := -1
	progress := func(read, total uint64, logs int) {
		step := int(read * evmProgressSteps / max(total, 1))
		if step == lastStep && read < total {
			return
		}
		lastStep = step
		rc.say("logs", fmt.Sprintf("read %d of %d blocks: %d %s logs, %d %s so far", read, total, logs, kind.event, ledger.Holders(), noun),
			intp(int(min(read, 1<<31))), intp(int(min(total, 1<<31))))
	}
	rc.say("logs", fmt.Sprintf("reading %s's %s logs from block %d to %d", symbol, kind.event, p.FromBlock, rc.evm.Block().Height), nil, nil)
	if kind == erc20Holders {
		err = rc.evm.Transfers(ctx, token, p.FromBlock, s.cfg.EVMMaxLogs, ledger.ApplyTransfer, progress)
	} else {
		err = rc.evm.VotesChanges(ctx, token, 0, s.cfg.EVMMaxLogs, ledger.ApplyVotes, progress)
	}
	if err == nil {
		if kind == erc20Holders {
			err = ledger.CheckSupply(tok.TotalSupply)
		} else {
			err = ledger.CheckVotesWithin(tok.TotalSupply)
		}
	}
	if err != nil {
		return snapshots.Snapshot{}, refusal(token, kind, p, s.cfg.EVMMaxHolders, err)
	}
	top := ledger.Top(snapshots.MaxAccounts)
	checked := top[:min(len(top), evmChecked)]
	rc.say("check", fmt.Sprintf("checking the %d largest %s with %s at block %d", len(checked), noun, kind.checkWith, rc.evm.Block().Height), nil, nil)
	accounts := make([]evm.Address, len(checked))
	for i, h := range checked {
		accounts[i] = h.Account
	}
	var said []evm.Amount
	if kind == erc20Holders {
		said, err = rc.evm.BalancesOf(ctx, token, accounts)
	} else {
		said, err = rc.evm.VotesOf(ctx, token, accounts)
	}
	if err != nil {
		return snapshots.Snapshot{}, err
	}
	if err := evm.CheckHoldings(checked, said, kind.checkWith); err != nil {
		return snapshots.Snapshot{}, refusal(token, kind, p, s.cfg.EVMMaxHolders, err)
	}
	group := snapshots.Group{ID: "holders", Label: snapshots.Clip("Holds "+symbol, snapshots.MaxLabel)}
	title, about := symbol+" holders", fmt.Sprintf("Who holds %s (%s, %s) on %s, in whole tokens, from its Transfer logs up to block %d.",
		symbol, tok.Name, token.Hex(), evm.ChainName(mustChainID(rc.network)), rc.evm.Block().Height)
	if kind == erc20Delegates {
		group = snapshots.Group{ID: "delegates", Label: snapshots.Clip("Votes with "+symbol, snapshots.MaxLabel)}
		title, about = symbol+" delegates", fmt.Sprintf("The delegates of %s (%s, %s) on %s, each weighed by the votes delegated to it, in whole tokens, up to block %d.",
			symbol, tok.Name, token.Hex(), evm.ChainName(mustChainID(rc.network)), rc.evm.Block().Height)
	}
	tally, err := evm.TallyHoldings(rc.network, top, ledger.Holders(), tok.Decimals, group)
	if err != nil {
		return snapshots.Snapshot{}, errs.Newf(errs.CannotRead, "%s gave an amount petal can't read", token.Hex()).WithCause(err)
	}
	detail, _ := json.Marshal(map[string]any{
		"token":   map[string]any{"address": token.Hex(), "name": tok.Name, "symbol": tok.Symbol, "decimals": tok.Decimals, "total_supply": tok.TotalSupply.String()},
		"logs":    ledger.Logs(),
		noun:      ledger.Holders(),
		"checked": map[string]any{"with": kind.checkWith, "accounts": len(checked)},
	})
	snap := rc.reading(kind.network, params, title, about, snapshots.Tally{Groups: tally.Groups, Accounts: tally.Accounts, Detail: detail})
	snap.Source.Cut = tally.Cut
	return snap, nil
}

func mustChainID(chain string) uint64 {
	id, _ := evm.ChainID(chain)
	return id
}

// refusal says why a token's logs can't be read as its holders or votes.
func refusal(token evm.Address, kind erc20Kind, p erc20Params, maxHolders int, err error) error {
	switch {
	case errors.Is(err, evm.ErrLogsDontAddUp):
		hint := "a rebasing or fee-on-transfer token, or one that mints without a Transfer, can't be read from its logs"
		if p.FromBlock > 0 {
			hint += "; from_block " + strconv.FormatUint(p.FromBlock, 10) + " may start after the token did"
		}
		return errs.Newf(errs.CannotRead, "%s's %s logs don't add up, so petal won't draw them: %s", token.Hex(), kind.event,
			strings.TrimPrefix(err.Error(), evm.ErrLogsDontAddUp.Error()+": ")).WithHint(hint).WithCause(err)
	case errors.Is(err, evm.ErrTooManyHolders):
		return errs.Newf(errs.CannotRead, "more than %d accounts hold %s at once; a reading keeps at most %d", maxHolders, token.Hex(), maxHolders).
			WithHint("PETAL_EVM_MAX_HOLDERS sets the cap").WithCause(err)
	}
	return err
}
