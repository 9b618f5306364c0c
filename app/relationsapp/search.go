package relationsapp

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/internal/hiddenmaps"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// ToolSearchPetals is the contract's name for the map's own full-text search.
const ToolSearchPetals = "search_petals"

// search_petals' bounds.
const (
	SearchMaxQuery     = 300 // characters of q
	SearchMaxLimit     = 50
	SearchDefaultLimit = 20
	searchDeadline     = 5 * time.Second
)

// SearchService is search_petals (docs/search.md): the map for anyone, a
// person's own explorations, notes and annotations for them alone.
type SearchService struct {
	store   ports.SearchStore
	hidden  []string
	seconds ports.Histogram
}

// NewSearchService builds the service; hidden maps are never answered.
func NewSearchService(store ports.SearchStore, m ports.Metrics) (*SearchService, error) {
	hidden, err := hiddenmaps.Load()
	if err != nil {
		return nil, err
	}
	s := &SearchService{store: store,
		seconds: ports.MetricsOrNone(m).Histogram("petal_search_seconds", "How long one search_petals query took in the database, by outcome (ok, failed).",
			[]float64{0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 1}, "outcome")}
	for id := range hidden {
		s.hidden = append(s.hidden, id)
	}
	slices.Sort(s.hidden)
	return s, nil
}

// SearchPetalsInput is search_petals' input (GET /api/v1/search's query).
type SearchPetalsInput struct {
	Q      string `json:"q" jsonschema:"the words to find; the last one is read as the start of a word (mark → marketing); \"quoted phrases\", or, and -word work as in a web search"`
	Kinds  string `json:"kinds,omitempty" jsonschema:"only these kinds, comma-separated: map, flower, exploration, note, annotation (all without it; the last three are only ever your own)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many, from 1 to 50 (20 without it)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of the page before"`
}

func (SearchPetalsInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "q").MinLength = jsonschema.Ptr(1)
	toolkit.Property(s, "q").MaxLength = jsonschema.Ptr(SearchMaxQuery)
	toolkit.Property(s, "kinds").MaxLength = jsonschema.Ptr(100)
	limit := toolkit.Property(s, "limit")
	limit.Minimum, limit.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(SearchMaxLimit))
	toolkit.Property(s, "cursor").MaxLength = jsonschema.Ptr(600)
}

// PetalSearchResult is one thing found.
type PetalSearchResult struct {
	Kind        string    `json:"kind"`
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	Snippet     string    `json:"snippet"`
	Map         *string   `json:"map"`
	Exploration *string   `json:"exploration"`
	About       *string   `json:"about"`
	At          time.Time `json:"at"`
	Rank        float32   `json:"rank"`
}

// PetalSearchAnswer is search_petals' answer.
type PetalSearchAnswer struct {
	Query      string              `json:"query"`
	Results    []PetalSearchResult `json:"results"`
	NextCursor *string             `json:"next_cursor"`
}

// RefineSchema: the kinds a result can be.
func (PetalSearchAnswer) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(toolkit.Property(s, "results").Items, "kind").Enum = []any{"map", "flower", "exploration", "note", "annotation"}
}

// Tools implements ToolSet: search_petals, kept on a public site (it reads
// only this site's own index).
func (s *SearchService) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{
			Name: ToolSearchPetals,
			Description: "Full-text search of this site: the map (maps and published flowers: titles, names, about, account ids) for anyone, " +
				"and your own explorations, notes and annotations for you alone. Ranked, best first, each with a snippet (matches in **). Cursor-paged.",
		}, func(ctx context.Context, call toolkit.Call, in SearchPetalsInput) (PetalSearchAnswer, error) {
			return s.Search(ctx, call.Caller, in)
		}),
	}
}

