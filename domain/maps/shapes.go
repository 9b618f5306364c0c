package maps

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/specs"
)

// Card is one map as GET /api/v1/maps lists it.
type Card struct {
	ID      string              `json:"id"`
	Name    *string             `json:"name"` // its newest named drawing's; null when nobody named one
	Title   string              `json:"title"`
	About   string              `json:"about"`
	Chain   string              `json:"chain"`
	Address *string             `json:"address"` // null for a whole network
	Picture string              `json:"picture"`
	ViewURL string              `json:"view_url"`
	Keys    []specs.LegendEntry `json:"keys"`
	// Mark is what tells the map's organisation from another (Mark, kept
	// encoded); null until the map_marks job read it.
	Mark json.RawMessage `json:"mark"`
	// Proposals is where the map's proposals are read, null when no
	// reading of them is on the map.
	Proposals *string        `json:"proposals"`
	Readings  []ReadingShape `json:"readings"`
	Hidden    *Hidden        `json:"hidden,omitempty"` // only at /api/v1/maps/:id
	// Demo is set (true) only on the demo map's cards: made-up readings a
	// site with no real flower shows, never stored.
	Demo bool `json:"demo,omitempty"`
}

// ReadingShape is one of a map's readings, the newest first by date.
type ReadingShape struct {
	Snapshot string         `json:"snapshot"`
	AsOf     string         `json:"as_of"`
	Network  string         `json:"network"`
	About    string         `json:"about"`
	Title    string         `json:"title"`
	Count    int            `json:"count"`
	MadeBy   string         `json:"made_by"` // the maker of its first drawing; "" for a refreshed reading
	Drawings []DrawingShape `json:"drawings"`
	// Refreshed is set (true) on a reading the map_refresh job made of the
	// map: a reading kept for its history, drawn by nobody.
	Refreshed bool `json:"refreshed,omitempty"`
}

// DrawingShape is one of a reading's drawings, the oldest first.
type DrawingShape struct {
	SHA     string              `json:"sha"`
	Name    *string             `json:"name"`
	ViewURL string              `json:"view_url"`
	Picture string              `json:"picture"`
	Keys    []specs.LegendEntry `json:"keys"`
	MadeBy  string              `json:"made_by"`
	Demo    bool                `json:"demo,omitempty"` // a demo drawing of a made-up reading
}

// View is one drawing as GET /api/v1/map lists it (the oldest first); GET
// /api/v1/map/views lists it without its reading.
type View struct {
	SHA      string              `json:"sha"`
	Map      string              `json:"map"`
	Name     *string             `json:"name"`
	Reading  *ViewReading        `json:"reading,omitempty"`
	About    string              `json:"about"`
	Address  *string             `json:"address"`
	Date     string              `json:"date"` // the reading's date
	Snapshot string              `json:"snapshot"`
	Params   json.RawMessage     `json:"params"`
	ViewURL  string              `json:"view_url"`
	Picture  string              `json:"picture"`
	Keys     []specs.LegendEntry `json:"keys"`
	MadeBy   string              `json:"made_by"`
	MadeAt   string              `json:"made_at"`
	Demo     bool                `json:"demo,omitempty"` // a demo drawing of a made-up reading
}

// ViewReading is the reading a view draws, in brief.
type ViewReading struct {
	Network string `json:"network"`
	Title   string `json:"title"`
	AsOf    string `json:"as_of"`
	Count   int    `json:"count"`
}

var null = json.RawMessage("null")

