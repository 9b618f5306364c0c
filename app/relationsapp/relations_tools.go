package relationsapp

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/claims"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/relations"
	"github.com/petal-near/petal/ports"
)

// The relations tools' names (the contract's).
const (
	ToolAccountGroups     = "account_groups"
	ToolSharedAccounts    = "shared_accounts"
	ToolRelatedGroups     = "related_groups"
	ToolRelationsOverview = "relations_overview"
	ToolPowerPath         = "power_path"
)

// The relations tools' inputs: each declared here and nowhere else.
type (
	AccountGroupsInput struct {
		Account string `json:"account" jsonschema:"the account, CAIP-10 (near:mainnet:alice.near)"`
		Limit   int    `json:"limit,omitempty" jsonschema:"how many, from 1 to 200 (50 without it)"`
		Cursor  string `json:"cursor,omitempty" jsonschema:"the next_cursor of the page before"`
	}
	SharedAccountsInput struct {
		GroupA string `json:"group_a" jsonschema:"a group: a map id, <chain>:<address>"`
		GroupB string `json:"group_b" jsonschema:"the other group"`
		Limit  int    `json:"limit,omitempty" jsonschema:"how many, from 1 to 200 (50 without it)"`
		Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of the page before"`
	}
	RelatedGroupsInput struct {
		Group  string `json:"group" jsonschema:"a group: a map id, <chain>:<address>"`
		By     string `json:"by,omitempty" jsonschema:"the order: count (shared accounts, the default), jaccard, or weight (the share of the related group those accounts hold)"`
		Limit  int    `json:"limit,omitempty" jsonschema:"how many, from 1 to 200 (50 without it)"`
		Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of the page before"`
	}
	RelationsOverviewInput struct {
		MinShared int    `json:"min_shared,omitempty" jsonschema:"only pairs sharing at least this many accounts (2 without it)"`
		Kind      string `json:"kind,omitempty" jsonschema:"only groups of this kind: dao (DAO members), pool (pool delegators) or token (token holders)"`
		Limit     int    `json:"limit,omitempty" jsonschema:"how many pairs, from 1 to 200 (50 without it)"`
		Cursor    string `json:"cursor,omitempty" jsonschema:"the next_cursor of the page before"`
	}
	PowerPathInput struct {
		AccountA        string `json:"account_a" jsonschema:"where the path starts, CAIP-10"`
		AccountB        string `json:"account_b" jsonschema:"where it ends, CAIP-10"`
		MaxDepth        int    `json:"max_depth,omitempty" jsonschema:"the most groups a path goes through, from 1 to 6 (4 without it)"`
		Budget          int    `json:"budget,omitempty" jsonschema:"the most memberships the search follows, from 1 to 200000 (20000 without it)"`
		IncludeInferred bool   `json:"include_inferred,omitempty" jsonschema:"also walk the site's claims that two accounts have one owner (same_owner)"`
	}
)

func refinePage(s *jsonschema.Schema) {
	limit := toolkit.Property(s, "limit")
	limit.Minimum, limit.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(RelationsMaxLimit))
	toolkit.Property(s, "cursor").MaxLength = jsonschema.Ptr(600)
}

func refineAccount(s *jsonschema.Schema, name string) {
	toolkit.Property(s, name).MaxLength = jsonschema.Ptr(300)
}

func refineGroup(s *jsonschema.Schema, name string) {
	toolkit.Property(s, name).MaxLength = jsonschema.Ptr(200)
}

func (AccountGroupsInput) RefineSchema(s *jsonschema.Schema) {
	refineAccount(s, "account")
	refinePage(s)
}

func (SharedAccountsInput) RefineSchema(s *jsonschema.Schema) {
	refineGroup(s, "group_a")
	refineGroup(s, "group_b")
	refinePage(s)
}

func (RelatedGroupsInput) RefineSchema(s *jsonschema.Schema) {
	refineGroup(s, "group")
	toolkit.Property(s, "by").Enum = []any{"count", "jaccard", "weight"}
	refinePage(s)
}

func (RelationsOverviewInput) RefineSchema(s *jsonschema.Schema) {
	ms := toolkit.Property(s, "min_shared")
	ms.Minimum, ms.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(1_000_000.0)
	toolkit.Property(s, "kind").Enum = []any{relations.KindDAO, relations.KindPool, relations.KindToken}
	refinePage(s)
}

func (PowerPathInput) RefineSchema(s *jsonschema.Schema) {
	refineAccount(s, "account_a")
	refineAccount(s, "account_b")
	d := toolkit.Property(s, "max_depth")
	d.Minimum, d.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(PathMaxDepth))
	b := toolkit.Property(s, "budget")
	b.Minimum, b.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(PathMaxBudget))
}

