package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// SpecRepository keeps flower specs in the specs table (migrations/000004_specs).
type SpecRepository struct{ db *DB }

var _ ports.SpecStore = (*SpecRepository)(nil)

// NewSpecRepository makes the spec store over db.
func NewSpecRepository(db *DB) *SpecRepository { return &SpecRepository{db: db} }

// Keep implements ports.SpecStore. The name is the primary key, so keeping a
// spec again, even concurrently, changes nothing.
func (r *SpecRepository) Keep(ctx context.Context, sha256, snapshot string, canonical []byte) (bool, error) {
	tag, err := r.db.Pool.Exec(ctx, `INSERT INTO specs (sha256, snapshot_sha256, body) VALUES ($1, $2, $3)
ON CONFLICT (sha256) DO NOTHING`, sha256, snapshot, string(canonical))
	if err != nil {
		return false, fmt.Errorf("postgres: keep spec: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Get implements ports.SpecStore.
func (r *SpecRepository) Get(ctx context.Context, sha256 string) ([]byte, error) {
	var body string
	err := r.db.Pool.QueryRow(ctx, `SELECT body FROM specs WHERE sha256 = $1`, sha256).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errs.New(errs.NotFound, "no such spec")
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: read spec: %w", err)
	}
	return []byte(body), nil
}
