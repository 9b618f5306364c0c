package relationsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// ToolLookUp is the contract's name for one answer about a name or an address.
const ToolLookUp = "look_up"

const (
	lookUpDeadline = 20 * time.Second
	// lookUpProbeMax bounds each probe's answer (a DAO's config, a token's
	// metadata): a probe reads only what says what the contract is.
	lookUpProbeMax = 64 << 10
	lookUpListMax  = 10
)

// LookUpService is look_up (docs/search.md): what the map holds about a
// name or an address, what the chain says, and the next tool to call.
type LookUpService struct {
	near      ports.NearAccounts
	views     ports.NearViews
	evm       ports.EVMTokens
	search    *SearchService
	relations *RelationService
}

// NewLookUpService builds the service.
func NewLookUpService(near ports.NearAccounts, views ports.NearViews, evm ports.EVMTokens, search *SearchService, relations *RelationService) *LookUpService {
	return &LookUpService{near: near, views: views, evm: evm, search: search, relations: relations}
}

// LookUpInput is look_up's input (GET /api/v1/look-up's query).
type LookUpInput struct {
	Query string `json:"query" jsonschema:"a NEAR account id (marketing.sputnik-dao.near), an EVM address (0x…) with an eip155 chain, or words naming one"`
	Chain string `json:"chain,omitempty" jsonschema:"near:mainnet (the default), near:testnet, or an EVM chain as eip155:<id> (eip155:100 is Gnosis)"`
}

func (LookUpInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "query").MinLength = jsonschema.Ptr(1)
	toolkit.Property(s, "query").MaxLength = jsonschema.Ptr(200)
	toolkit.Property(s, "chain").Pattern = toolkit.ChainPattern
}

// LookUpAnswer is look_up's answer.
type LookUpAnswer struct {
	Query   string         `json:"query"`
	Chain   string         `json:"chain"`
	Account *string        `json:"account"`
	Map     LookUpMap      `json:"map"`
	OnChain *LookUpChain   `json:"chain_says"`
	Next    LookUpNextStep `json:"next"`
}

// LookUpMap is what the map holds: maps and flowers naming it (hidden maps
// never), and the groups it is a member of.
type LookUpMap struct {
	Maps    []PetalSearchResult `json:"maps"`
	Flowers []PetalSearchResult `json:"flowers"`
	Groups  []AccountGroup      `json:"groups"`
}

// LookUpChain is what the chain says at final: whether the account exists,
// its balance, and what its contract is by the readers' probes.
type LookUpChain struct {
	Exists      bool            `json:"exists"`
	AmountYocto *string         `json:"amount_yocto"`
	Kind        *string         `json:"kind" jsonschema:"sputnik_dao, staking_pool, fungible_token, erc20, erc20_votes, baal, or null"`
	Probe       *string         `json:"probe"`
	Detail      json.RawMessage `json:"detail"`
}

// LookUpNextStep names the next tool to call and why.
type LookUpNextStep struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args" jsonschema:"the next tool's input"`
	Why  string          `json:"why"`
}

// Tools implements ToolSet: look_up reads the chain, so a public site
// refuses it.
func (s *LookUpService) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{
			Name: ToolLookUp,
			Description: "One answer for a NEAR account id, an EVM address (with chain eip155:<id>) or a name: what this site's map holds about it (maps and flowers naming it, the groups it is in), " +
				"what the chain says (whether it exists, its balance, whether it is a Sputnik DAO, a staking pool or a fungible token; on an EVM chain whether it is a Baal, an ERC20Votes token or an ERC-20) and the next tool to call.",
			OnTheirMachine: true,
		}, func(ctx context.Context, call toolkit.Call, in LookUpInput) (LookUpAnswer, error) {
			return s.LookUp(ctx, call.Caller, in)
		}),
	}
}

// lookUpProbes are the view calls the readers make first, each answering
// only for its kind of contract.
var lookUpProbes = []struct{ kind, method string }{
	{"sputnik_dao", "get_config"},
	{"staking_pool", "get_number_of_accounts"},
	{"fungible_token", "ft_metadata"},
}

