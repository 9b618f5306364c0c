package main

import (
	"context"
	"io"
	"os"

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
	db, located, closeDB, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeDB()
	door, cleanup, err := buildMCP(ctx, cfg, log, db)
	if err != nil {
		return err
	}
	defer cleanup()
	log.Info("petal mcp: serving on stdio", "build_id", app.BuildID, "database", located.How, "public", cfg.Public)
	return door.ServeStdio(ctx)
}
