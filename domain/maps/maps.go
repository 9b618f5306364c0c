// Package maps is the map everyone browses, built from published flowers: a
// map is one address (a DAO, a pool, a token, or a whole network), its
// readings are the snapshots drawn of it, and each reading's drawings are the
// flowers published of it. The package is pure: it orders and shapes what the
// app hands it, and draws nothing itself.
package maps

import (
	"cmp"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/specs"
)

// Population is the address of a map of a whole network.
const Population = "population"

// ProposalsNetwork is the reader whose readings give a map its proposals.
const ProposalsNetwork = "near-dao-proposals"

// Reading is a snapshot some drawing draws, as the map shows it.
type Reading struct {
	Snapshot string          // its sha256
	Network  string          // the reader's id
	Title    string          // the snapshot's title
	About    string          // the snapshot's about
	AsOf     time.Time       // its block's time
	Count    int             // its accounts
	Params   json.RawMessage // the reader's params, as read
	Map      string          // the map its params name (published.MapOf)
	// Headline is its headline figures, made once when it is read onto the
	// map; nil when they couldn't be.
	Headline *Headline
}

// Drawing is one published flower, as the map shows it.
type Drawing struct {
	Flower   string // the published flower's id
	Spec     string // the spec's sha256: the drawing's sha, its picture's name
	Snapshot string
	Map      string // <chain>:<address>, or <chain>:population
	Name     string // "" when nobody named it
	Title    string // the spec's title
	About    string // what was read and where, in people's words
	MadeBy   string
	MadeAt   time.Time
	// Keys are the colours its picture draws, in legend order, before any
	// palette gives them a swatch.
	Keys []specs.Key
	// Demo marks a drawing of a made-up reading, shown only while a site's
	// map has no real one (app/mapsapp's demo map).
	Demo bool
}

// Hidden is why a map is kept out of every list, and who decided.
type Hidden struct {
	Why     string `json:"why"`
	Decided string `json:"decided"`
}

// Look is what a picture is drawn through: the renderer's version, the view
// (by its whole hash) and so its palette. It is in every picture's address,
// so a cached picture is never an old look or another person's.
type Look struct {
	Render   string     // specs.RenderVersion
	ViewHash string     // the view's whole hash
	View     specs.View // the view itself
	// Names is the hash of a signed-in person's named claims' ids, "" for
	// none: a picture drawn with their names is theirs alone.
	Names string
}

// Picture is a drawing's picture address under a look.
func (l Look) Picture(sha string) string {
	a := "/api/v1/map/" + sha + "/svg?look=" + url.QueryEscape(l.Render) + "&view=" + l.ViewHash + "&paint=" + url.QueryEscape(l.View.Palette)
	if l.Names != "" {
		a += "&names=" + l.Names
	}
	return a
}

// Legend gives keys their swatches under the look's palette.
func (l Look) Legend(keys []specs.Key) []specs.LegendEntry {
	return specs.LegendOf(keys, l.View)
}

// ViewURL is where a drawing opens, a demo drawing's too: its spec's draft
// link.
func ViewURL(sha string) string { return "/d/" + sha }

// SplitID splits a map id into its chain (CAIP-2, namespace:reference) and
// address; address is "" for a whole network. ok is false when id has no
// address part.
func SplitID(id string) (chain, address string, ok bool) {
	ns, rest, ok1 := strings.Cut(id, ":")
	ref, addr, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 || ns == "" || ref == "" || addr == "" {
		return "", "", false
	}
	if addr == Population {
		addr = ""
	}
	return ns + ":" + ref, addr, true
}

// NormaliseID writes a map id asked for in any case in its one form: an EVM
// address in lower case; anything else as given.
func NormaliseID(id string) string {
	if strings.HasPrefix(id, "eip155:") {
		return strings.ToLower(id)
	}
	return id
}

// drawing is one drawing in an index: the first flower of its spec.
type drawing struct {
	Drawing
	reading *reading
	card    *card
}

type reading struct {
	Reading
	drawings []*drawing // the oldest first
	madeBy   string     // the maker of its first drawing
	// refreshed: read by the map_refresh job, not drawn by anyone.
	refreshed bool
}