// LookUp answers one query.
func (s *LookUpService) LookUp(ctx context.Context, caller toolkit.Caller, in LookUpInput) (LookUpAnswer, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" || len(in.Query) > 200 {
		return LookUpAnswer{}, errs.New(errs.BadInput, "query is required: an account id or words, up to 200 characters")
	}
	if _, isEVM := evm.ChainID(in.Chain); isEVM {
		ctx, cancel := context.WithTimeout(ctx, lookUpDeadline)
		defer cancel()
		return s.lookUpEVM(ctx, q, in.Chain)
	}
	chain, err := snapshotsapp.ChainOf(in.Chain)
	if err != nil {
		return LookUpAnswer{}, errs.Newf(errs.BadInput, "chain must be near:mainnet, near:testnet or an EVM chain as eip155:<id>, not %q", in.Chain)
	}
	ctx, cancel := context.WithTimeout(ctx, lookUpDeadline)
	defer cancel()
	ans := LookUpAnswer{Query: q, Chain: chain, Map: LookUpMap{Maps: []PetalSearchResult{}, Flowers: []PetalSearchResult{}, Groups: []AccountGroup{}}}
	account := strings.ToLower(strings.TrimPrefix(q, chain+":"))
	isAccount := snapshots.ValidNearAccount(account) && (strings.Contains(account, ".") || len(account) == 64)

	if err := s.mapHolds(ctx, q, &ans); err != nil {
		return LookUpAnswer{}, err
	}
	if !isAccount {
		ans.Next = nextStep("find_target", map[string]any{"query": q, "chain": chain},
			"not an account id: find_target names the DAOs and pools these words fit")
		return ans, nil
	}
	ans.Account = &account
	groups, err := s.relations.AccountGroups(ctx, AccountGroupsInput{Account: chain + ":" + account, Limit: lookUpListMax})
	if err != nil && !errs.Is(err, errs.BadInput) && !errs.Is(err, errs.NotFound) {
		return LookUpAnswer{}, err
	}
	ans.Map.Groups = append(ans.Map.Groups, groups.Groups...)

	said, err := s.chainSays(ctx, chain, account)
	if err != nil {
		return LookUpAnswer{}, err
	}
	ans.OnChain = said
	switch {
	case !said.Exists:
		ans.Next = nextStep("find_target", map[string]any{"query": q, "chain": chain}, "no such account on "+chain+": find_target finds DAOs and pools by name")
	case said.Kind == nil:
		ans.Next = nextStep("read_chain", map[string]any{"network": chain, "contract": account, "method": "<a view method>"},
			"not a Sputnik DAO, a staking pool or a fungible token by petal's probes: read its contract's view methods, if it has one")
	case *said.Kind == "sputnik_dao":
		ans.Next = nextStep("get_snapshot", map[string]any{"network": "near-dao-members", "params": snapshotsapp.DAOParams{DAO: account, Chain: chain}}, "read the DAO's members")
	case *said.Kind == "staking_pool":
		ans.Next = nextStep("get_snapshot", map[string]any{"network": "near-staking-pool", "params": snapshotsapp.PoolParams{Pool: account, Chain: chain}}, "read the pool's delegators")
	default:
		ans.Next = nextStep("get_snapshot", map[string]any{"network": "near-ft-balances"},
			"read the token's balances of the accounts you name (its params: GET /api/v1/networks/near-ft-balances)")
	}
	return ans, nil
}

// mapHolds fills in what the map holds: its own search, the words whole (no prefix).
func (s *LookUpService) mapHolds(ctx context.Context, q string, ans *LookUpAnswer) error {
	found, err := s.search.Search(ctx, toolkit.Caller{}, SearchPetalsInput{Q: q + " ", Kinds: "map,flower", Limit: SearchMaxLimit})
	if err != nil && !errs.Is(err, errs.BadInput) {
		return err
	}
	for _, r := range found.Results {
		if r.Kind == "map" && len(ans.Map.Maps) < lookUpListMax {
			ans.Map.Maps = append(ans.Map.Maps, r)
		} else if r.Kind == "flower" && len(ans.Map.Flowers) < lookUpListMax {
			ans.Map.Flowers = append(ans.Map.Flowers, r)
		}
	}
	return nil
}

