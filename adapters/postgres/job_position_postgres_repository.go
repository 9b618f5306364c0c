package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// JobPositionRepository is ports.JobPositionRepository on the job_positions table.
type JobPositionRepository struct{ db *DB }

var _ ports.JobPositions = (*JobPositionRepository)(nil)

// NewJobPositionRepository makes the keeper of jobs' positions.
func NewJobPositionRepository(db *DB) *JobPositionRepository { return &JobPositionRepository{db: db} }

// Position implements ports.JobPositions.
func (p *JobPositionRepository) Position(ctx context.Context, job, part string) (int64, error) {
	var at int64
	err := p.db.Pool.QueryRow(ctx, `SELECT position FROM job_positions WHERE job = $1 AND part = $2`, job, part).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return at, err
}

// SetPosition implements ports.JobPositions.
func (p *JobPositionRepository) SetPosition(ctx context.Context, job, part string, position int64) error {
	_, err := p.db.Pool.Exec(ctx, `INSERT INTO job_positions (job, part, position) VALUES ($1, $2, $3)
		ON CONFLICT (job, part) DO UPDATE SET position = EXCLUDED.position, updated_at = now()`, job, part, position)
	return err
}
