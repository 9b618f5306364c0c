package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// ViewRepository keeps people's views (migrations/000020_views).
type ViewRepository struct{ db *DB }

var _ ports.ViewStore = (*ViewRepository)(nil)

// NewViewRepository makes the view store over db.
func NewViewRepository(db *DB) *ViewRepository { return &ViewRepository{db: db} }

// KeepView implements ports.ViewStore: the body kept once under its name and
// the person's row replaced, in one statement.
func (r *ViewRepository) KeepView(ctx context.Context, person string, v ports.KeptView) error {
	_, err := r.db.Pool.Exec(ctx, `WITH kept AS (
    INSERT INTO views (hash, body, first_at) VALUES ($2, $3, $6) ON CONFLICT (hash) DO NOTHING
)
INSERT INTO person_views (person_id, view_hash, credential, session_id, kept_at) VALUES ($1, $2, $4, $5, $6)
ON CONFLICT (person_id) DO UPDATE SET view_hash = EXCLUDED.view_hash, credential = EXCLUDED.credential,
    session_id = EXCLUDED.session_id, kept_at = EXCLUDED.kept_at`,
		person, v.Hash, string(v.Body), v.Credential, v.Session, v.KeptAt)
	if err != nil {
		return fmt.Errorf("postgres: keep view: %w", err)
	}
	return nil
}

// PersonView implements ports.ViewStore.
func (r *ViewRepository) PersonView(ctx context.Context, person string) (ports.KeptView, error) {
	var v ports.KeptView
	var body string
	err := r.db.Pool.QueryRow(ctx, `SELECT p.view_hash, v.body, p.credential, p.session_id, p.kept_at
FROM person_views p JOIN views v ON v.hash = p.view_hash WHERE p.person_id = $1`, person).
		Scan(&v.Hash, &body, &v.Credential, &v.Session, &v.KeptAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return ports.KeptView{}, errs.New(errs.NotFound, "no view of their own")
	}
	if err != nil {
		return ports.KeptView{}, fmt.Errorf("postgres: read a person's view: %w", err)
	}
	v.Body = []byte(body)
	return v, nil
}

// View implements ports.ViewStore.
func (r *ViewRepository) View(ctx context.Context, hash string) ([]byte, error) {
	var body string
	err := r.db.Pool.QueryRow(ctx, `SELECT body FROM views WHERE hash = $1`, hash).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errs.New(errs.NotFound, "no view has that hash")
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: read view: %w", err)
	}
	return []byte(body), nil
}
