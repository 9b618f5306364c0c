package main

import (
	"context"
	"io"

	mcpdoor "github.com/petal-near/petal/adapters/mcp"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
)

// mcpStdio serves petal's tools over MCP on stdin and stdout for one local
// agent. stdout carries protocol messages only, so every log line goes to
// stderr.
func mcpStdio(ctx context.Context, stderr io.Writer) error {
	cfg, err := config.LoadConfig(config.Getenv)
	if err != nil {
		return err
	}
	format := cfg.LogFormat
	if format == "" {
		format = "text"
	}
	log := newLogger(stderr, format)
	located, stopCluster, err := locateDatabase(ctx, cfg, log, cfg.Migrate)
	if err != nil {
		return err
	}
	defer stopCluster()
	cfg.Limits = cfg.LimitsFor(located.PrivateCluster())
	if cfg.BlobURL, err = cfg.BlobsFor(located.PrivateCluster()); err != nil {
		return err
	}
	svc, cleanup, err := buildMCP(ctx, cfg, log, locatedDatabase{located, log})
	if err != nil {
		return err
	}
	defer cleanup()
	svc.Snapshots.StoreShipped(ctx)
	log.Info("petal mcp: serving on stdio", "build_id", toolkit.BuildID, "database", located.How, "public", cfg.Public)
	return svc.Door.ServeStdio(ctx)
}

// stdioMCP is the MCP door alone, and what it starts.
type stdioMCP struct {
	Door      *mcpdoor.Server
	Snapshots *snapshotsapp.SnapshotService
}
