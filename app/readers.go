package app

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/petal-near/petal/domain/errs"
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

// readContext is one fresh read in progress: the chain pinned to one block,
// the calls made so far, and where progress goes.
type readContext struct {
	chain    ports.Chain
	network  string // the chain id, near:mainnet
	block    snapshots.Block
	progress func(Progress)
	pageSize int

	mu    sync.Mutex
	calls []snapshots.Call
}

// view calls a view method at the pinned block and decodes its JSON answer.
// Calls are recorded per contract and method; a repeated call counts pages.
func (rc *readContext) view(ctx context.Context, contract, method string, args, out any) error {
	rc.record(contract, method, args)
	b, err := rc.chain.CallFunction(ctx, rc.network, rc.block.Height, contract, method, args)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return errs.Newf(errs.CannotRead, "%s answered %s with something petal can't read: it may not be the kind of contract this reader reads", contract, method).WithCause(err)
	}
	return nil
}

func (rc *readContext) record(contract, method string, args any) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i := range rc.calls {
		c := &rc.calls[i]
		if c.Contract == contract && c.Method == method {
			if c.Pages == 0 {
				c.Pages = 1
			}
			c.Pages++
			// Many calls have many arguments; which came first is chance
			// (calls run in parallel), so none is kept.
			c.Args = ""
			return
		}
	}
	call := snapshots.Call{Contract: contract, Method: method}
	if args != nil {
		b, _ := json.Marshal(args)
		call.Args = string(b)
	}
	rc.calls = append(rc.calls, call)
}

func (rc *readContext) source() snapshots.Source {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return snapshots.Source{Calls: slices.Clone(rc.calls)}
}

func (rc *readContext) say(stage, message string, done, total *int) {
	rc.progress(Progress{Stage: stage, Message: message, Done: done, Total: total})
}

func intp(n int) *int { return &n }

// base is a snapshot's common part for this read.
func (rc *readContext) base(network string, params json.RawMessage, title, about string) snapshots.Snapshot {
	return snapshots.Snapshot{
		Schema: snapshots.Schema, Network: network, Params: params, Chain: rc.network, Block: rc.block,
		Title: clip(title, snapshots.MaxTitle), About: clip(about, snapshots.MaxAbout), Groups: []snapshots.Group{}, Accounts: []snapshots.Account{},
	}
}

// clip cuts what a contract says (a DAO's purpose, a role's name, a token's
// symbol) to a snapshot's bounds, on a character boundary, marking the cut.
func clip(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}

const chainProperty = `"chain":{"type":"string","enum":["near:mainnet","near:testnet"],"default":"near:mainnet","description":"the NEAR network"}`

// readers is every network petal reads, in the order list_networks gives.
var readers = []Reader{
	{
		ID: "near-dao-members", Title: "Sputnik DAO members", Chain: snapshots.Mainnet,
		Reads: "A Sputnik DAO's members, grouped by role (get_config, get_policy); each member weighs 1.",
		Params: json.RawMessage(`{"type":"object","properties":{"dao":{"type":"string","description":"the DAO's account, such as marketing.sputnik-dao.near; a bare name gets the factory's suffix"},` +
			chainProperty + `},"required":["dao"],"additionalProperties":false}`),
		prepare: prepareDAO("near-dao-members", readDAOMembers),
	},
	{
		ID: "near-dao-proposals", Title: "Sputnik DAO proposals and votes", Chain: snapshots.Mainnet,
		Reads: "A Sputnik DAO's proposals and who voted how (get_last_proposal_id, paged get_proposals): accounts weighted by votes cast, each proposal kept in detail.",
		Params: json.RawMessage(`{"type":"object","properties":{"dao":{"type":"string","description":"the DAO's account, such as marketing.sputnik-dao.near; a bare name gets the factory's suffix"},` +
			chainProperty + `},"required":["dao"],"additionalProperties":false}`),
		prepare: prepareDAO("near-dao-proposals", readDAOProposals),
	},
	{
		ID: "near-staking-pool", Title: "Staking pool delegators", Chain: snapshots.Mainnet,
		Reads: "A validator's staking pool: its delegators weighted by staked NEAR (get_number_of_accounts, paged get_accounts).",
		Params: json.RawMessage(`{"type":"object","properties":{"pool":{"type":"string","description":"the pool's account, such as astro-stakers.poolv1.near"},` +
			chainProperty + `},"required":["pool"],"additionalProperties":false}`),
		prepare: preparePool,
	},
	{
		ID: "near-ft-balances", Title: "Fungible token balances", Chain: snapshots.Mainnet,
		Reads: "One fungible token's balances (ft_metadata, ft_balance_of) across the accounts of another snapshot or a list of up to 1,000 accounts, in the token's own units.",
		Params: json.RawMessage(`{"type":"object","properties":{"token":{"type":"string","description":"the token's contract, such as usdt.tether-token.near"},` +
			`"accounts":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":1000,"description":"the accounts to read, as NEAR account ids or CAIP-10 ids"},` +
			`"snapshot":{"type":"string","pattern":"^[0-9a-f]{64}$","description":"read the accounts of this snapshot instead (its top 1,000 by weight)"},` +
			chainProperty + `},"required":["token"],"additionalProperties":false}`),
		prepare: prepareFT,
	},
}