// Search answers one page.
func (s *SearchService) Search(ctx context.Context, caller toolkit.Caller, in SearchPetalsInput) (PetalSearchAnswer, error) {
	q := strings.TrimSpace(in.Q)
	if q == "" || utf8.RuneCountInString(in.Q) > SearchMaxQuery || !utf8.ValidString(q) {
		return PetalSearchAnswer{}, errs.New(errs.BadInput, "q must be 1 to 300 characters of words to find")
	}
	// A trailing space says the last word is whole, so it is kept for splitSearch.
	words, prefix := splitSearch(strings.TrimLeftFunc(in.Q, unicode.IsSpace))
	if !strings.ContainsFunc(q, isWordRune) || (words == "" && prefix == "") {
		return PetalSearchAnswer{}, errs.New(errs.BadInput, "q has no word to find (letters or digits)")
	}
	kinds, err := searchKinds(in.Kinds)
	if err != nil {
		return PetalSearchAnswer{}, err
	}
	limit := in.Limit
	switch {
	case limit == 0:
		limit = SearchDefaultLimit
	case limit < 1 || limit > SearchMaxLimit:
		return PetalSearchAnswer{}, errs.New(errs.BadInput, "limit must be from 1 to 50")
	}
	var after *ports.SearchCursor
	if in.Cursor != "" {
		c, ok := decodeSearchCursor(in.Cursor)
		if !ok {
			return PetalSearchAnswer{}, errs.New(errs.BadInput, "cursor is not a next_cursor of search_petals")
		}
		after = &c
	}
	ctx, cancel := context.WithTimeout(ctx, searchDeadline)
	defer cancel()
	began := time.Now()
	hits, err := s.store.Search(ctx, ports.SearchQuery{Words: words, Prefix: prefix, Kinds: kinds,
		Owner: caller.Subject, Hidden: s.hidden, After: after, Limit: limit + 1})
	if err != nil {
		s.seconds.Observe(time.Since(began).Seconds(), "failed")
		return PetalSearchAnswer{}, err
	}
	s.seconds.Observe(time.Since(began).Seconds(), "ok")
	ans := PetalSearchAnswer{Query: q, Results: make([]PetalSearchResult, 0, min(len(hits), limit))}
	if len(hits) > limit {
		hits = hits[:limit]
		last := hits[limit-1]
		next := encodeSearchCursor(ports.SearchCursor{Rank: last.Rank, Kind: last.Kind, Ref: last.Ref})
		ans.NextCursor = &next
	}
	for _, h := range hits {
		ans.Results = append(ans.Results, PetalSearchResult{Kind: h.Kind, ID: h.ID, Title: h.Title, Snippet: h.Snippet,
			Map: nonEmpty(h.Map), Exploration: nonEmpty(h.Exploration), About: nonEmpty(h.About), At: h.At, Rank: h.Rank})
	}
	return ans, nil
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func searchKinds(list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return ports.SearchKinds, nil
	}
	var out []string
	for _, k := range strings.Split(list, ",") {
		k = strings.TrimSpace(k)
		if !slices.Contains(ports.SearchKinds, k) {
			return nil, errs.New(errs.BadInput, "kinds must be a comma-separated list of map, flower, exploration, note, annotation")
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

// idJoiners are the characters inside account ids and map ids
// (marketing.sputnik-dao.near, near:mainnet:…): the index holds each text
// also split at them (migration 32), and so is a query's text.
func isIDJoiner(r rune) bool { return strings.ContainsRune("._-:/@", r) }

// splitSearch reads q as websearch_to_tsquery's words and, unless q ends
// with a space, a closing quote or inside a quote, its last word as a prefix
// (letters and digits only). A joiner between two letters or digits becomes
// a space, as in the index; a leading - (not) stays.
func splitSearch(q string) (words, prefix string) {
	rs := []rune(q)
	for i := 1; i+1 < len(rs); i++ {
		if isIDJoiner(rs[i]) && isWordRune(rs[i-1]) && isWordRune(rs[i+1]) {
			rs[i] = ' '
		}
	}
	q = string(rs)
	last := len(rs) - 1
	if unicode.IsSpace(rs[last]) || rs[last] == '"' || strings.Count(q, `"`)%2 == 1 {
		return strings.TrimSpace(q), ""
	}
	cut := strings.LastIndexFunc(q, unicode.IsSpace)
	head, tail := q[:cut+1], q[cut+1:]
	if strings.HasPrefix(tail, "-") || strings.EqualFold(tail, "or") {
		return strings.TrimSpace(q), ""
	}
	var b strings.Builder
	for _, r := range tail {
		if isWordRune(r) {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return strings.TrimSpace(head), ""
	}
	return strings.TrimSpace(head), b.String()
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// A search cursor: the last hit's rank (its float32 bits), kind and ref.
func encodeSearchCursor(c ports.SearchCursor) string {
	b := binary.BigEndian.AppendUint32(nil, math.Float32bits(c.Rank))
	b = append(b, c.Kind...)
	b = append(b, 0)
	b = append(b, c.Ref...)
	return encodeCursorBytes(b)
}

func decodeSearchCursor(s string) (ports.SearchCursor, bool) {
	b, ok := decodeCursorBytes(s)
	if !ok || len(b) < 6 {
		return ports.SearchCursor{}, false
	}
	rank := math.Float32frombits(binary.BigEndian.Uint32(b))
	kind, ref, found := strings.Cut(string(b[4:]), "\x00")
	if !found || !slices.Contains(ports.SearchKinds, kind) || ref == "" || math.IsNaN(float64(rank)) || !utf8.ValidString(ref) {
		return ports.SearchCursor{}, false
	}
	return ports.SearchCursor{Rank: rank, Kind: kind, Ref: ref}, true
}
