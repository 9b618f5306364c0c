package mapsapp

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/maps"
)

// The map's answers are encoded once per index, look and page, and served
// as bytes from then on (the page cache is the index's own, so a rebuild
// drops them all at once).

type pageKey struct {
	kind   string
	view   string
	names  string // the hash of the asker's named claims: their picture addresses
	cursor string
	limit  int
}

// MapPage is what the lists take from the query: the view to draw through
// (its hash, "" for the default), a cursor and a limit (0 for the default).
type MapPage struct {
	// Subject is the signed-in person asking ("" for a visitor): with no
	// view named, the lists are drawn through theirs.
	Subject string
	View    string
	Cursor  string
	Limit   int
}

func (p MapPage) limit() (int, error) {
	switch {
	case p.Limit == 0:
		return maps.DefaultLimit, nil
	case p.Limit < 1 || p.Limit > maps.MaxLimit:
		return 0, errs.Newf(errs.BadInput, "limit must be from 1 to %d, not %d", maps.MaxLimit, p.Limit)
	}
	return p.Limit, nil
}

// Source says where the map came from: the flowers published to NEAR and
// kept here, or the copies a public site ships.
func (s *MapService) Source() string {
	if s.public {
		return "shipped"
	}
	return "published"
}

// cached answers a page from the index's cache, or encodes it with make.
func (s *MapService) cached(ctx context.Context, kind string, p MapPage, make func(st *mapState, l maps.Look, limit int) (any, error)) ([]byte, error) {
	limit, err := p.limit()
	if err != nil {
		return nil, err
	}
	st, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	l, err := s.resolveView(ctx, p.Subject, p.View)
	if err != nil {
		return nil, err
	}
	if l.Names, err = s.namesHash(ctx, p.Subject); err != nil {
		return nil, err
	}
	key := pageKey{kind: kind, view: l.ViewHash, names: l.Names, cursor: p.Cursor, limit: limit}
	if b, ok := st.pages.Get(key); ok {
		s.pageLookup.Add(1, "hit")
		return b, nil
	}
	s.pageLookup.Add(1, "miss")
	v, err := make(st, l, limit)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, errs.New(errs.Internal, "the map could not be encoded").WithCause(err)
	}
	st.pages.Put(key, b)
	return b, nil
}

func nextCursor(next string) *string {
	if next == "" {
		return nil
	}
	return &next
}

// Map is GET /api/v1/map: { made, source, views, next_cursor, groups, pairs }.
// The views' page is cached with the index; groups and pairs are the
// relations index's (relations_overview's first page with its defaults),
// read for each answer since the index changes apart from the map's.
func (s *MapService) Map(ctx context.Context, p MapPage) ([]byte, error) {
	b, err := s.cached(ctx, "map", p, func(st *mapState, l maps.Look, limit int) (any, error) {
		from, to, next, err := st.index.ViewsPage(p.Cursor, limit)
		if err != nil {
			return nil, err
		}
		views := make([]maps.View, 0, to-from)
		for i := from; i < to; i++ {
			views = append(views, st.index.View(i, l, true))
		}
		return struct {
			Made       string      `json:"made"`
			Source     string      `json:"source"`
			Views      []maps.View `json:"views"`
			NextCursor *string     `json:"next_cursor"`
		}{Made: st.index.Made().UTC().Format(time.RFC3339), Source: s.Source(), Views: views, NextCursor: nextCursor(next)}, nil
	})
	if err != nil {
		return nil, err
	}
	groups, pairs := json.RawMessage(`[]`), json.RawMessage(`[]`)
	if st, err := s.current(ctx); err == nil && st.demo {
		groups, pairs = demoOverview() // made up, like the drawings: never in the relations index
	} else if s.relations != nil {
		if groups, pairs, err = s.relations.MapOverview(ctx); err != nil {
			return nil, err
		}
	}
	out := make([]byte, 0, len(b)+len(groups)+len(pairs)+24)
	out = append(out, b[:len(b)-1]...)
	out = append(out, `,"groups":`...)
	out = append(out, groups...)
	out = append(out, `,"pairs":`...)
	out = append(out, pairs...)
	return append(out, '}'), nil
}

