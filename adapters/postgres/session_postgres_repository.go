package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// SessionRepository keeps sessions in the sessions table (migrations/000005_people).
type SessionRepository struct{ db *DB }

var _ ports.SessionStore = (*SessionRepository)(nil)

// NewSessionRepository makes the session store over db.
func NewSessionRepository(db *DB) *SessionRepository { return &SessionRepository{db: db} }

// CreateSession implements ports.SessionStore.
func (r *SessionRepository) CreateSession(ctx context.Context, s people.Session) error {
	_, err := r.db.Pool.Exec(ctx, sessionInsert, sessionArgs(s)...)
	if err != nil {
		return fmt.Errorf("postgres: create session: %w", err)
	}
	return nil
}

const sessionInsert = `INSERT INTO sessions (id, subject, invite_id, wallet_id, created_at, expires_at)
VALUES ($1, $2, NULLIF($3, ''), NULLIF($4, ''), $5, $6)`

func sessionArgs(s people.Session) []any {
	return []any{s.ID, s.Subject, s.InviteID, s.WalletID, s.CreatedAt, s.ExpiresAt}
}

// Session implements ports.SessionStore.
func (r *SessionRepository) Session(ctx context.Context, id string) (people.Session, error) {
	return scanSession(r.db.Pool.QueryRow(ctx, `SELECT id, subject, coalesce(invite_id, ''), coalesce(wallet_id, ''), created_at, expires_at
FROM sessions WHERE id = $1`, id))
}

func scanSession(row pgx.Row) (people.Session, error) {
	var s people.Session
	err := row.Scan(&s.ID, &s.Subject, &s.InviteID, &s.WalletID, &s.CreatedAt, &s.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return people.Session{}, errs.New(errs.NotFound, "no such session")
	}
	if err != nil {
		return people.Session{}, fmt.Errorf("postgres: read session: %w", err)
	}
	s.CreatedAt, s.ExpiresAt = s.CreatedAt.UTC(), s.ExpiresAt.UTC()
	return s, nil
}

// ReplaceSession implements ports.SessionStore.
func (r *SessionRepository) ReplaceSession(ctx context.Context, oldID string, s people.Session) error {
	return pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, oldID); err != nil {
			return fmt.Errorf("postgres: replace session: %w", err)
		}
		if _, err := tx.Exec(ctx, sessionInsert, sessionArgs(s)...); err != nil {
			return fmt.Errorf("postgres: replace session: %w", err)
		}
		return nil
	})
}

// DeleteSession implements ports.SessionStore.
func (r *SessionRepository) DeleteSession(ctx context.Context, id string) error {
	if _, err := r.db.Pool.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, id); err != nil {
		return fmt.Errorf("postgres: delete session: %w", err)
	}
	return nil
}

// SetSessionInvite implements ports.SessionStore.
func (r *SessionRepository) SetSessionInvite(ctx context.Context, id, inviteID string) error {
	tag, err := r.db.Pool.Exec(ctx, `UPDATE sessions SET invite_id = $2 WHERE id = $1`, id, inviteID)
	if err != nil {
		return fmt.Errorf("postgres: hold invite: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return errs.New(errs.NotFound, "no such session")
	}
	return nil
}