func init() {
	for i := range readers {
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
	if err := DecodeInput(raw, into); err != nil {
		if e, ok := errs.As(err); ok {
			msg := e.Message
			for _, prefix := range []string{"unknown field ", "field "} {
				if rest, ok := strings.CutPrefix(msg, prefix); ok {
					msg = prefix + "params." + rest
					break
				}
			}
			return errs.New(errs.BadInput, "params: "+msg, "see the network's params schema at /api/v1/networks/:id")
		}
		return err
	}
	return nil
}

func chainOf(chain string) (string, error) {
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

// daoSuffix is the Sputnik v2 factory's suffix on each chain.
func daoSuffix(chain string) string {
	if chain == snapshots.Testnet {
		return ".sputnikv2.testnet"
	}
	return ".sputnik-dao.near"
}

func daoFactory(chain string) string { return strings.TrimPrefix(daoSuffix(chain), ".") }

type daoParams struct {
	DAO   string `json:"dao"`
	Chain string `json:"chain"`
}

func prepareDAO(network string, read func(ctx context.Context, rc *readContext, p daoParams, params json.RawMessage) (snapshots.Snapshot, error)) func(*SnapshotService, json.RawMessage) (*target, error) {
	return func(_ *SnapshotService, raw json.RawMessage) (*target, error) {
		var p daoParams
		if err := decodeParams(raw, &p); err != nil {
			return nil, err
		}
		chain, err := chainOf(p.Chain)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(p.DAO) == "" {
			return nil, errs.New(errs.BadInput, "params.dao is required: the DAO's account, such as marketing.sputnik-dao.near")
		}
		dao := strings.TrimSpace(p.DAO)
		if !strings.Contains(dao, ".") && !strings.Contains(dao, ":") {
			dao += daoSuffix(chain)
		}
		if dao, err = accountParam("dao", chain, dao); err != nil {
			return nil, err
		}
		p = daoParams{DAO: dao, Chain: chain}
		params := marshalParams(p)
		return &target{network: network, chain: chain, params: params, read: func(ctx context.Context, rc *readContext) (snapshots.Snapshot, error) {
			return read(ctx, rc, p, params)
		}}, nil
	}
}

type daoConfig struct {
	Name    string `json:"name"`
	Purpose string `json:"purpose"`
}

type daoRole struct {
	Name string          `json:"name"`
	Kind json.RawMessage `json:"kind"`
}

var nonGroupID = regexp.MustCompile(`[^a-z0-9_.:-]+`)

// groupIDs gives each role name a group id (lower case, safe characters),
// distinct even when two names slug the same.
func groupIDs(names []string) []string {
	ids := make([]string, len(names))
	used := map[string]bool{}
	for i, n := range names {
		id := strings.Trim(nonGroupID.ReplaceAllString(strings.ToLower(n), "-"), "-_.:")
		if id == "" {
			id = "role"
		}
		if len(id) > 60 {
			id = id[:60]
		}
		base := id
		for k := 2; used[id]; k++ {
			id = fmt.Sprintf("%s-%d", base, k)
		}
		used[id] = true
		ids[i] = id
	}
	return ids
}

func readDAOMembers(ctx context.Context, rc *readContext, p daoParams, params json.RawMessage) (snapshots.Snapshot, error) {
	rc.say("config", "reading "+p.DAO+"'s config", nil, nil)
	var cfg daoConfig
	if err := rc.view(ctx, p.DAO, "get_config", nil, &cfg); err != nil {
		return snapshots.Snapshot{}, err
	}
	rc.say("policy", "reading "+p.DAO+"'s roles", nil, nil)
	var policy struct {
		Roles []daoRole `json:"roles"`
	}
	if err := rc.view(ctx, p.DAO, "get_policy", nil, &policy); err != nil {
		return snapshots.Snapshot{}, err
	}
	about := fmt.Sprintf("The accounts holding a role in %s, grouped by role, each weighing 1.", p.DAO)
	if cfg.Purpose != "" {
		about = strings.TrimSpace(cfg.Purpose) + " " + about
	}
	s := rc.base("near-dao-members", params, "Members of "+p.DAO, about)
	var names []string
	var members [][]string
	for _, r := range policy.Roles {
		var kind struct {
			Group []string `json:"Group"`
		}
		// "Everyone" and {"Member": …} name no accounts; only groups do.
		if json.Unmarshal(r.Kind, &kind) != nil || kind.Group == nil {
			continue
		}
		names = append(names, r.Name)
		members = append(members, kind.Group)
	}
	ids := groupIDs(names)
	byAccount := map[string][]string{}
	rolesOf := map[string][]string{}
	for i, group := range members {
		s.Groups = append(s.Groups, snapshots.Group{ID: ids[i], Label: clip(names[i], snapshots.MaxLabel)})
		for _, acct := range group {
			if !slices.Contains(byAccount[acct], ids[i]) {
				byAccount[acct] = append(byAccount[acct], ids[i])
				rolesOf[acct] = append(rolesOf[acct], names[i])
			}
		}
	}
	accounts := make([]string, 0, len(byAccount))
	for a := range byAccount {
		if snapshots.ValidNearAccount(a) {
			accounts = append(accounts, a)
		}
	}
	sort.Strings(accounts)
	for _, a := range accounts {
		s.Accounts = append(s.Accounts, snapshots.Account{
			ID: snapshots.AccountID(rc.network, a), Label: a, Weight: "1", Groups: byAccount[a],
			Attrs: map[string]any{"roles": rolesOf[a]},
		})
	}
	s.Source = rc.source()
	snapshots.KeepTop(&s, snapshots.MaxAccounts)
	return s, nil
}

// proposal is a Sputnik v2 proposal as get_proposals gives it.
type proposal struct {
	ID             uint64            `json:"id"`
	Proposer       string            `json:"proposer"`
	Description    string            `json:"description"`
	Kind           json.RawMessage   `json:"kind"`
	Status         string            `json:"status"`
	Votes          map[string]string `json:"votes"`
	SubmissionTime string            `json:"submission_time"`
}

// maxProposals bounds one reading of a DAO's proposals.
const maxProposals = 20_000

func readDAOProposals(ctx context.Context, rc *readContext, p daoParams, params json.RawMessage) (snapshots.Snapshot, error) {
	rc.say("config", "reading "+p.DAO+"'s config", nil, nil)
	var cfg daoConfig
	if err := rc.view(ctx, p.DAO, "get_config", nil, &cfg); err != nil {
		return snapshots.Snapshot{}, err
	}
	var last uint64
	if err := rc.view(ctx, p.DAO, "get_last_proposal_id", nil, &last); err != nil {
		return snapshots.Snapshot{}, err
	}
	total := int(min(last, maxProposals))
	// The newest proposals matter most: past the bound, read the last ones.
	from := int(last) - total
	rc.say("proposals", fmt.Sprintf("reading %d proposals", total), intp(0), intp(total))
	var props []proposal
	for next := from; next < int(last); {
		var page []proposal
		args := map[string]int{"from_index": next, "limit": rc.pageSize}
		if err := rc.view(ctx, p.DAO, "get_proposals", args, &page); err != nil {
			return snapshots.Snapshot{}, err
		}
		if len(page) == 0 {
			break // ids can have gaps at the end; an empty page is the end
		}
		props = append(props, page...)
		next += rc.pageSize
		rc.say("proposals", fmt.Sprintf("read %d of %d proposals", min(len(props), total), total), intp(min(len(props), total)), intp(total))
	}
	s := rc.base("near-dao-proposals", params, "Votes in "+p.DAO,
		fmt.Sprintf("Who voted on %s's proposals and how: each account weighs the number of votes it cast, over %d proposals.", p.DAO, len(props)))
	s.Groups = []snapshots.Group{{ID: "approve", Label: "Voted approve"}, {ID: "reject", Label: "Voted reject"}, {ID: "remove", Label: "Voted remove"}, {ID: "proposer", Label: "Made a proposal"}}
	type tally struct {
		votes    map[string]int
		proposed int
		byID     map[string]string
	}
	tallies := map[string]*tally{}
	get := func(a string) *tally {
		if tallies[a] == nil {
			tallies[a] = &tally{votes: map[string]int{}, byID: map[string]string{}}
		}
		return tallies[a]
	}
	type proposalDetail struct {
		ID             uint64            `json:"id"`
		Proposer       string            `json:"proposer"`
		Description    string            `json:"description"`
		Kind           json.RawMessage   `json:"kind"`
		Status         string            `json:"status"`
		SubmissionTime string            `json:"submission_time"`
		Votes          map[string]string `json:"votes"`
	}
	details := make([]proposalDetail, 0, len(props))
	for _, pr := range props {
		if pr.Votes == nil {
			pr.Votes = map[string]string{}
		}
		details = append(details, proposalDetail{pr.ID, pr.Proposer, pr.Description, pr.Kind, pr.Status, pr.SubmissionTime, pr.Votes})
		if snapshots.ValidNearAccount(pr.Proposer) {
			get(pr.Proposer).proposed++
		}
		for voter, vote := range pr.Votes {
			if !snapshots.ValidNearAccount(voter) {
				continue
			}
			t := get(voter)
			t.votes[strings.ToLower(vote)]++
			t.byID[fmt.Sprint(pr.ID)] = vote
		}
	}
	names := make([]string, 0, len(tallies))
	for a := range tallies {
		names = append(names, a)
	}
	sort.Strings(names)
	for _, a := range names {
		t := tallies[a]
		cast := 0
		var groups []string
		for _, g := range []string{"approve", "reject", "remove"} {
			if t.votes[g] > 0 {
				groups = append(groups, g)
			}
			cast += t.votes[g]
		}
		if t.proposed > 0 {
			groups = append(groups, "proposer")
		}
		if groups == nil {
			groups = []string{}
		}
		s.Accounts = append(s.Accounts, snapshots.Account{
			ID: snapshots.AccountID(rc.network, a), Label: a, Weight: fmt.Sprint(cast), Groups: groups,
			Attrs: map[string]any{"approve": t.votes["approve"], "reject": t.votes["reject"], "remove": t.votes["remove"], "proposed": t.proposed, "votes": t.byID},
		})
	}
	detail, err := json.Marshal(map[string]any{"proposals": details, "last_proposal_id": last})
	if err != nil {
		return snapshots.Snapshot{}, errs.New(errs.Internal, "the proposals could not be kept").WithCause(err)
	}
	s.Detail = detail
	s.Source = rc.source()
	snapshots.KeepTop(&s, snapshots.MaxAccounts)
	return s, nil
}

type poolParams struct {
	Pool  string `json:"pool"`
	Chain string `json:"chain"`
}

func preparePool(_ *SnapshotService, raw json.RawMessage) (*target, error) {
	var p poolParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	chain, err := chainOf(p.Chain)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Pool) == "" {
		return nil, errs.New(errs.BadInput, "params.pool is required: the pool's account, such as astro-stakers.poolv1.near")
	}
	if p.Pool, err = accountParam("pool", chain, p.Pool); err != nil {
		return nil, err
	}
	p.Chain = chain
	params := marshalParams(p)
	return &target{network: "near-staking-pool", chain: chain, params: params, read: func(ctx context.Context, rc *readContext) (snapshots.Snapshot, error) {
		return readPool(ctx, rc, p, params)
	}}, nil
}

// nearDecimals is yoctoNEAR per NEAR, as a power of ten.
const nearDecimals = 24

// maxPoolAccounts bounds the delegators paged through in one reading; the
// snapshot keeps the top MaxAccounts of them.
const maxPoolAccounts = 1_000_000

func readPool(ctx context.Context, rc *readContext, p poolParams, params json.RawMessage) (snapshots.Snapshot, error) {
	var n int
	if err := rc.view(ctx, p.Pool, "get_number_of_accounts", nil, &n); err != nil {
		return snapshots.Snapshot{}, err
	}
	n = min(n, maxPoolAccounts)
	rc.say("accounts", fmt.Sprintf("reading %d delegators", n), intp(0), intp(n))
	s := rc.base("near-staking-pool", params, "Delegators of "+p.Pool,
		fmt.Sprintf("The accounts staking NEAR with the validator pool %s, each weighted by its staked NEAR.", p.Pool))
	s.Groups = []snapshots.Group{{ID: "staking", Label: "Staking"}, {ID: "unstaking", Label: "Also unstaking"}}
	seen := 0
	for from := 0; from < n; from += rc.pageSize {
		var page []struct {
			AccountID       string `json:"account_id"`
			UnstakedBalance string `json:"unstaked_balance"`
			StakedBalance   string `json:"staked_balance"`
			CanWithdraw     bool   `json:"can_withdraw"`
		}
		if err := rc.view(ctx, p.Pool, "get_accounts", map[string]int{"from_index": from, "limit": rc.pageSize}, &page); err != nil {
			return snapshots.Snapshot{}, err
		}
		if len(page) == 0 {
			break
		}
		for _, a := range page {
			staked, err := snapshots.ShiftDecimal(a.StakedBalance, nearDecimals)
			if err != nil {
				return snapshots.Snapshot{}, errs.Newf(errs.CannotRead, "%s answered get_accounts with a balance petal can't read", p.Pool).WithCause(err)
			}
			// Only accounts with NEAR staked are delegators; one only
			// withdrawing is not.
			if staked == "0" || !snapshots.ValidNearAccount(a.AccountID) {
				continue
			}
			groups := []string{"staking"}
			if strings.TrimLeft(a.UnstakedBalance, "0") != "" {
				groups = append(groups, "unstaking")
			}
			s.Accounts = append(s.Accounts, snapshots.Account{
				ID: snapshots.AccountID(rc.network, a.AccountID), Label: a.AccountID, Weight: staked, Groups: groups,
				Attrs: map[string]any{"staked_yocto": a.StakedBalance, "unstaked_yocto": a.UnstakedBalance, "can_withdraw": a.CanWithdraw},
			})
		}
		seen += len(page)
		rc.say("accounts", fmt.Sprintf("read %d of %d delegators", min(seen, n), n), intp(min(seen, n)), intp(n))
	}
	s.Source = rc.source()
	snapshots.KeepTop(&s, snapshots.MaxAccounts)
	return s, nil
}

// MaxFTAccounts bounds the accounts one token reading reads.
const MaxFTAccounts = 1000

type ftParams struct {
	Token    string   `json:"token"`
	Accounts []string `json:"accounts,omitempty"`
	Snapshot string   `json:"snapshot,omitempty"`
	Chain    string   `json:"chain"`
}

func prepareFT(svc *SnapshotService, raw json.RawMessage) (*target, error) {
	var p ftParams
	if err := decodeParams(raw, &p); err != nil {
		return nil, err
	}
	chain, err := chainOf(p.Chain)
	if err != nil {
		return nil, err
	}
	p.Chain = chain
	if strings.TrimSpace(p.Token) == "" {
		return nil, errs.New(errs.BadInput, "params.token is required: the token's contract, such as usdt.tether-token.near")
	}
	if p.Token, err = accountParam("token", chain, p.Token); err != nil {
		return nil, err
	}
	switch {
	case (len(p.Accounts) > 0) == (p.Snapshot != ""):
		return nil, errs.New(errs.BadInput, "params: give either accounts (a list of up to 1,000) or snapshot (a snapshot's sha256), not both or neither")
	case len(p.Accounts) > MaxFTAccounts:
		return nil, errs.Newf(errs.BadInput, "params.accounts holds %d accounts; at most %d", len(p.Accounts), MaxFTAccounts)
	case p.Snapshot != "":
		if err := CheckSHA256("params.snapshot", p.Snapshot); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	var accounts []string
	for i, a := range p.Accounts {
		id, err := accountParam(fmt.Sprintf("accounts[%d]", i), chain, a)
		if err != nil {
			return nil, err
		}
		if !seen[id] {
			seen[id] = true
			accounts = append(accounts, id)
		}
	}
	// The same set of accounts in any order is the same target.
	sort.Strings(accounts)
	p.Accounts = accounts
	params := marshalParams(p)
	return &target{network: "near-ft-balances", chain: chain, params: params, read: func(ctx context.Context, rc *readContext) (snapshots.Snapshot, error) {
		return readFT(ctx, rc, svc, p, params)
	}}, nil
}

// ftWorkers is how many ft_balance_of calls run at once.
const ftWorkers = 8

func readFT(ctx context.Context, rc *readContext, svc *SnapshotService, p ftParams, params json.RawMessage) (snapshots.Snapshot, error) {
	accounts := p.Accounts
	var cut *snapshots.Cut
	from := "the given accounts"
	if p.Snapshot != "" {
		rc.say("accounts", "reading the accounts of snapshot "+p.Snapshot[:12], nil, nil)
		other, err := LoadSnapshot(ctx, svc.store, p.Snapshot)
		if err != nil {
			return snapshots.Snapshot{}, err
		}
		if other.Chain != rc.network {
			return snapshots.Snapshot{}, errs.Newf(errs.BadInput, "params.snapshot is a reading of %s, not %s", other.Chain, rc.network)
		}
		total := len(other.Accounts)
		snapshots.KeepTop(&other, MaxFTAccounts)
		if total > MaxFTAccounts {
			cut = &snapshots.Cut{Total: total, Kept: MaxFTAccounts}
		}
		for _, a := range other.Accounts {
			accounts = append(accounts, strings.TrimPrefix(a.ID, rc.network+":"))
		}
		from = "the accounts of \"" + other.Title + "\""
	}
	var meta struct {
		Name     string `json:"name"`
		Symbol   string `json:"symbol"`
		Decimals int    `json:"decimals"`
	}
	rc.say("token", "reading "+p.Token+"'s metadata", nil, nil)
	if err := rc.view(ctx, p.Token, "ft_metadata", nil, &meta); err != nil {
		return snapshots.Snapshot{}, err
	}
	if meta.Decimals < 0 || meta.Decimals > 77 {
		return snapshots.Snapshot{}, errs.Newf(errs.CannotRead, "%s says it has %d decimals, which petal can't read", p.Token, meta.Decimals)
	}
	symbol := meta.Symbol
	if symbol == "" {
		symbol = p.Token
	}
	balances := make([]string, len(accounts))
	total := len(accounts)
	rc.say("balances", fmt.Sprintf("reading %d balances", total), intp(0), intp(total))
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		done     int
	)
	work := make(chan int)
	for range min(ftWorkers, max(total, 1)) {
		wg.Go(func() {
			for i := range work {
				var raw string
				err := rc.view(ctx, p.Token, "ft_balance_of", map[string]string{"account_id": accounts[i]}, &raw)
				var bal string
				if err == nil {
					if bal, err = snapshots.ShiftDecimal(raw, meta.Decimals); err != nil {
						err = errs.Newf(errs.CannotRead, "%s answered ft_balance_of with a balance petal can't read", p.Token).WithCause(err)
					}
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				balances[i] = bal
				done++
				if done%50 == 0 || done == total {
					rc.say("balances", fmt.Sprintf("read %d of %d balances", done, total), intp(done), intp(total))
				}
				mu.Unlock()
			}
		})
	}
	for i := range accounts {
		mu.Lock()
		stop := firstErr != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return snapshots.Snapshot{}, firstErr
	}
	if err := ctx.Err(); err != nil {
		return snapshots.Snapshot{}, err
	}
	s := rc.base("near-ft-balances", params, symbol+" balances",
		fmt.Sprintf("How much %s (%s) each of %s holds, in whole tokens.", symbol, p.Token, from))
	s.Groups = []snapshots.Group{{ID: "holders", Label: clip("Holds "+symbol, snapshots.MaxLabel)}, {ID: "none", Label: "Holds none"}}
	for i, a := range accounts {
		group := "holders"
		if balances[i] == "0" {
			group = "none"
		}
		s.Accounts = append(s.Accounts, snapshots.Account{ID: snapshots.AccountID(rc.network, a), Label: a, Weight: balances[i], Groups: []string{group}})
	}
	s.Source = rc.source()
	s.Source.Cut = nil
	if cut != nil {
		// The snapshot read was cut to its top accounts; say so.
		detail, _ := json.Marshal(map[string]any{"accounts_from": p.Snapshot, "accounts_cut": cut})
		s.Detail = detail
	}
	return s, nil
}
