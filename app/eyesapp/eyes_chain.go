package eyesapp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// ChainAnswer is what read_chain answers.
type ChainAnswer struct {
	Network  string          `json:"network"`
	Contract string          `json:"contract"`
	Method   string          `json:"method"`
	Block    ChainBlock      `json:"block"`
	Encoding string          `json:"encoding"`                                                // json or base64
	Result   json.RawMessage `json:"result" jsonschema:"the JSON answer, or a base64 string"` // as encoding says
	Bytes    int             `json:"bytes" jsonschema:"the answer's length in bytes"`
	Logs     []string        `json:"logs"`
}

// RefineSchema: the two encodings.
func (ChainAnswer) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "encoding").Enum = []any{"json", "base64"}
}

// ChainBlock is the block a view call was read at.
type ChainBlock struct {
	Height uint64 `json:"height"`
	Hash   string `json:"hash"`
}

// networkOf reads read_chain's network: near:mainnet or near:testnet, or the
// bare name.
func networkOf(network string) (string, error) {
	switch strings.TrimSpace(network) {
	case snapshots.Mainnet, "mainnet":
		return snapshots.Mainnet, nil
	case snapshots.Testnet, "testnet":
		return snapshots.Testnet, nil
	}
	return "", errs.Newf(errs.BadInput, "network must be near:mainnet or near:testnet, not %q", network)
}

func (s *EyesService) readChain(ctx context.Context, _ toolkit.Call, in readChainInput) (ChainAnswer, error) {
	chain, err := networkOf(in.Network)
	if err != nil {
		return ChainAnswer{}, err
	}
	contract := strings.TrimPrefix(strings.TrimSpace(in.Contract), chain+":")
	if !snapshots.ValidNearAccount(contract) {
		return ChainAnswer{}, errs.Newf(errs.BadInput, "contract: %q is not a NEAR account id", in.Contract).
			WithHint("a contract is an account, like marketing.sputnik-dao.near")
	}
	args := bytes.TrimSpace(in.Args)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if len(args) > maxChainArgs {
		return ChainAnswer{}, errs.Newf(errs.BadInput, "args: at most %d bytes of JSON", maxChainArgs)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, args); err != nil {
		return ChainAnswer{}, errs.New(errs.BadInput, "args: not JSON").WithCause(err)
	}
	ctx, cancel := context.WithTimeout(ctx, readChainTimeout)
	defer cancel()
	v, err := s.views.View(ctx, chain, contract, in.Method, compact.Bytes(), MaxChainAnswer)
	if err != nil {
		return ChainAnswer{}, chainRefusal(err)
	}
	out := ChainAnswer{Network: chain, Contract: contract, Method: in.Method, Block: ChainBlock{Height: v.BlockHeight, Hash: v.BlockHash},
		Bytes: len(v.Result), Logs: v.Logs}
	if out.Logs == nil {
		out.Logs = []string{}
	}
	if len(v.Result) > 0 && utf8.Valid(v.Result) && json.Valid(v.Result) {
		out.Encoding, out.Result = "json", json.RawMessage(v.Result)
	} else {
		b, _ := json.Marshal(base64.StdEncoding.EncodeToString(v.Result))
		out.Encoding, out.Result = "base64", b
	}
	return out, nil
}

// chainRefusal says a failed view call in read_chain's words: a contract
// that panics or has no such method gives its own words, which are what the
// caller needs to ask again better.
func chainRefusal(err error) error {
	e, ok := errs.As(err)
	if !ok || e.Code != errs.CannotRead {
		return err
	}
	ce, ok := errors.AsType[*ports.ChainError](err)
	if !ok || ce.Cause == "TOO_LARGE" {
		return err
	}
	said := strings.ToValidUTF8(ce.Message, "")
	if len(said) > 600 {
		said = said[:600] + "…"
	}
	return errs.New(errs.CannotRead, "the contract's view call failed: "+said,
		"check the method's name and its arguments; the brain's recipes (brain_route with answers=<method>) name the usual ones").WithCause(err)
}
