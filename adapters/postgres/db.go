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

// PoolOptions bound the pool; zero values keep pgx's defaults.
type PoolOptions struct {
	// MaxConns is the most connections the pool opens (PETAL_DB_POOL_SIZE).
	MaxConns int
	// StatementTimeout is PostgreSQL's statement_timeout on every connection
	// of the pool (PETAL_DB_STATEMENT_TIMEOUT_S): a statement running longer
	// is cancelled by the server, whatever the caller's context says.
	StatementTimeout time.Duration
}

// Connect opens a pool on url with pgx's defaults.
func Connect(ctx context.Context, url string) (*DB, error) {
	return ConnectWith(ctx, url, PoolOptions{})
}

// ConnectWith opens a pool on url bounded by opts. It does not wait for the
// server: a database that is down at start shows in health, and the pool
// recovers when it comes back.
func ConnectWith(ctx context.Context, url string, opts PoolOptions) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse DATABASE_URL: %w", err)
	}
	cfg.MaxConnIdleTime = 5 * time.Minute
	cfg.HealthCheckPeriod = 15 * time.Second
	if opts.MaxConns > 0 {
		cfg.MaxConns = int32(min(opts.MaxConns, 1<<20))
	}
	if opts.StatementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = fmt.Sprint(opts.StatementTimeout.Milliseconds())
	}
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