// Tools implements ToolSet: the relations tools, all kept on a public site
// (they read only this site's index).
func (s *RelationService) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{
			Name:        ToolAccountGroups,
			Description: "The groups (maps on this site: DAOs, staking pools, tokens) an account is in, by its share of each, largest first: its weight as read, its share of the group's total weight (exact decimal text, rounded once to 12 places) and its rank in the group. Cursor-paged.",
		}, func(ctx context.Context, _ toolkit.Call, in AccountGroupsInput) (AccountGroupsAnswer, error) {
			return s.AccountGroups(ctx, in)
		}),
		toolkit.WithIO(toolkit.Tool{
			Name:        ToolSharedAccounts,
			Description: "The accounts two groups share: how many, and a page of them by the smaller of their two shares, largest first, each with its weight and share in both.",
		}, func(ctx context.Context, _ toolkit.Call, in SharedAccountsInput) (SharedAnswer, error) {
			return s.SharedAccounts(ctx, in)
		}),
		toolkit.WithIO(toolkit.Tool{
			Name:        ToolRelatedGroups,
			Description: "The groups sharing accounts with a group, by how many they share (count), their Jaccard index (shared over the union), or the share of the related group those shared accounts hold (weight). Cursor-paged.",
		}, func(ctx context.Context, _ toolkit.Call, in RelatedGroupsInput) (RelatedAnswer, error) {
			return s.RelatedGroups(ctx, in)
		}),
		toolkit.WithIO(toolkit.Tool{
			Name:        ToolRelationsOverview,
			Description: "How the map's groups connect: pairs of groups sharing at least min_shared accounts (2 without it), the most shared first, with their Jaccard index, and the groups those pairs name with their sizes. kind keeps DAO members (dao), pool delegators (pool) or token holders (token). Cursor-paged by pair.",
		}, func(ctx context.Context, _ toolkit.Call, in RelationsOverviewInput) (OverviewAnswer, error) {
			return s.Overview(ctx, in)
		}),
		toolkit.WithIO(toolkit.Tool{
			Name:        ToolPowerPath,
			Description: "How two accounts connect through shared group membership: the shortest paths (at most 5, each through at most max_depth groups), found by a bidirectional breadth-first search that stops at its budget of memberships and says so (exhausted: true) rather than running long. include_inferred also walks the site's same_owner claims.",
		}, func(ctx context.Context, _ toolkit.Call, in PowerPathInput) (PathAnswer, error) {
			return s.PowerPath(ctx, in)
		}),
	}
}

func pageLimit(limit int) int {
	if limit == 0 {
		return RelationsDefaultLimit
	}
	return limit
}

func checkAccount(field, account string) error {
	if !claims.ValidCAIP10(account) {
		return errs.Newf(errs.BadInput, "%s must be an account id in CAIP-10, such as near:mainnet:alice.near", field).
			WithHint("a petal's id is its account's CAIP-10 id")
	}
	return nil
}

// AccountGroupsAnswer is account_groups' answer.
type AccountGroupsAnswer struct {
	Account    string         `json:"account"`
	Groups     []AccountGroup `json:"groups"`
	NextCursor *string        `json:"next_cursor"`
}

// AccountGroup is one group an account is in.
type AccountGroup struct {
	Group  string `json:"group" jsonschema:"a map id"`
	Title  string `json:"title"`
	Weight string `json:"weight" jsonschema:"the account's weight in the group's newest reading, decimal text"`
	Share  string `json:"share" jsonschema:"weight over the group's total, decimal text rounded once to 12 places"`
	Rank   int    `json:"rank" jsonschema:"1 for the largest share; equal shares share a rank"`
}

// AccountGroups is account_groups.
func (s *RelationService) AccountGroups(ctx context.Context, in AccountGroupsInput) (AccountGroupsAnswer, error) {
	if err := checkAccount("account", in.Account); err != nil {
		return AccountGroupsAnswer{}, err
	}
	after, err := decodeKey(in.Cursor)
	if err != nil {
		return AccountGroupsAnswer{}, err
	}
	limit := pageLimit(in.Limit)
	ms, err := s.store.AccountGroups(ctx, in.Account, ports.RelationQuery{Hidden: s.hidden, Limit: limit + 1, After: after})
	if err != nil {
		return AccountGroupsAnswer{}, err
	}
	if len(ms) == 0 && !after.Set {
		return AccountGroupsAnswer{}, unknownAccount("account", in.Account)
	}
	out := AccountGroupsAnswer{Account: in.Account, Groups: make([]AccountGroup, 0, min(len(ms), limit))}
	for i, m := range ms {
		if i == limit {
			last := ms[i-1]
			out.NextCursor = ptr(encodeKey(ports.RelationKey{Value: last.Share, Name: last.Group}))
			break
		}
		out.Groups = append(out.Groups, AccountGroup{Group: m.Group, Title: m.Title, Weight: m.Weight, Share: relations.Format(m.Share), Rank: m.Rank})
	}
	return out, nil
}

