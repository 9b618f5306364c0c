package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// BillingClaimRepository keeps each person's last ask for their bills
// (billing_claims): one row per person, taken by a single conditional
// upsert, so two replicas never both take the same turn.
type BillingClaimRepository struct{ db *DB }

var _ ports.BillingClaims = (*BillingClaimRepository)(nil)

// NewBillingClaimRepository makes the claims over db.
func NewBillingClaimRepository(db *DB) *BillingClaimRepository {
	return &BillingClaimRepository{db: db}
}

// ClaimBilling implements ports.BillingClaims. The row lock the upsert takes
// makes concurrent claims wait for each other; the first one's new time then
// fails the others' condition.
func (r *BillingClaimRepository) ClaimBilling(ctx context.Context, personID string, every time.Duration) (bool, error) {
	var got string
	err := r.db.Pool.QueryRow(ctx, `INSERT INTO billing_claims (person_id, claimed_at) VALUES ($1, now())
ON CONFLICT (person_id) DO UPDATE SET claimed_at = now()
WHERE billing_claims.claimed_at <= now() - make_interval(secs => $2)
RETURNING person_id`, personID, every.Seconds()).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("postgres: claim a bills ask: %w", err)
	}
	return true, nil
}
