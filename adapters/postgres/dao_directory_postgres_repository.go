package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// DAODirectoryRepository keeps the Sputnik DAO list (migrations/000003_dao_directory).
type DAODirectoryRepository struct{ db *DB }

var _ ports.DAODirectory = (*DAODirectoryRepository)(nil)

// NewDAODirectoryRepository makes the DAO directory over db.
func NewDAODirectoryRepository(db *DB) *DAODirectoryRepository {
	return &DAODirectoryRepository{db: db}
}

// DAOs implements ports.DAODirectory.
func (r *DAODirectoryRepository) DAOs(ctx context.Context, chain string) ([]string, time.Time, error) {
	var readAt time.Time
	err := r.db.Pool.QueryRow(ctx, `SELECT read_at FROM dao_directory_reads WHERE chain = $1`, chain).Scan(&readAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("postgres: dao directory: %w", err)
	}
	rows, err := r.db.Pool.Query(ctx, `SELECT account_id FROM dao_directory WHERE chain = $1 ORDER BY account_id`, chain)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("postgres: dao directory: %w", err)
	}
	accounts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("postgres: dao directory: %w", err)
	}
	return accounts, readAt, nil
}

// ReplaceDAOs implements ports.DAODirectory in one transaction, so a reader
// never sees half a list.
func (r *DAODirectoryRepository) ReplaceDAOs(ctx context.Context, chain string, accounts []string, readAt time.Time) error {
	return pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO dao_directory_reads (chain, read_at, count) VALUES ($1, $2, $3)
ON CONFLICT (chain) DO UPDATE SET read_at = excluded.read_at, count = excluded.count`, chain, readAt, len(accounts)); err != nil {
			return fmt.Errorf("postgres: dao directory: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM dao_directory WHERE chain = $1`, chain); err != nil {
			return fmt.Errorf("postgres: dao directory: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO dao_directory (chain, account_id) SELECT $1, a FROM unnest($2::text[]) AS a ON CONFLICT DO NOTHING`, chain, accounts); err != nil {
			return fmt.Errorf("postgres: dao directory: %w", err)
		}
		return nil
	})
}
