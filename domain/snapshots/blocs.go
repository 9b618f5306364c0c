package snapshots

import (
	"cmp"
	"encoding/json"
	"math/big"
	"slices"
	"strings"

	"github.com/petal-near/petal/domain/errs"
)

// voting_blocs: who votes with whom in a DAO's proposals reading (docs/figures.md,
// "Who votes with whom").

// ProposalsNetwork is the reader whose readings keep a DAO's proposals and votes.
const ProposalsNetwork = "near-dao-proposals"

// Bounds on voting_blocs.
const (
	DefaultBlocsLimit = 20
	MaxBlocsLimit     = 100
	// MaxBlocVoters bounds the voters paired: the most active first, so at
	// most about half a million pairs are counted, in 8 MiB of counts.
	MaxBlocVoters = 1000
	// DefaultMinCommon is how many proposals two accounts must both have
	// voted on before their agreement is shown: one shared vote says little.
	DefaultMinCommon = 3
)

// BlocsQuery is what voting_blocs is asked.
type BlocsQuery struct {
	MinCommon    int      // pairs that voted on at least this many proposals together; 0: DefaultMinCommon
	MinAgreement Fraction // a bloc joins pairs agreeing at least this much; undefined: 0.8
	Offset       int
	Limit        int // 0: DefaultBlocsLimit
}

// VotingBlocs is what voting_blocs answers.
type VotingBlocs struct {
	Proposals int `json:"proposals"` // proposals read, with or without votes
	Voters    int `json:"voters"`    // accounts that voted on any
	// Paired is how many of the most active voters were paired (every voter
	// unless there were more than MaxBlocVoters).
	Paired       int        `json:"paired"`
	MinCommon    int        `json:"min_common"`
	MinAgreement Fraction   `json:"min_agreement"`
	Pairs        BlocPairs  `json:"pairs"`
	Blocs        []VoteBloc `json:"blocs"`
}

// BlocPairs is one page of the pairs, the most alike first.
type BlocPairs struct {
	Total int        `json:"total"`
	Items []BlocPair `json:"items"`
}

// BlocPair is two accounts and how alike they voted: Agreed of the Common
// proposals both voted on, they voted the same way.
type BlocPair struct {
	A         string   `json:"a"`
	B         string   `json:"b"`
	Common    int      `json:"common"`
	Agreed    int      `json:"agreed"`
	Agreement Fraction `json:"agreement"` // agreed / common
}

// VoteBloc is a group of accounts joined by pairs that agree at least
// MinAgreement over at least MinCommon proposals (each account linked to
// the bloc by one such pair at least), the largest first.
type VoteBloc struct {
	Accounts []string `json:"accounts"`
	Size     int      `json:"size"`
}