// lookUpEVM answers for an EVM chain: an address is probed at the
// finalized block by find_target's prober (snapshotsapp.ProbeEVM): a Baal
// by its sharesToken and lootToken, an ERC-20 by its name, symbol,
// decimals and totalSupply, ERC20Votes by getVotes.
func (s *LookUpService) lookUpEVM(ctx context.Context, q, chain string) (LookUpAnswer, error) {
	id, _ := evm.ChainID(chain)
	chain = evm.Chain(id)
	if s.evm == nil || !slices.Contains(s.evm.EVMChains(), id) {
		return LookUpAnswer{}, errs.Newf(errs.BadInput, "chain %s (%s) can't be read here: it has no RPC endpoint", chain, evm.ChainName(id)).
			WithHint(fmt.Sprintf("set PETAL_EVM_RPC_%d to its JSON-RPC URL", id))
	}
	ans := LookUpAnswer{Query: q, Chain: chain, Map: LookUpMap{Maps: []PetalSearchResult{}, Flowers: []PetalSearchResult{}, Groups: []AccountGroup{}}}
	if err := s.mapHolds(ctx, q, &ans); err != nil {
		return LookUpAnswer{}, err
	}
	addr, err := evm.ParseAddress(strings.TrimPrefix(q, chain+":"))
	if err != nil {
		ans.Next = nextStep("list_networks", map[string]any{"query": "evm"}, "not an EVM address (0x and 40 hex digits): petal reads ERC-20 tokens and Baals on EVM chains by their address")
		return ans, nil
	}
	account := addr.Hex()
	ans.Account = &account
	groups, err := s.relations.AccountGroups(ctx, AccountGroupsInput{Account: evm.AccountID(chain, addr), Limit: lookUpListMax})
	if err != nil && !errs.Is(err, errs.BadInput) && !errs.Is(err, errs.NotFound) {
		return LookUpAnswer{}, err
	}
	ans.Map.Groups = append(ans.Map.Groups, groups.Groups...)

	reading, err := s.evm.PinEVM(ctx, chain)
	if err != nil {
		return LookUpAnswer{}, err
	}
	// Any address exists on an EVM chain; what matters is its contract.
	said := &LookUpChain{Exists: true, Detail: json.RawMessage(`null`)}
	ans.OnChain = said
	c, err := snapshotsapp.ProbeEVM(ctx, reading, addr)
	switch {
	case errs.Is(err, errs.NotFound) || errs.Is(err, errs.CannotRead):
		ans.Next = nextStep("list_networks", map[string]any{"query": "evm"},
			"not an ERC-20 or a Baal by petal's probes (no contract, or no decimals and totalSupply, no sharesToken and lootToken): petal reads ERC-20 tokens' holders and delegates and Baals' members and proposals")
		return ans, nil
	case err != nil:
		return LookUpAnswer{}, err
	}
	said.Kind, said.Probe = &c.Kind, &c.Probe
	height := reading.Block().Height
	if c.Kind == snapshotsapp.EVMBaal {
		detail := map[string]any{"shares_token": c.Shares.Hex(), "loot_token": c.Loot.Hex(), "block": height}
		if c.Token != nil {
			detail["name"], detail["symbol"], detail["decimals"], detail["total_shares"] = c.Token.Name, c.Token.Symbol, c.Token.Decimals, c.Token.TotalSupply.String()
		}
		said.Detail, _ = json.Marshal(detail)
		ans.Next = nextStep("get_snapshot", map[string]any{"network": "evm-baal-members", "params": map[string]any{"chain": chain, "dao": account}},
			"read the Baal's members by shares (voting) and loot (non-voting); evm-baal-proposals reads its proposals and votes")
		return ans, nil
	}
	tok := c.Token
	said.Detail, _ = json.Marshal(map[string]any{"name": tok.Name, "symbol": tok.Symbol, "decimals": tok.Decimals,
		"total_supply": tok.TotalSupply.String(), "block": height})
	why := "read the token's holders from its Transfer logs"
	if c.Kind == snapshotsapp.EVMERC20Votes {
		why += "; it is ERC20Votes, so evm-erc20-delegates reads its delegates too"
	}
	ans.Next = nextStep("get_snapshot", map[string]any{"network": "evm-erc20-holders", "params": map[string]any{"chain": chain, "token": account}}, why)
	return ans, nil
}

// chainSays reads view_account, then the probes in turn until one answers;
// a probe the contract doesn't have (or panics on) says nothing, an account
// without a contract stops the probes.
func (s *LookUpService) chainSays(ctx context.Context, chain, account string) (*LookUpChain, error) {
	acc, err := s.near.ViewAccount(ctx, chain, account)
	if errs.Is(err, errs.NotFound) {
		return &LookUpChain{Detail: json.RawMessage(`null`)}, nil
	}
	if err != nil {
		return nil, err
	}
	out := &LookUpChain{Exists: true, AmountYocto: &acc.AmountYocto, Detail: json.RawMessage(`null`)}
	for _, p := range orderProbes(chain, account) {
		v, err := s.views.View(ctx, chain, account, p.method, []byte(`{}`), lookUpProbeMax)
		switch {
		case errs.Is(err, errs.NotFound):
			return out, nil // no contract
		case errs.Is(err, errs.CannotRead):
			continue
		case err != nil:
			return nil, err
		}
		if !json.Valid(v.Result) {
			continue
		}
		kind, method := p.kind, p.method
		out.Kind, out.Probe, out.Detail = &kind, &method, json.RawMessage(v.Result)
		return out, nil
	}
	return out, nil
}

// orderProbes tries first the probe its name suggests, so a DAO or a pool
// costs one call.
func orderProbes(chain, account string) []struct{ kind, method string } {
	first := 2
	switch {
	case strings.HasSuffix(account, snapshots.DAOSuffix(chain)):
		first = 0
	case strings.Contains(account, "pool"):
		first = 1
	}
	out := []struct{ kind, method string }{lookUpProbes[first]}
	for i, p := range lookUpProbes {
		if i != first {
			out = append(out, p)
		}
	}
	return out
}

func nextStep(tool string, args any, why string) LookUpNextStep {
	raw, _ := json.Marshal(args)
	return LookUpNextStep{Tool: tool, Args: raw, Why: why}
}