func when(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Card shapes the i-th listed map under a look.
func (x *Index) Card(i int, l Look) Card { return x.card(x.cards[i], l) }

// CardByID shapes one map by its id, hidden or not; ok is false for an id
// with nothing on the map.
func (x *Index) CardByID(id string, l Look) (Card, bool) {
	c, ok := x.byID[NormaliseID(id)]
	if !ok {
		return Card{}, false
	}
	out := x.card(c, l)
	out.Hidden = c.hidden
	return out, true
}

func (x *Index) card(c *card, l Look) Card {
	n := c.newest
	out := Card{
		ID: c.id, Title: n.Title, About: n.About, Chain: c.chain, Address: optional(c.address),
		Picture: l.Picture(n.Spec), ViewURL: ViewURL(n.Spec), Keys: l.Legend(n.Keys), Mark: null,
		Readings: make([]ReadingShape, 0, len(c.readings)), Demo: n.Demo,
	}
	if m, ok := x.marks[c.id]; ok && len(m) > 0 {
		out.Mark = m
	}
	if c.named != nil {
		out.Name = &c.named.Name
	}
	if c.proposals != nil {
		p := "/api/v1/maps/" + url.PathEscape(c.id) + "/proposals"
		out.Proposals = &p
	}
	for _, r := range c.readings {
		rs := ReadingShape{Snapshot: r.Snapshot, AsOf: when(r.AsOf), Network: r.Network, About: r.About, Title: r.Title,
			Count: r.Count, MadeBy: r.madeBy, Drawings: make([]DrawingShape, 0, len(r.drawings)), Refreshed: r.refreshed}
		for _, d := range r.drawings {
			rs.Drawings = append(rs.Drawings, DrawingShape{SHA: d.Spec, Name: optional(d.Name), ViewURL: ViewURL(d.Spec),
				Picture: l.Picture(d.Spec), Keys: l.Legend(d.Keys), MadeBy: d.MadeBy, Demo: d.Demo})
		}
		out.Readings = append(out.Readings, rs)
	}
	return out
}

// View shapes the i-th listed view under a look, with its reading or not.
func (x *Index) View(i int, l Look, withReading bool) View {
	d := x.views[i]
	params := d.reading.Params
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	v := View{SHA: d.Spec, Map: d.Map, Name: optional(d.Name), About: d.About, Address: optional(d.card.address),
		Date: when(d.reading.AsOf), Snapshot: d.Snapshot, Params: params, ViewURL: ViewURL(d.Spec),
		Picture: l.Picture(d.Spec), Keys: l.Legend(d.Keys), MadeBy: d.MadeBy, MadeAt: when(d.MadeAt), Demo: d.Demo}
	if withReading {
		v.Reading = &ViewReading{Network: d.reading.Network, Title: d.reading.Title, AsOf: when(d.reading.AsOf), Count: d.reading.Count}
	}
	return v
}

// Paging: a cursor names the last item a page gave, so a page after a
// rebuild goes on from the same place.

// Limits of a page of maps or views.
const (
	DefaultLimit = 100
	MaxLimit     = 500
)

// CardsPage is the range [from, to) of listed maps after cursor ("" for the
// first page), at most limit of them, and the next page's cursor ("" at the
// end).
func (x *Index) CardsPage(cursor string, limit int) (from, to int, next string, err error) {
	if cursor != "" {
		at, id, ok := decodeCursor(cursor)
		if !ok {
			return 0, 0, "", badCursor()
		}
		from = sort.Search(len(x.cards), func(i int) bool {
			c := x.cards[i]
			if n := at.Compare(c.newest.MadeAt); n != 0 {
				return n > 0
			}
			return c.id > id
		})
	}
	to = min(from+limit, len(x.cards))
	if to < len(x.cards) && to > from {
		last := x.cards[to-1]
		next = encodeCursor(last.newest.MadeAt, last.id)
	}
	return from, to, next, nil
}

// ViewsPage is CardsPage for views, the oldest first.
func (x *Index) ViewsPage(cursor string, limit int) (from, to int, next string, err error) {
	if cursor != "" {
		at, key, ok := decodeCursor(cursor)
		if !ok {
			return 0, 0, "", badCursor()
		}
		flower, spec, _ := strings.Cut(key, " ")
		probe := Drawing{MadeAt: at, Flower: flower, Spec: spec}
		from = sort.Search(len(x.views), func(i int) bool { return olderDrawing(x.views[i].Drawing, probe) > 0 })
	}
	to = min(from+limit, len(x.views))
	if to < len(x.views) && to > from {
		last := x.views[to-1]
		next = encodeCursor(last.MadeAt, last.Flower+" "+last.Spec)
	}
	return from, to, next, nil
}

func encodeCursor(at time.Time, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixNano(), 10) + " " + key))
}

func decodeCursor(s string) (time.Time, string, bool) {
	if len(s) > 512 {
		return time.Time{}, "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, "", false
	}
	ns, key, ok := strings.Cut(string(raw), " ")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || key == "" {
		return time.Time{}, "", false
	}
	return time.Unix(0, n).UTC(), key, true
}

func badCursor() error {
	return errs.New(errs.BadInput, "cursor is not one this list gave", "pass next_cursor from the previous page as it came, or leave cursor out for the first page")
}
