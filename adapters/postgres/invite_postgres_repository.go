package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/invites"
	"github.com/petal-near/petal/ports"
)

// InviteRepository keeps invites (migrations/000006_ledger); budgets live in credit_accounts.
type InviteRepository struct{ db *DB }

var _ ports.InviteStore = (*InviteRepository)(nil)

// NewInviteRepository makes the invite store over db.
func NewInviteRepository(db *DB) *InviteRepository { return &InviteRepository{db: db} }

// CreateInvite implements ports.InviteStore.
func (r *InviteRepository) CreateInvite(ctx context.Context, inv invites.Invite) error {
	return pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		account := credit.InviteAccount(inv.ID)
		if _, err := tx.Exec(ctx, `INSERT INTO credit_accounts (id, kind, limit_micros, expires_at, created_at)
VALUES ($1, 'invite', $2, $3, $4)`, account, int64(inv.Budget), inv.ExpiresAt, inv.CreatedAt); err != nil {
			return fmt.Errorf("postgres: create invite account: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO invites (id, token_hash, account_id, created_at) VALUES ($1, $2, $3, $4)`,
			inv.ID, inv.TokenHash, account, inv.CreatedAt); err != nil {
			return fmt.Errorf("postgres: create invite: %w", err)
		}
		return nil
	})
}

const inviteSelect = `SELECT i.id, i.token_hash, a.limit_micros, a.spent_micros, a.held_micros, i.created_at, a.expires_at, a.revoked_at
FROM invites i JOIN credit_accounts a ON a.id = i.account_id `

func scanInvite(row pgx.Row) (invites.Invite, error) {
	var inv invites.Invite
	var budget, spent, held int64
	err := row.Scan(&inv.ID, &inv.TokenHash, &budget, &spent, &held, &inv.CreatedAt, &inv.ExpiresAt, &inv.RevokedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return invites.Invite{}, errs.New(errs.NotFound, "no such invite")
	}
	if err != nil {
		return invites.Invite{}, fmt.Errorf("postgres: read invite: %w", err)
	}
	inv.Budget, inv.Spent, inv.Held = credit.Micros(budget), credit.Micros(spent), credit.Micros(held)
	inv.CreatedAt, inv.ExpiresAt = inv.CreatedAt.UTC(), inv.ExpiresAt.UTC()
	if inv.RevokedAt != nil {
		t := inv.RevokedAt.UTC()
		inv.RevokedAt = &t
	}
	return inv, nil
}

// Invite implements ports.InviteStore.
func (r *InviteRepository) Invite(ctx context.Context, id string) (invites.Invite, error) {
	return scanInvite(r.db.Pool.QueryRow(ctx, inviteSelect+`WHERE i.id = $1`, id))
}

// InviteByTokenHash implements ports.InviteStore.
func (r *InviteRepository) InviteByTokenHash(ctx context.Context, hash string) (invites.Invite, error) {
	return scanInvite(r.db.Pool.QueryRow(ctx, inviteSelect+`WHERE i.token_hash = $1`, hash))
}

// RevokeInvite implements ports.InviteStore.
func (r *InviteRepository) RevokeInvite(ctx context.Context, id string, at time.Time) (invites.Invite, error) {
	if _, err := r.db.Pool.Exec(ctx, `UPDATE credit_accounts SET revoked_at = coalesce(revoked_at, $2)
WHERE id = $1 AND kind = 'invite'`, credit.InviteAccount(id), at); err != nil {
		return invites.Invite{}, fmt.Errorf("postgres: revoke invite: %w", err)
	}
	return r.Invite(ctx, id)
}

// Invites implements ports.InviteStore.
func (r *InviteRepository) Invites(ctx context.Context) ([]invites.Invite, error) {
	rows, err := r.db.Pool.Query(ctx, inviteSelect+`ORDER BY i.created_at DESC, i.id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list invites: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (invites.Invite, error) { return scanInvite(row) })
}