// SharedAnswer is shared_accounts' answer.
type SharedAnswer struct {
	GroupA     string          `json:"group_a"`
	GroupB     string          `json:"group_b"`
	Count      int64           `json:"count" jsonschema:"how many accounts the two groups share"`
	Accounts   []SharedAccount `json:"accounts"`
	NextCursor *string         `json:"next_cursor"`
}

// SharedAccount is one account two groups share.
type SharedAccount struct {
	Account string      `json:"account"`
	A       WeightShare `json:"a"`
	B       WeightShare `json:"b"`
}

// WeightShare is an account's weight and share in one group.
type WeightShare struct {
	Weight string `json:"weight"`
	Share  string `json:"share"`
}

// SharedAccounts is shared_accounts.
func (s *RelationService) SharedAccounts(ctx context.Context, in SharedAccountsInput) (SharedAnswer, error) {
	a, err := s.groupID(ctx, "group_a", in.GroupA)
	if err != nil {
		return SharedAnswer{}, err
	}
	b, err := s.groupID(ctx, "group_b", in.GroupB)
	if err != nil {
		return SharedAnswer{}, err
	}
	if a.Group == b.Group {
		return SharedAnswer{}, errs.New(errs.BadInput, "group_b must be another group than group_a", "account_groups lists one group's place for an account")
	}
	after, err := decodeKey(in.Cursor)
	if err != nil {
		return SharedAnswer{}, err
	}
	limit := pageLimit(in.Limit)
	count, rows, err := s.store.Shared(ctx, a.Group, b.Group, ports.RelationQuery{Limit: limit + 1, After: after})
	if err != nil {
		return SharedAnswer{}, err
	}
	out := SharedAnswer{GroupA: a.Group, GroupB: b.Group, Count: count, Accounts: make([]SharedAccount, 0, min(len(rows), limit))}
	for i, r := range rows {
		if i == limit {
			last := rows[i-1]
			out.NextCursor = ptr(encodeKey(ports.RelationKey{Value: last.SmallerShare, Name: last.Account}))
			break
		}
		out.Accounts = append(out.Accounts, SharedAccount{Account: r.Account,
			A: WeightShare{Weight: r.WeightA, Share: relations.Format(r.ShareA)},
			B: WeightShare{Weight: r.WeightB, Share: relations.Format(r.ShareB)}})
	}
	return out, nil
}

// RelatedAnswer is related_groups' answer.
type RelatedAnswer struct {
	Group      string    `json:"group"`
	By         string    `json:"by"`
	Related    []Related `json:"related"`
	NextCursor *string   `json:"next_cursor"`
}

// Related is one group sharing accounts with another.
type Related struct {
	Group         string `json:"group"`
	Title         string `json:"title"`
	Shared        int64  `json:"shared"`
	Jaccard       string `json:"jaccard" jsonschema:"shared over the union of the two groups' accounts, decimal text rounded once to 12 places"`
	WeightInGroup string `json:"weight_in_group" jsonschema:"the share of the related group the shared accounts hold"`
}

// RelatedGroups is related_groups.
func (s *RelationService) RelatedGroups(ctx context.Context, in RelatedGroupsInput) (RelatedAnswer, error) {
	g, err := s.groupID(ctx, "group", in.Group)
	if err != nil {
		return RelatedAnswer{}, err
	}
	by := ports.RelatedOrder(in.By)
	switch by {
	case "":
		by = ports.RelatedByCount
	case ports.RelatedByCount, ports.RelatedByJaccard, ports.RelatedByWeight:
	default:
		return RelatedAnswer{}, errs.New(errs.BadInput, "by must be count, jaccard or weight", "")
	}
	after, err := decodeKey(in.Cursor)
	if err != nil {
		return RelatedAnswer{}, err
	}
	limit := pageLimit(in.Limit)
	rows, err := s.store.Related(ctx, g.Group, by, ports.RelationQuery{Hidden: s.hidden, Limit: limit + 1, After: after})
	if err != nil {
		return RelatedAnswer{}, err
	}
	out := RelatedAnswer{Group: g.Group, By: string(by), Related: make([]Related, 0, min(len(rows), limit))}
	for i, r := range rows {
		if i == limit {
			last := rows[i-1]
			k := ports.RelationKey{Value: last.Shared, Name: last.Group}
			switch by {
			case ports.RelatedByJaccard:
				k.Num, k.Den = last.Shared, last.Members+last.Of-last.Shared
			case ports.RelatedByWeight:
				k.Value = last.WeightInGroup
			}
			out.NextCursor = ptr(encodeKey(k))
			break
		}
		out.Related = append(out.Related, Related{Group: r.Group, Title: r.Title, Shared: r.Shared,
			Jaccard: relations.Format(relations.Jaccard(r.Shared, r.Members, r.Of)), WeightInGroup: relations.Format(r.WeightInGroup)})
	}
	return out, nil
}
