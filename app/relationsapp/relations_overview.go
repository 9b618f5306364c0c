package relationsapp

import (
	"context"
	"encoding/json"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/relations"
	"github.com/petal-near/petal/ports"
)

// OverviewAnswer is relations_overview's answer, and the groups and pairs
// GET /api/v1/map carries.
type OverviewAnswer struct {
	Groups     []OverviewGroup `json:"groups"`
	Pairs      []OverviewPair  `json:"pairs"`
	NextCursor *string         `json:"next_cursor"`
}

// OverviewGroup is a group a page's pairs name.
type OverviewGroup struct {
	Group string `json:"group"`
	Title string `json:"title"`
	Kind  string `json:"kind"`
	Count int64  `json:"count" jsonschema:"its accounts"`
}

// OverviewPair is two groups sharing accounts (a < b).
type OverviewPair struct {
	A       string `json:"a"`
	B       string `json:"b"`
	Shared  int64  `json:"shared"`
	Jaccard string `json:"jaccard"`
}

// Overview is relations_overview.
func (s *RelationService) Overview(ctx context.Context, in RelationsOverviewInput) (OverviewAnswer, error) {
	minShared := int64(in.MinShared)
	if minShared == 0 {
		minShared = 2
	}
	switch in.Kind {
	case "", relations.KindDAO, relations.KindPool, relations.KindToken:
	default:
		return OverviewAnswer{}, errs.New(errs.BadInput, "kind must be dao, pool or token", "")
	}
	after, err := decodeKey(in.Cursor)
	if err != nil {
		return OverviewAnswer{}, err
	}
	limit := pageLimit(in.Limit)
	pairs, err := s.store.Pairs(ctx, minShared, in.Kind, ports.RelationQuery{Hidden: s.hidden, Limit: limit + 1, After: after})
	if err != nil {
		return OverviewAnswer{}, err
	}
	out := OverviewAnswer{Groups: []OverviewGroup{}, Pairs: make([]OverviewPair, 0, min(len(pairs), limit))}
	named := map[string]bool{}
	var names []string
	for i, p := range pairs {
		if i == limit {
			last := pairs[i-1]
			out.NextCursor = ptr(encodeKey(ports.RelationKey{Value: last.Shared, Name: last.A, Name2: last.B}))
			break
		}
		out.Pairs = append(out.Pairs, OverviewPair{A: p.A, B: p.B, Shared: p.Shared, Jaccard: relations.Format(relations.Jaccard(p.Shared, p.MembersA, p.MembersB))})
		for _, g := range []string{p.A, p.B} {
			if !named[g] {
				named[g] = true
				names = append(names, g)
			}
		}
	}
	if len(names) > 0 {
		gs, err := s.store.Groups(ctx, names)
		if err != nil {
			return OverviewAnswer{}, err
		}
		for _, g := range gs {
			out.Groups = append(out.Groups, OverviewGroup{Group: g.Group, Title: g.Title, Kind: g.Kind, Count: g.Members})
		}
	}
	return out, nil
}

// MapOverview is the groups and pairs GET /api/v1/map carries: the first
// page of relations_overview with its defaults, encoded.
func (s *RelationService) MapOverview(ctx context.Context) (groups, pairs json.RawMessage, err error) {
	o, err := s.Overview(ctx, RelationsOverviewInput{Limit: RelationsMaxLimit})
	if err != nil {
		return nil, nil, err
	}
	if groups, err = json.Marshal(o.Groups); err != nil {
		return nil, nil, err
	}
	pairs, err = json.Marshal(o.Pairs)
	return groups, pairs, err
}