// Blocs computes voting_blocs over a proposals reading.
func Blocs(s *Snapshot, q BlocsQuery) (VotingBlocs, error) {
	if s.Network != ProposalsNetwork {
		return VotingBlocs{}, errs.Newf(errs.BadInput, "sha256: a reading by %s, not a DAO's proposals (%s)", truncate(s.Network, 60), ProposalsNetwork).
			WithHint("get_snapshot with network near-dao-proposals reads a DAO's proposals and votes")
	}
	if q.MinCommon == 0 {
		q.MinCommon = DefaultMinCommon
	}
	if !q.MinAgreement.Defined {
		q.MinAgreement = Fraction{Millionths: 800_000, Defined: true}
	}
	if q.Limit == 0 {
		q.Limit = DefaultBlocsLimit
	}
	switch {
	case q.MinCommon < 1 || q.MinCommon > 10_000:
		return VotingBlocs{}, errs.Newf(errs.BadInput, "min_common: %d; from 1 to 10000", q.MinCommon)
	case q.MinAgreement.Millionths < 0 || q.MinAgreement.Millionths > 1_000_000:
		return VotingBlocs{}, errs.New(errs.BadInput, "min_agreement: from 0 to 1")
	case q.Limit < 1 || q.Limit > MaxBlocsLimit:
		return VotingBlocs{}, errs.Newf(errs.BadInput, "limit: %d; from 1 to %d", q.Limit, MaxBlocsLimit)
	case q.Offset < 0 || q.Offset > MaxBlocVoters*MaxBlocVoters:
		return VotingBlocs{}, errs.Newf(errs.BadInput, "offset: %d; from 0", q.Offset)
	}
	var detail struct {
		Proposals []Proposal `json:"proposals"`
	}
	if len(s.Detail) > 0 {
		if err := json.Unmarshal(s.Detail, &detail); err != nil {
			return VotingBlocs{}, errs.New(errs.BadInput, "sha256: this reading's proposals could not be read").WithCause(err)
		}
	}
	// Voters by how many proposals they voted on, the most active first.
	cast := map[string]int{}
	for _, p := range detail.Proposals {
		for v := range p.Votes {
			if ValidNearAccount(v) { // as the tally keeps voters
				cast[v]++
			}
		}
	}
	voters := make([]string, 0, len(cast))
	for v := range cast {
		voters = append(voters, v)
	}
	slices.SortFunc(voters, func(a, b string) int { return cmp.Or(cast[b]-cast[a], strings.Compare(a, b)) })
	out := VotingBlocs{Proposals: len(detail.Proposals), Voters: len(voters), MinCommon: q.MinCommon, MinAgreement: q.MinAgreement}
	voters = voters[:min(len(voters), MaxBlocVoters)]
	out.Paired = len(voters)
	index := make(map[string]int, len(voters))
	for i, v := range voters {
		index[v] = i
	}
	n := len(voters)
	// common[i*n+j] and agreed[i*n+j] for i < j: at most 1,000² counts each.
	common := make([]uint32, n*n)
	agreed := make([]uint32, n*n)
	type ballot struct {
		voter int
		vote  string
	}
	for _, p := range detail.Proposals {
		bs := make([]ballot, 0, len(p.Votes))
		for v, vote := range p.Votes {
			if i, ok := index[v]; ok {
				bs = append(bs, ballot{i, strings.ToLower(vote)})
			}
		}
		for x := range bs {
			for y := x + 1; y < len(bs); y++ {
				i, j := bs[x].voter, bs[y].voter
				if i > j {
					i, j = j, i
				}
				common[i*n+j]++
				if bs[x].vote == bs[y].vote {
					agreed[i*n+j]++
				}
			}
		}
	}
	var pairs []BlocPair
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	thresholdNum := big.NewInt(q.MinAgreement.Millionths)
	for i := range n {
		for j := i + 1; j < n; j++ {
			c, a := int(common[i*n+j]), int(agreed[i*n+j])
			if c < q.MinCommon {
				continue
			}
			va, vb := voters[i], voters[j]
			if vb < va {
				va, vb = vb, va // a pair is named in account order
			}
			pairs = append(pairs, BlocPair{A: AccountID(s.Chain, va), B: AccountID(s.Chain, vb), Common: c, Agreed: a,
				Agreement: NewFraction(big.NewInt(int64(a)), big.NewInt(int64(c)))})
			// a/c ≥ t/10^6, exactly: a·10^6 ≥ t·c.
			if int64(a)*1_000_000 >= thresholdNum.Int64()*int64(c) {
				parent[find(i)] = find(j)
			}
		}
	}
	// The most alike first: by agreement exactly (a₁·c₂ against a₂·c₁), then
	// the more proposals in common, then by account.
	slices.SortFunc(pairs, func(x, y BlocPair) int {
		return cmp.Or(cmp.Compare(y.Agreed*x.Common, x.Agreed*y.Common), y.Common-x.Common, strings.Compare(x.A, y.A), strings.Compare(x.B, y.B))
	})
	out.Pairs.Total = len(pairs)
	out.Pairs.Items = []BlocPair{}
	if q.Offset < len(pairs) {
		out.Pairs.Items = pairs[q.Offset:min(len(pairs), q.Offset+q.Limit)]
	}
	members := map[int][]string{}
	for i := range n {
		r := find(i)
		members[r] = append(members[r], AccountID(s.Chain, voters[i]))
	}
	out.Blocs = []VoteBloc{}
	for _, m := range members {
		if len(m) > 1 {
			slices.Sort(m)
			out.Blocs = append(out.Blocs, VoteBloc{Accounts: m, Size: len(m)})
		}
	}
	slices.SortFunc(out.Blocs, func(x, y VoteBloc) int { return cmp.Or(y.Size-x.Size, strings.Compare(x.Accounts[0], y.Accounts[0])) })
	return out, nil
}
