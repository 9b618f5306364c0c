package relationsapp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/petal-near/petal/domain/claims"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// PathAnswer is power_path's answer.
type PathAnswer struct {
	Found     bool     `json:"found"`
	Paths     []Path   `json:"paths"`
	Expanded  int      `json:"expanded" jsonschema:"memberships the search followed"`
	Exhausted bool     `json:"exhausted" jsonschema:"the budget stopped the search before it was done"`
	Notes     []string `json:"notes,omitempty"`
}

// Path is one shortest path: its first hop is account_a (via nothing), each
// next hop the account reached and the group (or same_owner claim) shared
// with the one before.
type Path struct {
	Hops []Hop `json:"hops"`
}

// Hop is one account on a path.
type Hop struct {
	Account       string  `json:"account"`
	ViaGroup      *string `json:"via_group"`
	WeightInGroup *string `json:"weight_in_group"`
	ViaClaim      *string `json:"via_claim,omitempty"`
}

// sameOwners is the site's same_owner claims as edges: each account to the
// claims naming it, and each claim's two accounts.
type sameOwners struct {
	byAccount map[string][]string
	pair      map[string][2]string
}

// claimPrefix marks a claim in a walk's nodes, where it stands as a group
// of two (an account id or a map id never starts with it).
const claimPrefix = "claim/"

func sameOwnersOf(site *SiteClaims) sameOwners {
	o := sameOwners{byAccount: map[string][]string{}, pair: map[string][2]string{}}
	if site == nil {
		return o
	}
	for _, c := range site.all {
		if c.Verb != "same_owner" {
			continue
		}
		var obj struct {
			Account string `json:"account"`
		}
		if json.Unmarshal(c.Object, &obj) != nil || !claims.ValidCAIP10(obj.Account) || obj.Account == c.Subject {
			continue
		}
		id := claimPrefix + c.ID
		o.pair[id] = [2]string{c.Subject, obj.Account}
		o.byAccount[c.Subject] = append(o.byAccount[c.Subject], id)
		o.byAccount[obj.Account] = append(o.byAccount[obj.Account], id)
	}
	return o
}

// The walk is over the graph of accounts and groups (an account is joined to
// each group it is in): two accounts max_depth groups apart are 2×max_depth
// steps apart. Nodes are "a:<account>" and "g:<group or claim>".
type walkSide struct {
	dist     map[string]int
	parents  map[string][]walkEdge
	frontier []string
	depth    int
}

// walkEdge is how a node was reached: from a node, through a membership of
// that weight (the account's in the group).
type walkEdge struct {
	from   string
	weight string
}

// maxParents bounds the parents kept per node: five shortest paths never
// need more.
const maxParents = PathMaxPaths

func newSide(account string) *walkSide {
	n := "a:" + account
	return &walkSide{dist: map[string]int{n: 0}, parents: map[string][]walkEdge{}, frontier: []string{n}}
}

