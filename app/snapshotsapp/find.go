package snapshotsapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/domain/snapshots"
)

// KnownStakingPools are validator pools find_target knows by name, per chain.
// Pools have no on-chain directory a view call can list, so petal keeps a
// short list of well-known ones; any pool can still be read by its account.
var KnownStakingPools = map[string][]string{
	snapshots.Mainnet: {
		"astro-stakers.poolv1.near", "figment.poolv1.near", "epic.poolv1.near", "zavodil.poolv1.near",
		"binancenode1.poolv1.near", "aurora.pool.near", "openshards.poolv1.near", "everstake.poolv1.near",
		"chorusone.poolv1.near", "staked.poolv3.near", "kiln.poolv1.near", "nearone.poolv1.near",
	},
	snapshots.Testnet: {"legends.pool.f863973.m0", "aurora.pool.f863973.m0"},
}

// daoListMaxAge is how old the DAO list may be before find_target reads the
// factory again.
const daoListMaxAge = 24 * time.Hour

// maxDAOs bounds the factory's list read into the directory.
const maxDAOs = 100_000

// daoListRefreshTimeout bounds one refresh of the DAO list.
const daoListRefreshTimeout = 2 * time.Minute

// Candidate is one target find_target offers.
type Candidate struct {
	Network   string          `json:"network"`
	Params    json.RawMessage `json:"params"`
	Title     string          `json:"title"`
	About     string          `json:"about"`
	TargetKey string          `json:"target_key"`
	Score     float64         `json:"score"`
}

// FindAnswer is find_target's answer.
type FindAnswer struct {
	Query      string      `json:"query"`
	Ambiguous  bool        `json:"ambiguous"`
	Candidates []Candidate `json:"candidates"`
}

// Words that say what kind of target is meant, not which one.
var (
	stopWords     = map[string]bool{"the": true, "a": true, "an": true, "of": true, "for": true, "on": true, "in": true, "and": true, "near": true, "who": true, "show": true, "me": true, "map": true, "flower": true}
	daoWords      = map[string]bool{"dao": true, "daos": true, "members": true, "member": true, "council": true, "sputnik": true}
	proposalWords = map[string]bool{"proposal": true, "proposals": true, "vote": true, "votes": true, "voted": true, "voters": true, "voting": true}
	poolWords     = map[string]bool{"pool": true, "pools": true, "staking": true, "stake": true, "validator": true, "delegators": true, "delegator": true}
)

// ambiguityMargin: candidates scoring within it of the best fit about equally.
const ambiguityMargin = 0.15

func (s *SnapshotService) findTarget(ctx context.Context, call toolkit.Call, in findTargetInput) (FindAnswer, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" || len(q) > 200 {
		return FindAnswer{}, errs.New(errs.BadInput, "query is required: words naming a DAO or a staking pool, up to 200 characters")
	}
	limit := 5
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > 20 {
			return FindAnswer{}, errs.New(errs.BadInput, "limit must be from 1 to 20")
		}
		limit = *in.Limit
	}
	if in.Chain == "" {
		if c, ok := evmChainInQuery(q); ok {
			in.Chain = c
		}
	}
	if _, isEVM := evm.ChainID(in.Chain); isEVM {
		return s.findEVMTarget(ctx, q, in.Chain, limit)
	}
	chain := snapshots.Mainnet
	if in.Chain != "" {
		var err error
		if chain, err = ChainOf(in.Chain); err != nil {
			return FindAnswer{}, errs.Newf(errs.BadInput, "chain must be near:mainnet, near:testnet or an EVM chain as eip155:<id>, not %q", in.Chain)
		}
	}
	if len(evmAddresses(q, "")) > 0 {
		return FindAnswer{}, errs.New(errs.BadInput, "the query names an EVM address but no EVM chain",
			"give chain as eip155:<id> (eip155:100 is Gnosis), or the address as its CAIP-10 id, eip155:100:0x…")
	}
	daos, err := s.daoList(ctx, chain)
	if err != nil {
		return FindAnswer{}, err
	}
	words, kinds := queryWords(q)
	wantDAO, wantVotes, wantPool := kinds["dao"], kinds["votes"], kinds["pool"]
	type scored struct {
		Candidate
		account string
	}
	var found []scored
	add := func(network, account string, score float64) {
		var params any
		var title, about string
		switch network {
		case "near-staking-pool":
			params = PoolParams{Pool: account, Chain: chain}
			title, about = "Delegators of "+account, "The validator pool's delegators, weighted by staked NEAR."
		case "near-dao-proposals":
			params = DAOParams{DAO: account, Chain: chain}
			title, about = "Votes in "+account, "Who voted on the DAO's proposals and how."
		default:
			params = DAOParams{DAO: account, Chain: chain}
			title, about = "Members of "+account, "The DAO's members, grouped by role."
		}
		raw := marshalParams(params)
		key, _ := snapshots.TargetKey(network, raw)
		found = append(found, scored{Candidate{Network: network, Params: raw, Title: title, About: about, TargetKey: key, Score: math.Round(score*1000) / 1000}, account})
	}
	daoNetwork := "near-dao-members"
	if wantVotes {
		daoNetwork = "near-dao-proposals"
	}
	// An account named outright is the best fit there is.
	for _, w := range strings.Fields(strings.ToLower(q)) {
		w = strings.Trim(strings.TrimPrefix(w, chain+":"), ",;\"'()")
		if strings.Contains(w, ".") && snapshots.ValidNearAccount(w) {
			switch {
			case strings.HasSuffix(w, snapshots.DAOSuffix(chain)):
				add(daoNetwork, w, 3)
			case strings.Contains(w, "pool"):
				add("near-staking-pool", w, 3)
			}
		}
	}
	if len(found) == 0 && len(words) > 0 {
		suffix := snapshots.DAOSuffix(chain)
		if !wantPool || wantDAO {
			for _, d := range daos {
				if sc := nameScore(words, strings.TrimSuffix(d, suffix)); sc > 0 {
					add(daoNetwork, d, sc)
				}
			}
		}
		if !wantDAO || wantPool {
			for _, p := range KnownStakingPools[chain] {
				name := p[:strings.Index(p, ".")]
				if sc := nameScore(words, name); sc > 0 {
					add("near-staking-pool", p, sc)
				}
			}
		}
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].Score != found[j].Score {
			return found[i].Score > found[j].Score
		}
		return found[i].account < found[j].account
	})
	out := FindAnswer{Query: q, Candidates: []Candidate{}}
	for i, c := range found {
		if i == limit {
			break
		}
		out.Candidates = append(out.Candidates, c.Candidate)
	}
	out.Ambiguous = len(found) > 1 && found[0].Score-found[1].Score < ambiguityMargin
	return out, nil
}

