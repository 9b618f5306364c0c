package brave_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/brave"
	"github.com/petal-near/petal/adapters/brave/bravetest"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

func TestSearchAgainstTheFake(t *testing.T) {
	fake := bravetest.New(t)
	c := brave.New(fake.URL, bravetest.Key, nil)
	require.True(t, c.Configured())

	got, err := c.Search(t.Context(), "near dao", 10)
	require.NoError(t, err)
	assert.Equal(t, []ports.WebResult{
		{Title: "Sputnik DAO on NEAR", URL: "https://example.org/sputnik", Snippet: "How DAOs on NEAR keep their members & proposals.", Age: "2 days ago"},
		{Title: "AstroDAO", URL: "https://example.org/astro", Snippet: "A front end for Sputnik DAOs."},
	}, got, "markup stripped, entities decoded, a result that isn't on the web dropped")
	assert.Equal(t, []string{"near dao"}, fake.Queries())

	got, err = c.Search(t.Context(), "near dao", 1)
	require.NoError(t, err)
	assert.Len(t, got, 1)

	got, err = c.Search(t.Context(), "nothing matches", 10)
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.NotNil(t, got)

	_, err = brave.New(fake.URL, "wrong", nil).Search(t.Context(), "near dao", 10)
	assert.True(t, errs.Is(err, errs.SourceFailed))
	assert.Contains(t, err.(*errs.Error).Hint, "PETAL_SEARCH_API_KEY")

	fake.Limit()
	_, err = c.Search(t.Context(), "near dao", 10)
	e, ok := errs.As(err)
	require.True(t, ok)
	assert.Equal(t, errs.SourceFailed, e.Code)
	assert.Equal(t, 7, e.RetryAfterS)
}

func TestWithoutAKeyNothingIsAsked(t *testing.T) {
	fake := bravetest.New(t)
	c := brave.New(fake.URL, "", nil)
	assert.False(t, c.Configured())
	_, err := c.Search(t.Context(), "near dao", 10)
	assert.True(t, errs.Is(err, errs.SourceFailed))
	assert.Empty(t, fake.Queries())
}