// PowerPath is power_path.
func (s *RelationService) PowerPath(ctx context.Context, in PowerPathInput) (PathAnswer, error) {
	if err := checkAccount("account_a", in.AccountA); err != nil {
		return PathAnswer{}, err
	}
	if err := checkAccount("account_b", in.AccountB); err != nil {
		return PathAnswer{}, err
	}
	depth, budget := in.MaxDepth, in.Budget
	if depth == 0 {
		depth = PathDefaultDepth
	}
	if budget == 0 {
		budget = PathDefaultBudget
	}
	if depth < 1 || depth > PathMaxDepth {
		return PathAnswer{}, errs.Newf(errs.BadInput, "max_depth must be from 1 to %d", PathMaxDepth)
	}
	if budget < 1 || budget > PathMaxBudget {
		return PathAnswer{}, errs.Newf(errs.BadInput, "budget must be from 1 to %d", PathMaxBudget)
	}
	out := PathAnswer{Paths: []Path{}}
	if in.IncludeInferred {
		if len(s.owners.pair) == 0 {
			out.Notes = append(out.Notes, "include_inferred: this site publishes no same_owner claims yet, so it changed nothing")
		} else {
			out.Notes = append(out.Notes, "include_inferred: the site's same_owner claims were walked too (a hop through one names it as via_claim)")
		}
	}
	err := s.store.Walk(ctx, func(w ports.RelationWalker) error {
		for _, a := range []struct{ field, id string }{{"account_a", in.AccountA}, {"account_b", in.AccountB}} {
			known, err := w.Known(ctx, a.id, s.hidden)
			if err != nil {
				return err
			}
			if !known && (!in.IncludeInferred || len(s.owners.byAccount[a.id]) == 0) {
				return unknownAccount(a.field, a.id)
			}
		}
		if in.AccountA == in.AccountB {
			out.Found = true
			out.Paths = append(out.Paths, Path{Hops: []Hop{{Account: in.AccountA}}})
			return nil
		}
		return s.walk(ctx, w, in, depth, budget, &out)
	})
	if err != nil {
		return PathAnswer{}, err
	}
	switch {
	case out.Found:
		s.paths.Add(1, "found")
	case out.Exhausted:
		s.paths.Add(1, "exhausted")
	default:
		s.paths.Add(1, "none")
	}
	s.expanded.Observe(float64(out.Expanded))
	return out, nil
}

func (s *RelationService) walk(ctx context.Context, w ports.RelationWalker, in PowerPathInput, depth, budget int, out *PathAnswer) error {
	a, b := newSide(in.AccountA), newSide(in.AccountB)
	steps := 2 * depth
	for a.depth+b.depth < steps && len(a.frontier) > 0 && len(b.frontier) > 0 {
		side, other := a, b
		if len(b.frontier) < len(a.frontier) {
			side, other = b, a
		}
		left := budget - out.Expanded
		if left <= 0 {
			out.Exhausted = true
			return nil
		}
		edges, cut, err := s.neighbours(ctx, w, side.frontier, left, in.IncludeInferred)
		if err != nil {
			return err
		}
		out.Expanded += len(edges)
		side.depth++
		var next []string
		var meet []string
		for _, e := range edges {
			d, seen := side.dist[e.to]
			switch {
			case !seen:
				side.dist[e.to] = side.depth
				next = append(next, e.to)
				if _, ok := other.dist[e.to]; ok {
					meet = append(meet, e.to)
				}
			case d != side.depth:
				continue
			}
			if ps := side.parents[e.to]; len(ps) < maxParents && !slices.ContainsFunc(ps, func(p walkEdge) bool { return p.from == e.from }) {
				side.parents[e.to] = append(ps, walkEdge{from: e.from, weight: e.weight})
			}
		}
		side.frontier = next
		if len(meet) > 0 {
			out.Found = true
			out.Paths = s.paths2(a, b, meet)
			return nil
		}
		if cut {
			out.Exhausted = true
			return nil
		}
	}
	return nil
}

type walkStep struct {
	from, to, weight string
}

// neighbours reads what the frontier's nodes join: an account's groups (and
// its same_owner claims), a group's accounts. At most limit edges; cut says
// the budget stopped the read.
func (s *RelationService) neighbours(ctx context.Context, w ports.RelationWalker, frontier []string, limit int, inferred bool) ([]walkStep, bool, error) {
	var accounts, groups []string
	var claimsAt []string
	for _, n := range frontier {
		id := n[2:]
		switch {
		case n[0] == 'a':
			accounts = append(accounts, id)
		case strings.HasPrefix(id, claimPrefix):
			claimsAt = append(claimsAt, id)
		default:
			groups = append(groups, id)
		}
	}
	var edges []walkStep
	if len(accounts) > 0 {
		ms, err := w.GroupsOf(ctx, accounts, s.hidden, limit+1)
		if err != nil {
			return nil, false, err
		}
		for _, m := range ms {
			edges = append(edges, walkStep{from: "a:" + m.Account, to: "g:" + m.Group, weight: m.Weight})
		}
		if inferred {
			for _, acc := range accounts {
				for _, c := range s.owners.byAccount[acc] {
					edges = append(edges, walkStep{from: "a:" + acc, to: "g:" + c})
				}
			}
		}
	}
	if len(groups) > 0 && len(edges) <= limit {
		ms, err := w.MembersOf(ctx, groups, limit+1-len(edges))
		if err != nil {
			return nil, false, err
		}
		for _, m := range ms {
			edges = append(edges, walkStep{from: "g:" + m.Group, to: "a:" + m.Account, weight: m.Weight})
		}
	}
	for _, c := range claimsAt {
		for _, acc := range s.owners.pair[c] {
			edges = append(edges, walkStep{from: "g:" + c, to: "a:" + acc})
		}
	}
	if len(edges) > limit {
		return edges[:limit], true, nil
	}
	return edges, false, nil
}