// sortCandidates puts the best fit first, then by target key.
func sortCandidates(cs []Candidate) {
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Score != cs[j].Score {
			return cs[i].Score > cs[j].Score
		}
		return cs[i].TargetKey < cs[j].TargetKey
	})
}

// queryWords splits a query into the words that name a target, and says
// which kinds of target its other words ask for.
func queryWords(q string) ([]string, map[string]bool) {
	kinds := map[string]bool{}
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9')
	}) {
		switch {
		case stopWords[w]:
		case daoWords[w]:
			kinds["dao"] = true
		case proposalWords[w]:
			kinds["dao"], kinds["votes"] = true, true
		case poolWords[w]:
			kinds["pool"] = true
		default:
			words = append(words, w)
		}
	}
	return words, kinds
}

// nameScore is how well words fit an account's name: per word, a whole part
// of the name counts 1, the start of a part 0.6, inside a part 0.4; averaged
// over the words, plus 0.5 when the name is exactly the words.
func nameScore(words []string, name string) float64 {
	parts := strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	var sum float64
	for _, w := range words {
		best := 0.0
		for _, p := range parts {
			switch {
			case p == w:
				best = max(best, 1)
			case strings.HasPrefix(p, w) && len(w) >= 3:
				best = max(best, 0.6)
			case strings.Contains(p, w) && len(w) >= 4:
				best = max(best, 0.4)
			}
		}
		if best == 0 && strings.ReplaceAll(name, "-", "") == strings.Join(words, "") {
			best = 1
		}
		sum += best
	}
	if sum == 0 {
		return 0
	}
	score := sum / float64(len(words))
	if strings.Join(parts, " ") == strings.Join(words, " ") {
		score += 0.5
	}
	return score
}

// daoList is the factory's DAO list for chain, read again from the chain
// when it is older than a day. A failed refresh falls back on the list kept.
// Callers that find it stale at once share one refresh.
func (s *SnapshotService) daoList(ctx context.Context, chain string) ([]string, error) {
	list, readAt, err := s.daos.DAOs(ctx, chain)
	if err != nil {
		return nil, errs.New(errs.Internal, "the DAO list could not be read").WithCause(err)
	}
	if s.current(readAt) {
		return list, nil
	}
	fresh, err, _ := s.refreshing.Do(chain, func() (any, error) {
		// The one refresh outlives a caller that goes (the others wait on
		// it), within its own deadline.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), daoListRefreshTimeout)
		defer cancel()
		return s.refreshDAOList(rctx, chain)
	})
	if err != nil {
		if notKept, ok := errors.AsType[*listNotKept](err); ok {
			return nil, notKept.err
		}
		if len(list) > 0 {
			s.log.WarnContext(ctx, "the DAO list could not be refreshed; using the kept one", "chain", chain, "read_at", readAt, "err", err)
			return list, nil
		}
		return nil, err
	}
	return fresh.([]string), nil
}

// current is whether a list read at readAt is young enough to answer from.
func (s *SnapshotService) current(readAt time.Time) bool {
	return !readAt.IsZero() && s.clock.Now().Sub(readAt) < daoListMaxAge
}

// refreshDAOList reads the factory's list and keeps it, unless a refresh
// that ended since the caller looked has kept a current one.
func (s *SnapshotService) refreshDAOList(ctx context.Context, chain string) ([]string, error) {
	if list, readAt, err := s.daos.DAOs(ctx, chain); err == nil && s.current(readAt) {
		return list, nil
	}
	listed, err := s.near.DAOs(ctx, chain, maxDAOs)
	if err != nil {
		return nil, err
	}
	var fresh []string
	for _, d := range listed {
		if snapshots.ValidNearAccount(d) {
			fresh = append(fresh, d)
		}
	}
	if len(fresh) == 0 {
		return nil, errs.New(errs.SourceFailed, fmt.Sprintf("the DAO factory %s listed no DAOs", snapshots.DAOFactory(chain)))
	}
	if err := s.daos.ReplaceDAOs(ctx, chain, fresh, s.clock.Now()); err != nil {
		return nil, &listNotKept{errs.New(errs.Internal, "the DAO list could not be kept").WithCause(err)}
	}
	return fresh, nil
}

// listNotKept is a refresh that read the factory but could not keep its
// list: a fault of petal's own, never covered by the list kept before.
type listNotKept struct{ err *errs.Error }

func (e *listNotKept) Error() string { return e.err.Error() }
func (e *listNotKept) Unwrap() error { return e.err }
