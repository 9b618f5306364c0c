package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/tracing"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/jobsapp"
)

// poolSource is where a wired service's database pool comes from: serve and
// mcp open one on the database they located (openPool's cleanup closes it),
// and tests lend the pool they already hold (which they close themselves).
type poolSource interface {
	openPool(ctx context.Context, cfg config.Config, tracer pgx.QueryTracer) (db *postgres.DB, closePool func(), err error)
}

// locatedDatabase opens a pool of PETAL_DB_POOL_SIZE on a located database.
type locatedDatabase struct {
	*postgres.Located
	log *slog.Logger
}

func (l locatedDatabase) openPool(ctx context.Context, cfg config.Config, tracer pgx.QueryTracer) (*postgres.DB, func(), error) {
	db, err := postgres.ConnectWith(ctx, l.URL, postgres.PoolOptions{MaxConns: cfg.DBPoolSize,
		StatementTimeout: cfg.DBStatementTimeout, DirectURL: l.DirectURL, Tracer: tracer})
	if err != nil {
		return nil, nil, err
	}
	if db.Pooled() {
		// Not fatal: the pooler may be starting; the operator is told.
		if err := db.CheckStatementTimeout(ctx, cfg.DBStatementTimeout); err != nil {
			l.log.Warn("database: through a pooler", "err", err)
		}
		l.log.Info("database: pooled; LISTEN and migrations go to DATABASE_DIRECT_URL")
	}
	return db, db.Close, nil
}

// directURL is DATABASE_DIRECT_URL, PostgreSQL itself when DATABASE_URL is
// a pooler, for a database found by DATABASE_URL (a local server or private
// cluster petal finds is always direct).
func directURL(located *postgres.Located, cfg config.Config) string {
	if located.How != "DATABASE_URL" {
		return ""
	}
	return cfg.DatabaseDirect
}

// lentPool is a pool its holder keeps open and closes.
type lentPool struct{ db *postgres.DB }

func (l lentPool) openPool(context.Context, config.Config, pgx.QueryTracer) (*postgres.DB, func(), error) {
	return l.db, func() {}, nil
}

// newPool is the service's pool, its queries traced when tracing is on. Wire
// runs cleanups in the reverse of the order it built things, so everything
// built over the pool (the leases) is cleaned up before the pool closes.
func newPool(ctx context.Context, cfg config.Config, src poolSource, t *tracing.Tracing) (*postgres.DB, func(), error) {
	return src.openPool(ctx, cfg, t.QueryTracer())
}

// newLeases is the process leases; its cleanup gives this process's lease
// back, when start's stop did not already, before the pool closes, so other
// replicas needn't wait for it to go stale to recover this process's runs.
func newLeases(db *postgres.DB, process jobsapp.ProcessID, log *slog.Logger) (*postgres.Leases, func()) {
	leases := postgres.NewLeases(db)
	return leases, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := leases.Remove(ctx, string(process)); err != nil {
			log.Warn("giving the process lease back", "err", err)
		}
	}
}
