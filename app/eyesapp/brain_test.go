package eyesapp_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/app/eyesapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

func TestBrainIndexDoctrineFirst(t *testing.T) {
	idx := eyesapp.NewBrainService().Index()
	assert.Equal(t, toolkit.BuildID, idx.Commit, "the brain's commit is the build id")
	require.GreaterOrEqual(t, len(idx.Files), 8)
	assert.Equal(t, "doctrine", idx.Files[0].Kind)
	kinds := map[string]int{"doctrine": 0, "chapter": 1, "recipe": 2}
	for i := 1; i < len(idx.Files); i++ {
		assert.LessOrEqual(t, kinds[idx.Files[i-1].Kind], kinds[idx.Files[i].Kind], "doctrine, then chapters, then recipes")
	}
	brain := eyesapp.NewBrainService()
	for _, h := range idx.Files {
		f, err := brain.File(h.ID)
		require.NoError(t, err)
		assert.NotEmpty(t, h.Title)
		assert.True(t, strings.HasPrefix(f.Markdown, "# "), "%s starts with its title", h.ID)
		assert.Greater(t, len(f.Markdown), 1500, "%s is a real file, not filler", h.ID)
	}
	_, err := brain.File("nope")
	assert.True(t, errs.Is(err, errs.NotFound))
}

// Questions an agent asks land on the file that answers them.
func TestBrainRoutesAQuestionToTheRightFile(t *testing.T) {
	brain := eyesapp.NewBrainService()
	for q, want := range map[string]string{
		"what does the gini coefficient mean":               "figures",
		"how many accounts hold more than half (nakamoto)?": "figures",
		"why is the grey petal so big":                      "reading-a-flower",
		"petal area square root sqrt size":                  "reading-a-flower",
		"I got rate_limited, what now":                      "refusals",
		"the tool said not_on_this_site":                    "refusals",
		"who voted on the DAO's proposals":                  "recipe-sputnik-dao",
		"how much is staked with this validator's pool":     "recipe-staking-pool",
		"token balance of an account and its decimals":      "recipe-fungible-token",
		"read a web page about the DAO":                     "recipe-reading-the-web",
		"how do I page a contract's list with from_index":   "asking-the-chain",
		"what rules should the agent follow":                "doctrine",
		"delegators of a valid":                             "recipe-staking-pool",
	} {
		r, err := brain.Route(q, "")
		require.NoError(t, err, q)
		require.NotEmpty(t, r.Files, q)
		assert.Equal(t, want, r.Files[0].ID, "%q: %+v", q, r.Files)
		assert.LessOrEqual(t, len(r.Files), 3)
	}
	for calls, want := range map[string]string{
		"get_policy":                 "recipe-sputnik-dao",
		"ft_balance_of, ft_metadata": "recipe-fungible-token",
		"get_accounts":               "recipe-staking-pool",
		"budget_exhausted":           "refusals",
		"read_chain":                 "asking-the-chain",
	} {
		r, err := brain.Route("", calls)
		require.NoError(t, err, calls)
		require.NotEmpty(t, r.Files, calls)
		assert.Equal(t, want, r.Files[0].ID, calls)
		assert.NotEmpty(t, r.Files[0].Calls)
	}
	// Both: the calls named rank first, the question orders the rest.
	r, err := brain.Route("what does the gini mean", "get_policy")
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(r.Files), 2)
	assert.Equal(t, []string{"recipe-sputnik-dao", "figures"}, []string{r.Files[0].ID, r.Files[1].ID})

	_, err = brain.Route(" ", "")
	assert.True(t, errs.Is(err, errs.BadInput))
	r, err = brain.Route("", "no_such_method")
	require.NoError(t, err)
	assert.Empty(t, r.Files)
}
