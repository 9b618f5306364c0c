//go:build wireinject

package main

import (
	"context"
	"log/slog"

	"github.com/google/wire"

	"github.com/petal-near/petal/app/config"
)

// buildService wires the HTTP door and its background jobs over the real
// adapters, on a pool from pool; its cleanup gives the process lease back,
// then closes the pool.
func buildService(ctx context.Context, cfg config.Config, log *slog.Logger, pool poolSource) (*service, func(), error) {
	wire.Build(serverSet, databaseBinding)
	return nil, nil, nil
}

// buildMCP wires the MCP door alone, for `petal mcp` over stdio.
func buildMCP(ctx context.Context, cfg config.Config, log *slog.Logger, pool poolSource) (*stdioMCP, func(), error) {
	wire.Build(adapterSet, registrySet, mcpSet, noWallets, wire.Struct(new(stdioMCP), "*"))
	return nil, nil, nil
}