// paths2 joins the two sides' parents through the nodes where they met into
// at most PathMaxPaths shortest paths, from account_a to account_b.
func (s *RelationService) paths2(a, b *walkSide, meet []string) []Path {
	best := -1
	for _, m := range meet {
		if d := a.dist[m] + b.dist[m]; best < 0 || d < best {
			best = d
		}
	}
	slices.Sort(meet)
	var out []Path
	for _, m := range meet {
		if a.dist[m]+b.dist[m] != best {
			continue
		}
		for _, left := range chains(a, m, PathMaxPaths-len(out)) {
			for _, right := range chains(b, m, PathMaxPaths-len(out)) {
				if len(out) == PathMaxPaths {
					return out
				}
				// left runs from account_a to m; right from account_b to m.
				nodes := append(slices.Clone(left), reversed(right[:len(right)-1])...)
				out = append(out, hopsOf(nodes, a, b))
			}
		}
		if len(out) == PathMaxPaths {
			break
		}
	}
	return out
}

// pathNode is a node on a chain and the weight of the membership that
// reached it from the side's start.
type pathNode struct {
	id     string
	weight string
}

// chains are up to n chains of nodes from a side's start to node, through
// its parents.
func chains(side *walkSide, node string, n int) [][]pathNode {
	if n <= 0 {
		return nil
	}
	if side.dist[node] == 0 {
		return [][]pathNode{{{id: node}}}
	}
	var out [][]pathNode
	for _, p := range side.parents[node] {
		for _, c := range chains(side, p.from, n-len(out)) {
			out = append(out, append(c, pathNode{id: node, weight: p.weight}))
			if len(out) == n {
				return out
			}
		}
	}
	return out
}

func reversed(c []pathNode) []pathNode {
	out := make([]pathNode, len(c))
	for i, n := range c {
		out[len(c)-1-i] = n
	}
	return out
}

// hopsOf turns a chain of nodes from account_a to account_b into hops. A
// membership's weight is the account's in the group, whichever way the walk
// crossed it: on a's side the edge into a group carries the account's weight
// before it; on b's side the edge into the group carries the account's after.
func hopsOf(nodes []pathNode, a, b *walkSide) Path {
	var hops []Hop
	weightOf := func(account, group string) *string {
		for _, side := range []*walkSide{a, b} {
			for _, p := range side.parents["g:"+group] {
				if p.from == "a:"+account && p.weight != "" {
					return ptr(p.weight)
				}
			}
			for _, p := range side.parents["a:"+account] {
				if p.from == "g:"+group && p.weight != "" {
					return ptr(p.weight)
				}
			}
		}
		return nil
	}
	for i, n := range nodes {
		if n.id[0] != 'a' {
			continue
		}
		acc := n.id[2:]
		if i == 0 {
			hops = append(hops, Hop{Account: acc})
			continue
		}
		via := nodes[i-1].id[2:]
		h := Hop{Account: acc}
		if strings.HasPrefix(via, claimPrefix) {
			h.ViaClaim = ptr(strings.TrimPrefix(via, claimPrefix))
		} else {
			h.ViaGroup = ptr(via)
			h.WeightInGroup = weightOf(acc, via)
		}
		hops = append(hops, h)
	}
	return Path{Hops: hops}
}