// Views is GET /api/v1/map/views: { views, next_cursor }, the same views in
// the same order, each without its reading.
func (s *MapService) Views(ctx context.Context, p MapPage) ([]byte, error) {
	return s.cached(ctx, "views", p, func(st *mapState, l maps.Look, limit int) (any, error) {
		from, to, next, err := st.index.ViewsPage(p.Cursor, limit)
		if err != nil {
			return nil, err
		}
		views := make([]maps.View, 0, to-from)
		for i := from; i < to; i++ {
			views = append(views, st.index.View(i, l, false))
		}
		return struct {
			Views      []maps.View `json:"views"`
			NextCursor *string     `json:"next_cursor"`
		}{views, nextCursor(next)}, nil
	})
}

// Maps is GET /api/v1/maps: { maps, next_cursor }, one card per map, the
// newest first by its newest drawing.
func (s *MapService) Maps(ctx context.Context, p MapPage) ([]byte, error) {
	return s.cached(ctx, "maps", p, func(st *mapState, l maps.Look, limit int) (any, error) {
		from, to, next, err := st.index.CardsPage(p.Cursor, limit)
		if err != nil {
			return nil, err
		}
		cards := make([]maps.Card, 0, to-from)
		for i := from; i < to; i++ {
			cards = append(cards, st.index.Card(i, l))
		}
		return struct {
			Maps       []maps.Card `json:"maps"`
			NextCursor *string     `json:"next_cursor"`
		}{cards, nextCursor(next)}, nil
	})
}

// OneMap is GET /api/v1/maps/:id: { map }, hidden ones too (with hidden:
// { why, decided }); not_found for an address with nothing on the map.
func (s *MapService) OneMap(ctx context.Context, id string, p MapPage) ([]byte, error) {
	id = maps.NormaliseID(id)
	p.Cursor, p.Limit = "", 0
	b, err := s.cached(ctx, "map:"+id, p, func(st *mapState, l maps.Look, _ int) (any, error) {
		c, ok := st.index.CardByID(id, l)
		if !ok {
			return nil, notOnTheMap(id)
		}
		return struct {
			Map maps.Card `json:"map"`
		}{c}, nil
	})
	if err == nil {
		s.viewed(ctx, id) // only a map on the map is counted
	}
	return b, err
}

// Proposals is GET /api/v1/maps/:id/proposals: { proposals }, proposals/v2
// from the map's newest near-dao-proposals reading; not_found when none was
// read.
func (s *MapService) Proposals(ctx context.Context, id string) ([]byte, error) {
	id = maps.NormaliseID(id)
	return s.cached(ctx, "proposals:"+id, MapPage{}, func(st *mapState, _ maps.Look, _ int) (any, error) {
		sha, ok := st.index.ProposalsReading(id)
		if !ok {
			return nil, errs.New(errs.NotFound, "no proposals of "+strconv.Quote(id)+" were read onto the map",
				"a map's proposals come from a published flower of its near-dao-proposals or evm-baal-proposals reading")
		}
		loaded, err := s.library.Load(ctx, sha)
		if err != nil {
			return nil, err
		}
		p, err := maps.ReadingProposals(id, sha, loaded.Snapshot)
		if err != nil {
			return nil, errs.New(errs.CannotRead, "the map's proposals could not be read").WithCause(err)
		}
		return struct {
			Proposals maps.Proposals `json:"proposals"`
		}{p}, nil
	})
}

// History is GET /api/v1/maps/:id/history: { map, readings, chart }, the
// map's readings the oldest first with their headline figures (made once
// when each was read onto the map), and chart, the SVG the map's page draws
// of them; not_found for a map that isn't on the map.
func (s *MapService) History(ctx context.Context, id string) ([]byte, error) {
	id = maps.NormaliseID(id)
	return s.cached(ctx, "history:"+id, MapPage{}, func(st *mapState, _ maps.Look, _ int) (any, error) {
		points, ok := st.index.History(id)
		if !ok {
			return nil, notOnTheMap(id)
		}
		return MapHistory{Map: id, Readings: points, Chart: maps.HistoryChart(points)}, nil
	})
}

// MapHistory is what GET /api/v1/maps/:id/history answers.
type MapHistory struct {
	Map      string              `json:"map"`
	Readings []maps.HistoryPoint `json:"readings"`
	// Chart is the top account's share and the Gini of the newest reading's
	// reader over time, as SVG; "" with no reading's figures to draw.
	Chart string `json:"chart"`
}

func notOnTheMap(id string) error {
	return errs.New(errs.NotFound, "nothing of "+strconv.Quote(id)+" is on the map",
		"the maps list names every map; an id is <chain>:<address> or <chain>:population")
}
