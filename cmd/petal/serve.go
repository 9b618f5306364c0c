package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/tracing"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/toolkit"
)

func serve(ctx context.Context, stdout io.Writer) error {
	cfg, err := config.LoadConfig(config.Getenv)
	if err != nil {
		return err
	}
	format := cfg.LogFormat
	if format == "" {
		format = logFormatFor(stdout)
	}
	// Every request writes a line: they go out together (logwriter.go).
	out := newCoalescingWriter(stdout)
	defer func() { _ = out.Close() }()
	// The access lines in plain values skip slog's JSON handler (logfast.go).
	var lines slog.Handler = newFastJSON(out)
	if format == "text" {
		lines = slog.NewTextHandler(out, nil)
	}
	if tracing.Enabled(os.Getenv) {
		// Each line logged in a request carries its trace (newTracing).
		lines = tracing.WithTraceIDs(lines)
	}
	// Outermost, so the HTTP door sees it is there and does not add it twice.
	log := slog.New(toolkit.WithRequestIDs(lines))
	setMemoryLimitFromHost(log)
	located, stopCluster, err := locateDatabase(ctx, cfg, log, cfg.Migrate)
	if err != nil {
		return err
	}
	defer stopCluster()
	cfg.Limits = cfg.LimitsFor(located.PrivateCluster())
	if cfg.BlobURL, err = cfg.BlobsFor(located.PrivateCluster()); err != nil {
		return err
	}
	// The pool is Wire's: its cleanup gives the lease back, then closes the
	// pool, before the private cluster (if any) stops.
	svc, cleanup, err := buildService(ctx, cfg, log, locatedDatabase{located, log})
	if err != nil {
		return err
	}
	defer cleanup()
	if err := config.CheckReceivers(ctx, cfg, svc.Near); err != nil {
		return err
	}
	stopJobs, err := svc.start(ctx)
	if err != nil {
		return err
	}
	// At shutdown the runs of this process end (interrupted) while requests
	// drain, so their viewers see the end instead of waiting out the drain.
	var stopOnce sync.Once
	stop := func() { stopOnce.Do(stopJobs) }
	defer stop()
	go func() { <-ctx.Done(); stop() }()
	srv := svc.Server
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("PETAL_ADDR %s: %w", cfg.Addr, err)
	}
	if cfg.MetricsAddr != "" {
		mln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("PETAL_METRICS_ADDR %s: %w", cfg.MetricsAddr, err)
		}
		mctx, stopMetrics := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := svc.Metrics.Serve(mctx, mln, log); err != nil {
				log.Error("the metrics listener stopped", "err", err)
			}
		}()
		// Scrapes go on through the drain; the listener closes last.
		defer func() { stopMetrics(); <-done }()
		log.Info("metrics and pprof are served", "addr", "http://"+mln.Addr().String()+"/metrics")
	}
	log.Info("petal is serving", "addr", "http://"+ln.Addr().String(), "build_id", toolkit.BuildID,
		"database", located.How, "limits", cfg.Limits, "llm", cfg.LLM(), "agent_access", cfg.AgentAccessReported(), "public", cfg.Public)
	if w := cfg.TestnetWarning(); w != "" {
		log.Warn(w)
	}
	if err := srv.Serve(ctx, ln, cfg.ShutdownDrain); err != nil {
		return err
	}
	log.Info("petal stopped")
	return nil
}

// openDatabase is locateDatabase with a pool opened on it, for a command
// that wires nothing (petal invite). closeDB closes the pool, then stops a
// private cluster if one was started.
func openDatabase(ctx context.Context, cfg config.Config, log *slog.Logger, migrate bool) (db *postgres.DB, closeDB func(), err error) {
	located, stopCluster, err := locateDatabase(ctx, cfg, log, migrate)
	if err != nil {
		return nil, nil, err
	}
	db, closePool, err := locatedDatabase{located, log}.openPool(ctx, cfg, nil)
	if err != nil {
		stopCluster()
		return nil, nil, err
	}
	return db, func() { closePool(); stopCluster() }, nil
}

// locateDatabase finds (or starts) the database and brings its schema up to
// date when migrate (or else checks it is, refusing one that is behind): the
// start every command on the database shares. serve and mcp migrate unless
// PETAL_MIGRATE=off; petal invite never does. stopCluster stops a private
// cluster if one was started (after the pool on it is closed).
func locateDatabase(ctx context.Context, cfg config.Config, log *slog.Logger, migrate bool) (located *postgres.Located, stopCluster func(), err error) {
	located, err = postgres.LocateIn(ctx, cfg.DatabaseURL, cfg.DataDir, databasePlaces, log)
	if err != nil {
		return nil, nil, err
	}
	// Migrations hold a session lock, and LISTEN a session: both go to
	// PostgreSQL itself when DATABASE_URL is a pooler.
	located.DirectURL = directURL(located, cfg)
	stopCluster = func() {
		if err := located.Stop(); err != nil {
			log.Error("stopping the private PostgreSQL cluster", "err", err)
		}
	}
	if migrate {
		if err := postgres.MigrateUp(located.Direct()); err != nil {
			stopCluster()
			return nil, nil, fmt.Errorf("applying migrations: %w (PETAL_MIGRATE=off skips this)", err)
		}
		log.Info("migrations applied")
	} else if err := postgres.CheckSchema(located.Direct()); err != nil {
		stopCluster()
		why := "PETAL_MIGRATE=off"
		if cfg.Migrate {
			why = "this command never migrates"
		}
		return nil, nil, fmt.Errorf("%s: %w", why, err)
	}
	return located, stopCluster, nil
}

// databasePlaces are where serve and migrate look for a database without
// DATABASE_URL: the defaults, except in tests.
var databasePlaces postgres.Places
