package postgres_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

// TestBillingClaimsOneTurnAMinute: twenty replicas' claims at once for one
// person get one turn; the next comes once the interval has passed since it.
func TestBillingClaimsOneTurnAMinute(t *testing.T) {
	db := pgtest.New(t)
	ctx := t.Context()
	_, err := db.Pool.Exec(ctx, `INSERT INTO people (id) VALUES ('prs_0123456789abcdef0123456789abcdef')`)
	require.NoError(t, err)
	const person = "prs_0123456789abcdef0123456789abcdef"
	claims := make([]*postgres.BillingClaimRepository, 4) // one per replica, as four would hold
	for i := range claims {
		claims[i] = postgres.NewBillingClaimRepository(db.DB)
	}
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			ok, err := claims[i%len(claims)].ClaimBilling(ctx, person, time.Minute)
			assert.NoError(t, err)
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, won.Load(), "one turn")
	ok, err := claims[0].ClaimBilling(ctx, person, time.Minute)
	require.NoError(t, err)
	assert.False(t, ok, "within the minute")
	_, err = db.Pool.Exec(ctx, `UPDATE billing_claims SET claimed_at = now() - interval '61 seconds'`)
	require.NoError(t, err)
	ok, err = claims[1].ClaimBilling(ctx, person, time.Minute)
	require.NoError(t, err)
	assert.True(t, ok, "a minute later, the next turn")
}
