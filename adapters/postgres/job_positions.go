package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// JobPositions is ports.JobPositions on the job_positions table.
type JobPositions struct{ db *DB }

var _ ports.JobPositions = (*JobPositions)(nil)

// NewJobPositions makes the keeper of jobs' positions.
func NewJobPositions(db *DB) *JobPositions { return &JobPositions{db: db} }

// Position implements ports.JobPositions.
func (p *JobPositions) Position(ctx context.Context, job, part string) (int64, error) {
	var at int64
	err := p.db.Pool.QueryRow(ctx, `SELECT position FROM job_positions WHERE job = $1 AND part = $2`, job, part).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return at, err
}

// SetPosition implements ports.JobPositions.
func (p *JobPositions) SetPosition(ctx context.Context, job, part string, position int64) error {
	_, err := p.db.Pool.Exec(ctx, `INSERT INTO job_positions (job, part, position) VALUES ($1, $2, $3)
		ON CONFLICT (job, part) DO UPDATE SET position = EXCLUDED.position, updated_at = now()`, job, part, position)
	return err
}
