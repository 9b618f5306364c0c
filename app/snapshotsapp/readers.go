package snapshotsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// Reader is one network petal can read: a kind of NEAR contract and how its
// answers become a snapshot.
type Reader struct {
	ID     string          `json:"id"`
	Title  string          `json:"title"`
	Chain  string          `json:"chain"`  // the default chain
	Chains []string        `json:"chains"` // every chain it reads
	Reads  string          `json:"reads"`  // what it reads, in people's words
	Params json.RawMessage `json:"params"` // JSON Schema of its params
	// prepare checks and normalises params (defaults filled in) into a
	// target that can be read.
	prepare func(s *SnapshotService, raw json.RawMessage) (*target, error) `json:"-"`
}

// target is a reader with its params checked: what get_snapshot reads.
type target struct {
	network string
	chain   string
	params  json.RawMessage // normalised, as the snapshot carries them
	read    func(ctx context.Context, rc *readContext) (snapshots.Snapshot, error)
}

// readContext is one fresh read in progress: the contracts read at one
// block (which keeps the calls made), and where progress goes. A NEAR
// reader reads through near, an EVM reader through evm; the other is nil.
type readContext struct {
	near     ports.NearReading
	evm      ports.EVMReading
	network  string // the chain id, near:mainnet or eip155:100
	progress func(toolkit.Progress)
}

// pinned is the reading's block and the calls made, whichever chain it reads.
func (rc *readContext) pinned() interface {
	Block() snapshots.Block
	Source() snapshots.Source
} {
	if rc.evm != nil {
		return rc.evm
	}
	return rc.near
}

func (rc *readContext) say(stage, message string, done, total *int) {
	rc.progress(toolkit.Progress{Stage: stage, Message: message, Done: done, Total: total})
}

func intp(n int) *int { return &n }

// paging reports a paged read's progress as stage, counting noun.
func (rc *readContext) paging(stage, noun string) ports.Paging {
	return func(read, total int) {
		if read == 0 {
			rc.say(stage, fmt.Sprintf("reading %d %s", total, noun), intp(0), intp(total))
			return
		}
		rc.say(stage, fmt.Sprintf("read %d of %d %s", read, total, noun), intp(read), intp(total))
	}
}

// reading is a snapshot of this read with its common part and the tally made.
func (rc *readContext) reading(network string, params json.RawMessage, title, about string, t snapshots.Tally) snapshots.Snapshot {
	return snapshots.Snapshot{
		Schema: snapshots.Schema, Network: network, Params: params, Chain: rc.network, Block: rc.pinned().Block(),
		Title: snapshots.Clip(title, snapshots.MaxTitle), About: snapshots.Clip(about, snapshots.MaxAbout),
		Groups: t.Groups, Accounts: t.Accounts, Detail: t.Detail, Source: rc.pinned().Source(),
	}
}

const chainProperty = `"chain":{"type":"string","enum":["near:mainnet","near:testnet"],"default":"near:mainnet","description":"the NEAR network"}`

// readers is every network petal reads, in the order list_networks gives;
// each is in a file of its own (reader_*.go).
var readers = []Reader{daoMembersReader, daoProposalsReader, stakingPoolReader, ftBalancesReader, ftHoldersReader, erc20HoldersReader, erc20DelegatesReader, baalMembersReader, baalProposalsReader}

func init() {
	for i := range readers {
		if strings.HasPrefix(readers[i].Chain, evm.ChainPrefix) {
			readers[i].Chains = evmChains()
			continue
		}
		readers[i].Chains = []string{snapshots.Mainnet, snapshots.Testnet}
	}
}

// ReaderByID finds a reader.
func ReaderByID(id string) (Reader, bool) {
	for _, r := range readers {
		if r.ID == id {
			return r, true
		}
	}
	return Reader{}, false
}

// decodeParams reads a reader's params strictly; errors name params.<field>.
func decodeParams(raw json.RawMessage, into any) error {
	if t := strings.TrimSpace(string(raw)); t == "" || t == "null" {
		raw = json.RawMessage(`{}`)
	}
	if err := toolkit.DecodeInput(raw, into); err != nil {
		if e, ok := errs.As(err); ok {
			msg := e.Message
			for _, prefix := range []string{"unknown field ", "field "} {
				if rest, ok := strings.CutPrefix(msg, prefix); ok {
					msg = prefix + "params." + rest
					break
				}
			}
			return errs.New(errs.BadInput, "params: "+msg, "see the network's params schema (get_network)")
		}
		return err
	}
	return nil
}

func ChainOf(chain string) (string, error) {
	switch chain {
	case "":
		return snapshots.Mainnet, nil
	case snapshots.Mainnet, snapshots.Testnet:
		return chain, nil
	}
	return "", errs.Newf(errs.BadInput, "params.chain must be near:mainnet or near:testnet, not %q", chain)
}

// accountParam checks an account id param: a NEAR account id, or a CAIP-10
// id on the chain.
func accountParam(field, chain, v string) (string, error) {
	v = strings.TrimPrefix(strings.TrimSpace(v), chain+":")
	if !snapshots.ValidNearAccount(v) {
		return "", errs.Newf(errs.BadInput, "params.%s: %q is not a NEAR account id", field, v).
			WithHint("account ids are 2 to 64 lower-case letters, digits and - _ . such as marketing.sputnik-dao.near")
	}
	return v, nil
}

func marshalParams(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
