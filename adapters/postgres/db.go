// Package postgres implements petal's store ports and event bus on PostgreSQL
// through pgx, and applies the embedded migrations with golang-migrate.
package postgres

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/petal-near/petal/ports"
)

// DB is petal's connection pool, and how to reach the server itself for
// what a pooler in between cannot carry (LISTEN).
type DB struct {
	Pool *pgxpool.Pool
	// direct connects to PostgreSQL itself: the pool's own configuration
	// unless the pool goes through a pooler (PoolOptions.DirectURL).
	direct *pgx.ConnConfig
	pooled bool
}

var _ ports.Database = (*DB)(nil)

// PoolOptions bound the pool; zero values keep pgx's defaults.
type PoolOptions struct {
	// MaxConns is the most connections the pool opens (PETAL_DB_POOL_SIZE).
	MaxConns int
	// StatementTimeout is PostgreSQL's statement_timeout on every connection
	// of the pool (PETAL_DB_STATEMENT_TIMEOUT_S): a statement running longer
	// is cancelled by the server, whatever the caller's context says. Behind
	// a pooler it is the role's setting instead (see CheckStatementTimeout).
	StatementTimeout time.Duration
	// DirectURL reaches PostgreSQL itself when the pool's URL is a pooler in
	// transaction mode (DATABASE_DIRECT_URL); empty or the pool's own URL
	// means the pool is direct.
	DirectURL string
	// Tracer traces the pool's queries (nil: none). The listeners' direct
	// connections are not traced: one LISTEN waits for hours.
	Tracer pgx.QueryTracer
}

// Connect opens a pool on url with pgx's defaults.
func Connect(ctx context.Context, url string) (*DB, error) {
	return ConnectWith(ctx, url, PoolOptions{})
}

// ConnectWith opens a pool on url bounded by opts. It does not wait for the
// server: a database that is down at start shows in health, and the pool
// recovers when it comes back.
//
// Through a transaction pooler (opts.DirectURL set apart) the pool sends no
// startup parameter but the pooler's own (PgBouncer refuses
// statement_timeout), and describes statements without naming them: a
// named prepared statement lives on one server connection, which the pooler
// hands to another client after each transaction ("prepared statement
// stmtcache_… already exists"). An unnamed one lives within the one
// round trip that uses it, and the described types are kept per client
// connection (pgx's cache_describe), so queries keep binary formats and
// exact parameter types in one round trip.
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
	pooled := opts.DirectURL != "" && opts.DirectURL != url
	direct := cfg.ConnConfig
	if pooled {
		if direct, err = pgx.ParseConfig(opts.DirectURL); err != nil {
			return nil, fmt.Errorf("postgres: parse DATABASE_DIRECT_URL: %w", err)
		}
		if !namesParam(url, "default_query_exec_mode") {
			cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
		}
	} else {
		direct = direct.Copy()
	}
	if opts.StatementTimeout > 0 {
		ms := fmt.Sprint(opts.StatementTimeout.Milliseconds())
		direct.RuntimeParams["statement_timeout"] = ms
		if !pooled {
			cfg.ConnConfig.RuntimeParams["statement_timeout"] = ms
		}
	}
	if opts.Tracer != nil {
		cfg.ConnConfig.Tracer = opts.Tracer
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open pool: %w", err)
	}
	return &DB{Pool: pool, direct: direct, pooled: pooled}, nil
}

// namesParam reports whether a URL or key=value DSN sets key itself, so an
// operator's explicit choice wins over petal's.
func namesParam(dsn, key string) bool {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		return u.Query().Has(key)
	}
	for _, field := range strings.Fields(dsn) {
		if k, _, ok := strings.Cut(field, "="); ok && k == key {
			return true
		}
	}
	return false
}

// Pooled reports whether the pool goes through a pooler.
func (db *DB) Pooled() bool { return db.pooled }

// DirectConfig is a fresh configuration for one connection to PostgreSQL
// itself, for what must hold a session: LISTEN.
func (db *DB) DirectConfig() *pgx.ConnConfig {
	if db.direct == nil {
		// A DB made around a pool of its own (tests).
		c := db.Pool.Config().ConnConfig.Copy()
		c.Tracer = nil
		return c
	}
	return db.direct.Copy()
}

// CheckStatementTimeout fails when the pool's sessions do not run under
// want: behind a pooler the timeout cannot be sent at connect and is the
// role's (ALTER ROLE … SET statement_timeout), so a role without it runs
// statements unbounded. Nothing to check for a direct pool, which sets it.
func (db *DB) CheckStatementTimeout(ctx context.Context, want time.Duration) error {
	if !db.pooled || want <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var ms int64
	err := db.Pool.QueryRow(ctx,
		`SELECT setting::bigint FROM pg_settings WHERE name = 'statement_timeout'`).Scan(&ms)
	if err != nil {
		return fmt.Errorf("reading statement_timeout through the pooler: %w", err)
	}
	if got := time.Duration(ms) * time.Millisecond; got != want {
		return fmt.Errorf("statement_timeout through the pooler is %s, not PETAL_DB_STATEMENT_TIMEOUT_S's %s: "+
			"a pooler cannot pass it at connect; set it on petal's role (ALTER ROLE <role> SET statement_timeout = '%dms')",
			got, want, want.Milliseconds())
	}
	return nil
}

// Ping implements ports.Database.
func (db *DB) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return db.Pool.Ping(ctx)
}

// Close closes the pool.
func (db *DB) Close() { db.Pool.Close() }
