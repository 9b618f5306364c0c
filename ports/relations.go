package ports

import (
	"context"
	"time"

	"github.com/petal-near/petal/domain/relations"
)

// RelationReading is one reading of a group (a map), offered to the
// relations index: its members only when it is a holdings reading.
type RelationReading struct {
	Group    string // the map's id
	Snapshot string // the reading's sha256
	AsOf     time.Time
	Reader   string // the reader's id (near-dao-members, …)
	Title    string
	Holdings bool   // false: recorded, never a group's members (a DAO's votes)
	Total    string // the members' total weight, decimal text
	Members  []relations.Member
}

// ReadingRef names one reading of one map.
type ReadingRef struct {
	Group    string
	Snapshot string
	// Attempts is how many times indexing it failed before (0: never tried).
	Attempts int
}

// RelationGroup is a group as indexed.
type RelationGroup struct {
	Group    string
	Snapshot string
	AsOf     time.Time
	Reader   string
	Kind     string
	Title    string
	Members  int64
	Total    string
}

// Membership is an account in a group.
type Membership struct {
	Group   string
	Title   string
	Account string
	Weight  string
	Share   int64 // 10^-12
	Rank    int
}

// SharedMember is an account two groups share, with its place in each.
type SharedMember struct {
	Account      string
	WeightA      string
	ShareA       int64
	WeightB      string
	ShareB       int64
	SmallerShare int64
}

// RelatedGroup is a group sharing accounts with another: how many, the sizes
// of both, and the share of the related group those accounts hold.
type RelatedGroup struct {
	Group         string
	Title         string
	Shared        int64
	Members       int64 // the related group's
	Of            int64 // the asked group's
	WeightInGroup int64 // 10^-12 of the related group
}

// GroupPair is two groups (A < B) that share accounts.
type GroupPair struct {
	A, B     string
	Shared   int64
	MembersA int64
	MembersB int64
}

// RelatedOrder is how related groups are ordered, each largest first.
type RelatedOrder string

const (
	RelatedByCount   RelatedOrder = "count"
	RelatedByJaccard RelatedOrder = "jaccard"
	RelatedByWeight  RelatedOrder = "weight"
)

// RelationKey is where a page goes on from: the last item's sort value
// (an integer, or a Jaccard index as two counts) and its name(s).
type RelationKey struct {
	Set   bool
	Value int64
	Num   int64 // Jaccard: shared
	Den   int64 // Jaccard: the union
	Name  string
	Name2 string
}

// RelationQuery is a page of one relation list. Hidden groups are in no
// answer.
type RelationQuery struct {
	Hidden []string
	Limit  int
	After  RelationKey
}

// RelationStore is the relations index (migrations/000030_relations): one
// row per (group, account), rebuilt for a group in the transaction that
// makes a reading its newest, and the pairs of groups sharing accounts,
// rewritten for a group when it is rebuilt. Every read is one statement (or
// one read-only snapshot), so no reader sees half a rebuild.
type RelationStore interface {
	// Newest is the group's reading its members are from; ok false when the
	// group has none.
	Newest(ctx context.Context, group string) (snapshot string, asOf time.Time, ok bool, err error)
	// Offer records a reading of a group and, when it is a holdings reading
	// newer than the group's (by block time, then the lower sha256), makes
	// it the newest and rebuilds the group's members and pairs, all in one
	// transaction. rebuilt says whether it did.
	Offer(ctx context.Context, r RelationReading) (rebuilt bool, err error)
	// Unoffered is up to limit readings of published flowers (status ok)
	// never offered and not put off by Failed, the never-tried first.
	Unoffered(ctx context.Context, limit int) ([]ReadingRef, error)
	// Failed records that offering a reading failed: it counts one more
	// attempt and is left out of Unoffered for retryIn. A reading offered
	// later forgets its failures.
	Failed(ctx context.Context, r ReadingRef, retryIn time.Duration, reason string) error

	// Group is one group, or errs.NotFound.
	Group(ctx context.Context, group string) (RelationGroup, error)
	// AccountGroups is a page of the groups an account is in, by its share
	// (largest first, then group id), with titles.
	AccountGroups(ctx context.Context, account string, q RelationQuery) ([]Membership, error)
	// Shared is how many accounts two groups share and a page of them, by
	// the smaller of their two shares (largest first, then account).
	Shared(ctx context.Context, a, b string, q RelationQuery) (int64, []SharedMember, error)
	// Related is a page of the groups sharing accounts with group, in order.
	Related(ctx context.Context, group string, by RelatedOrder, q RelationQuery) ([]RelatedGroup, error)
	// Pairs is a page of pairs sharing at least minShared accounts, by shared
	// (largest first, then a, b), both of kind when kind is not "".
	Pairs(ctx context.Context, minShared int64, kind string, q RelationQuery) ([]GroupPair, error)
	// Groups is the groups named, with their sizes (unknown ones left out).
	Groups(ctx context.Context, groups []string) ([]RelationGroup, error)
	// Walk runs fn over one read-only snapshot of the index.
	Walk(ctx context.Context, fn func(RelationWalker) error) error
}

// RelationWalker reads memberships for a walk through shared accounts.
type RelationWalker interface {
	// GroupsOf is the memberships of the accounts named, at most limit
	// rows, hidden groups left out.
	GroupsOf(ctx context.Context, accounts []string, hidden []string, limit int) ([]Membership, error)
	// MembersOf is the memberships of the groups named, at most limit rows.
	MembersOf(ctx context.Context, groups []string, limit int) ([]Membership, error)
	// Known reports whether the account is in any group that isn't hidden.
	Known(ctx context.Context, account string, hidden []string) (bool, error)
}
