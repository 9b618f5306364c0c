package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestPromptCountsContract(t *testing.T) {
	porttest.PromptCountsContract(t, func(t *testing.T) ports.PromptCounts { return postgres.NewPromptCountRepository(pgtest.New(t).DB) })
}

// TestRetentionDeletesPromptCountsNotSeenForAWeek: the retention job's kinds
// for NEAR AI's counts take what was not seen since, and keep the rest.
func TestRetentionDeletesPromptCountsNotSeenForAWeek(t *testing.T) {
	db := pgtest.New(t).DB
	counts, ret := postgres.NewPromptCountRepository(db), postgres.NewRetention(db)
	now := time.Now()
	for i, at := range []time.Time{now.Add(-8 * 24 * time.Hour), now} {
		require.NoError(t, counts.Record(t.Context(), ports.PromptCount{Model: "m", Head: fmt.Sprintf("%064x", i), Prefix: fmt.Sprintf("%064x", i+10),
			Messages: 1, MessageBytes: 10, PromptTokens: 100, At: at}))
	}
	for _, what := range []ports.Retained{ports.OldPromptCounts, ports.OldPromptHeads} {
		n, err := ret.Delete(t.Context(), what, 7*24*time.Hour, 100)
		require.NoError(t, err)
		assert.EqualValues(t, 1, n, what)
	}
	k, err := counts.Known(t.Context(), []string{"m"}, []string{fmt.Sprintf("%064x", 1)}, []string{fmt.Sprintf("%064x", 11)})
	require.NoError(t, err)
	assert.Len(t, k.Heads, 1)
	assert.Len(t, k.Prefixes, 1)
}