type card struct {
	id       string
	chain    string
	address  string
	readings []*reading // the newest first
	newest   *drawing   // its newest drawing
	named    *drawing   // its newest named drawing, or nil
	hidden   *Hidden
	// proposals is the newest near-dao-proposals reading, or nil.
	proposals *reading
}

// Index is the map at one moment: every drawing whose snapshot is here,
// grouped into readings and maps. It is built once per change and read by
// every request; nothing in it changes after Build.
type Index struct {
	cards  []*card // visible maps, the newest first by their newest drawing
	byID   map[string]*card
	views  []*drawing // visible drawings, the oldest first
	bySpec map[string]*drawing
	made   time.Time
	// marks are the maps' marks as kept (encoded), by map id; a map without
	// one carries null.
	marks map[string]json.RawMessage
}

// WithMarks is the same index whose cards carry marks (encoded, by map id):
// the index itself is shared, unchanged.
func (x *Index) WithMarks(marks map[string]json.RawMessage) *Index {
	out := *x
	out.marks = marks
	return &out
}

// Subjects are the maps whose marks can be read, hidden ones too, by id:
// every map of an address (a whole network has no organisation), its kind
// from its readings' readers (a token's or a DAO's first, else a pool's).
func (x *Index) Subjects() []Subject {
	out := make([]Subject, 0, len(x.byID))
	for _, c := range x.byID {
		if c.address == "" {
			continue
		}
		kind := KindOther
		for _, r := range c.readings {
			switch k := KindOf(r.Network); {
			case k == KindToken || k == KindDAO:
				kind = k
			case k == KindPool && kind == KindOther:
				kind = k
			}
		}
		out = append(out, Subject{ID: c.id, Chain: c.chain, Address: c.address, Kind: kind})
	}
	slices.SortFunc(out, func(a, b Subject) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Build makes the index from published flowers' drawings, the readings they
// draw (by snapshot sha256) and the hidden maps (by id). A drawing whose
// reading is missing is drawn nowhere. Flowers of one spec are one drawing:
// the first published, named by the first that has a name.
func Build(drawings []Drawing, readings map[string]Reading, hidden map[string]Hidden, made time.Time) *Index {
	return BuildWith(drawings, readings, nil, hidden, made)
}

// BuildWith is Build with the readings the map_refresh job kept of maps
// (refreshed, by their Map): each joins its map's readings, with no drawing
// of its own, so a map's history grows without anyone drawing it. One of a
// map with no drawing, or already a drawing's reading, adds nothing.
func BuildWith(drawings []Drawing, readings map[string]Reading, refreshed []Reading, hidden map[string]Hidden, made time.Time) *Index {
	// Sorting positions, not the drawings themselves, moves 4 bytes a swap
	// instead of a whole drawing.
	order := make([]int32, len(drawings))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return olderDrawing(drawings[a], drawings[b]) })
	idx := &Index{byID: map[string]*card{}, bySpec: make(map[string]*drawing, len(drawings)), made: made}
	rs := map[string]*reading{}
	for _, at := range order {
		in := drawings[at]
		if d, ok := idx.bySpec[in.Spec]; ok {
			if d.Name == "" && in.Name != "" {
				d.Name = in.Name
			}
			continue
		}
		r, ok := readings[in.Snapshot]
		if !ok {
			continue
		}
		chain, address, ok := SplitID(in.Map)
		if !ok {
			continue
		}
		d := &drawing{Drawing: in}
		idx.bySpec[in.Spec] = d
		c := idx.byID[in.Map]
		if c == nil {
			c = &card{id: in.Map, chain: chain, address: address}
			if h, ok := hidden[in.Map]; ok {
				c.hidden = &h
			}
			idx.byID[in.Map] = c
		}
		d.card = c
		key := in.Map + " " + in.Snapshot
		rd := rs[key]
		if rd == nil {
			rd = &reading{Reading: r, madeBy: in.MadeBy}
			rs[key] = rd
			c.readings = append(c.readings, rd)
		}
		d.reading = rd
		rd.drawings = append(rd.drawings, d)
		c.newest = d
		if c.hidden == nil {
			idx.views = append(idx.views, d)
		}
	}
	for _, r := range refreshed {
		c := idx.byID[r.Map]
		key := r.Map + " " + r.Snapshot
		if c == nil || rs[key] != nil {
			continue
		}
		rd := &reading{Reading: r, refreshed: true}
		rs[key] = rd
		c.readings = append(c.readings, rd)
	}
	for _, c := range idx.byID {
		slices.SortFunc(c.readings, func(a, b *reading) int {
			if n := b.AsOf.Compare(a.AsOf); n != 0 {
				return n
			}
			return strings.Compare(a.Snapshot, b.Snapshot)
		})
		for _, r := range c.readings {
			for _, d := range r.drawings {
				if d.Name != "" && (c.named == nil || olderDrawing(c.named.Drawing, d.Drawing) < 0) {
					c.named = d
				}
			}
			if isProposalsNetwork(r.Network) && c.proposals == nil {
				c.proposals = r
			}
		}
		if c.hidden == nil {
			idx.cards = append(idx.cards, c)
		}
	}
	slices.SortFunc(idx.cards, newerCard)
	return idx
}

