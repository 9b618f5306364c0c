package ports

import (
	"context"
	"time"
)

// The kinds search_petals finds. Map and flower rows are anyone's; the rest
// are a person's own work, found only by them.
const (
	SearchMap         = "map"
	SearchFlower      = "flower"
	SearchExploration = "exploration"
	SearchNote        = "note"
	SearchAnnotation  = "annotation"
)

// SearchKinds are every kind, in the contract's order.
var SearchKinds = []string{SearchMap, SearchFlower, SearchExploration, SearchNote, SearchAnnotation}

// SearchQuery is one page of a search. Words is websearch_to_tsquery's text
// (may be empty); Prefix, when set, is one word (letters and digits only)
// read as the start of words. Owner is the caller's session subject: empty
// finds only the map's rows. Hidden maps' rows are never answered.
type SearchQuery struct {
	Words  string
	Prefix string
	Kinds  []string
	Owner  string
	Hidden []string
	After  *SearchCursor
	Limit  int
}

// SearchCursor is the last hit of the page before: hits are ordered by rank,
// then kind, then ref.
type SearchCursor struct {
	Rank float32
	Kind string
	Ref  string
}

// SearchHit is one thing found.
type SearchHit struct {
	Kind        string
	Ref         string
	ID          string
	Title       string
	Snippet     string
	Map         string // map and flower rows
	Exploration string // a person's rows in a project
	About       string // an annotation's subject
	At          time.Time
	Rank        float32
}

// SearchStore is the search index (kept by the database from its sources).
type SearchStore interface {
	Search(ctx context.Context, q SearchQuery) ([]SearchHit, error)
}
