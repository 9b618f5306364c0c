// Package postgres implements petal's store ports and event bus on PostgreSQL
// through pgx, and applies the embedded migrations with golang-migrate.
package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/petal-near/petal/ports"
)

// DB is petal's connection pool.
type DB struct {
	Pool *pgxpool.Pool
}

var _ ports.Database = (*DB)(nil)

// Connect opens a pool on url. It does not wait for the server: a database that
// is down at start shows in health, and the pool recovers when it comes back.
func Connect(ctx context.Context, url string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse DATABASE_URL: %w", err)
	}
	cfg.MaxConnIdleTime = 5 * time.Minute
	cfg.HealthCheckPeriod = 15 * time.Second
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open pool: %w", err)
	}
	return &DB{Pool: pool}, nil
}

// Ping implements ports.Database.
func (db *DB) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return db.Pool.Ping(ctx)
}

// Close closes the pool.
func (db *DB) Close() { db.Pool.Close() }
