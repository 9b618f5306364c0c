package relationsapp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

func codeOf(t *testing.T, err error) errs.Code {
	t.Helper()
	var e *errs.Error
	require.ErrorAs(t, err, &e)
	return e.Code
}

// A page's next_cursor reads back as the key it named, and only a cursor
// this site gave reads at all: anything else is bad input, never a page
// from somewhere else.
func TestRelationCursorsReadBackOnlyWhatWasGiven(t *testing.T) {
	k := ports.RelationKey{Set: true, Value: 42, Num: 3, Den: 7, Name: "near:mainnet:a.near", Name2: "g_2"}
	got, err := decodeKey(encodeKey(k))
	require.NoError(t, err)
	assert.Equal(t, k, got)

	start, err := decodeKey("")
	require.NoError(t, err)
	assert.False(t, start.Set, "no cursor is the first page")

	for _, raw := range []string{
		"not base64!",
		encodeCursorBytes([]byte(`{"a":1}`)),
		encodeCursorBytes([]byte(`[1,2,3,"a"]`)),
		encodeCursorBytes([]byte(`["x",2,3,"a","b"]`)),
		strings.Repeat("A", 601), // longer than any cursor given: not decoded
	} {
		_, err := decodeKey(raw)
		assert.Equal(t, errs.BadInput, codeOf(t, err), "%q", raw)
	}
}

// A search cursor carries a rank, a kind of the index and a ref; one of an
// unknown kind, with no ref or with bytes that aren't text is refused.
func TestSearchCursorsReadBackOnlyWhatWasGiven(t *testing.T) {
	c := ports.SearchCursor{Rank: 0.25, Kind: ports.SearchFlower, Ref: "flw_1"}
	got, ok := decodeSearchCursor(encodeSearchCursor(c))
	require.True(t, ok)
	assert.Equal(t, c, got)

	for _, bad := range []ports.SearchCursor{
		{Rank: 0.25, Kind: "secret", Ref: "x"},
		{Rank: 0.25, Kind: ports.SearchMap, Ref: ""},
		{Rank: 0.25, Kind: ports.SearchMap, Ref: "\xff\xfe"},
	} {
		_, ok := decodeSearchCursor(encodeSearchCursor(bad))
		assert.False(t, ok, "%+v", bad)
	}
	_, ok = decodeSearchCursor(encodeCursorBytes([]byte{0, 0}))
	assert.False(t, ok, "too short")
}

// kinds is a comma list of the index's kinds, each once; empty means all.
func TestSearchKindsAreTheIndexsOnly(t *testing.T) {
	all, err := searchKinds("  ")
	require.NoError(t, err)
	assert.Equal(t, ports.SearchKinds, all)
	some, err := searchKinds("map, flower,map")
	require.NoError(t, err)
	assert.Equal(t, []string{"map", "flower"}, some)
	_, err = searchKinds("map,people")
	assert.Equal(t, errs.BadInput, codeOf(t, err))
}

// A query is split as the index is: joiners inside ids become spaces, and
// the last word is a prefix unless the query ends in a space, a quote, an
// open quote, a not (-) or an or.
func TestSearchQueriesSplitAsTheIndexDoes(t *testing.T) {
	for _, c := range []struct{ q, words, prefix string }{
		{"marketing.sputnik-dao.near", "marketing sputnik dao", "near"},
		{"council memb", "council", "memb"},
		{"council ", "council", ""},
		{`"exact words"`, `"exact words"`, ""},
		{`"open quote`, `"open quote`, ""},
		{"council -spam", "council -spam", ""},
		{"council or", "council or", ""},
		{"alice.near!", "alice", "near"},
		{"council !!", "council", ""},
	} {
		words, prefix := splitSearch(c.q)
		assert.Equal(t, c.words, words, "words of %q", c.q)
		assert.Equal(t, c.prefix, prefix, "prefix of %q", c.q)
	}
}

// An account that is no CAIP-10 id, or a cursor not given, is refused
// before the store is asked (this service has none: asking would panic).
func TestAccountGroupsRefusesBeforeReading(t *testing.T) {
	s := &RelationService{}
	_, err := s.AccountGroups(t.Context(), AccountGroupsInput{Account: "alice.near"})
	assert.Equal(t, errs.BadInput, codeOf(t, err))
	_, err = s.AccountGroups(t.Context(), AccountGroupsInput{Account: "near:mainnet:alice.near", Cursor: "!"})
	assert.Equal(t, errs.BadInput, codeOf(t, err))
	assert.Equal(t, RelationsDefaultLimit, pageLimit(0))
	assert.Equal(t, 7, pageLimit(7))
}