// olderDrawing orders drawings the oldest first, then by flower id.
func olderDrawing(a, b Drawing) int {
	if n := a.MadeAt.Compare(b.MadeAt); n != 0 {
		return n
	}
	return cmp.Or(strings.Compare(a.Flower, b.Flower), strings.Compare(a.Spec, b.Spec))
}

// newerCard orders maps the newest first by their newest drawing, then by id.
func newerCard(a, b *card) int {
	if n := b.newest.MadeAt.Compare(a.newest.MadeAt); n != 0 {
		return n
	}
	return strings.Compare(a.id, b.id)
}

// Made is when the index was built.
func (x *Index) Made() time.Time { return x.made }

// Maps is how many maps are listed (hidden ones left out).
func (x *Index) Maps() int { return len(x.cards) }

// Views is how many views are listed (hidden maps' left out).
func (x *Index) Views() int { return len(x.views) }

// OnTheMap reports whether a spec is drawn on the map (a hidden map's
// drawings too: their flowers still open), and its snapshot.
func (x *Index) OnTheMap(spec string) (snapshot string, ok bool) {
	d, ok := x.bySpec[spec]
	if !ok {
		return "", false
	}
	return d.Snapshot, true
}

// IsHidden reports whether a map is hidden.
func (x *Index) IsHidden(id string) bool {
	c, ok := x.byID[id]
	return ok && c.hidden != nil
}

// ProposalsReading is the snapshot of a map's newest near-dao-proposals
// reading; ok is false when the map has none (or is not on the map).
func (x *Index) ProposalsReading(id string) (snapshot string, ok bool) {
	c, found := x.byID[id]
	if !found || c.proposals == nil {
		return "", false
	}
	return c.proposals.Snapshot, true
}

// RefreshTarget is what the map_refresh job may read again: a visible map's
// newest reading by one reader.
type RefreshTarget struct {
	Map      string
	Network  string
	Params   json.RawMessage
	Snapshot string
	AsOf     time.Time
}

// RefreshTargets are the newest reading of each reader of each map named
// (hidden maps and ids not on the map left out), in the order ids gives.
func (x *Index) RefreshTargets(ids []string) []RefreshTarget {
	var out []RefreshTarget
	for _, id := range ids {
		c, ok := x.byID[id]
		if !ok || c.hidden != nil {
			continue
		}
		seen := map[string]bool{}
		for _, r := range c.readings { // the newest first
			if seen[r.Network] {
				continue
			}
			seen[r.Network] = true
			out = append(out, RefreshTarget{Map: c.id, Network: r.Network, Params: r.Params, Snapshot: r.Snapshot, AsOf: r.AsOf})
		}
	}
	return out
}

// MapIDs are every visible map's id.
func (x *Index) MapIDs() []string {
	out := make([]string, 0, len(x.cards))
	for _, c := range x.cards {
		out = append(out, c.id)
	}
	return out
}
