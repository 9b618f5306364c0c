package textmatch

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWords(t *testing.T) {
	assert.Equal(t, []string{"get_policy", "get", "policy", "vot", "proposal"}, Words("What is get_policy? Votes on the proposals"))
	assert.Equal(t, []string{"sputnik-dao.near", "sputnik", "dao", "near"}, Words("sputnik-dao.near"))
	for _, group := range [][]string{{"vote", "votes", "voted", "voting"}, {"proposal", "proposals"}, {"policy", "policies"}, {"figure", "figures"}} {
		for _, w := range group[1:] {
			assert.Equal(t, Stem(group[0]), Stem(w), w)
		}
	}
}

func TestRank(t *testing.T) {
	ix := New([]Doc{
		{ID: "figures", Fields: []Field{{"What the figures mean", 3}, {"Gini, Nakamoto and the top shares of a flower's weight.", 1}}},
		{ID: "dao", Fields: []Field{{"Reading a Sputnik DAO", 3}, {"get_policy names the roles; get_proposals pages the votes.", 1}}},
		{ID: "refusals", Fields: []Field{{"Refusals and what to do next", 3}, {"rate_limited: wait retry_after_s; not_found: check the account.", 1}}},
	})
	hits := ix.Rank("what does the gini coefficient mean", 3)
	if assert.NotEmpty(t, hits) {
		assert.Equal(t, "figures", hits[0].ID)
	}
	assert.Equal(t, "dao", ix.Rank("who voted on proposals", 1)[0].ID)
	assert.Equal(t, "refusals", ix.Rank("I was rate limited", 1)[0].ID)
	assert.Equal(t, "dao", ix.Rank("get_policy", 1)[0].ID, "an identifier whole")
	assert.Equal(t, "dao", ix.Rank("sputn", 1)[0].ID, "the last word as the start of a word")
	assert.Empty(t, ix.Rank("sputn ", 1), "a finished word is a word, not a prefix")
	assert.Empty(t, ix.Rank("the and of", 3), "stop words alone match nothing")
	assert.Empty(t, New(nil).Rank("anything", 3))
}
