package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/app"
)

// mcpStdio serves petal's tools over MCP on stdin and stdout for one local
// agent. stdout carries protocol messages only, so every log line goes to
// stderr.
func mcpStdio(ctx context.Context, stderr io.Writer) error {
	cfg, err := app.LoadConfig(os.Getenv)
	if err != nil {
		return err
	}
	format := cfg.LogFormat
	if format == "" {
		format = "text"
	}
	log := newLogger(stderr, format)
	located, err := postgres.Locate(ctx, cfg.DatabaseURL, cfg.DataDir, log)
	if err != nil {
		return err
	}
	defer func() {
		if err := located.Stop(); err != nil {
			log.Error("stopping the private PostgreSQL cluster", "err", err)
		}
	}()
	if cfg.Migrate {
		if err := postgres.MigrateUp(located.URL); err != nil {
			return fmt.Errorf("applying migrations: %w (PETAL_MIGRATE=off skips this)", err)
		}
	}
	db, err := postgres.Connect(ctx, located.URL)
	if err != nil {
		return err
	}
	defer db.Close()
	door, cleanup, err := buildMCP(ctx, cfg, log, db)
	if err != nil {
		return err
	}
	defer cleanup()
	log.Info("petal mcp: serving on stdio", "build_id", app.BuildID, "database", located.How, "public", cfg.Public)
	return door.ServeStdio(ctx)
}
