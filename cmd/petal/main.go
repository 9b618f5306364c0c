// Command petal is the whole service in one binary: serve, migrate, version,
// and the operator's tools.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/petal-near/petal/app/toolkit"
)

const usage = `petal: who holds power on NEAR and EVM chains, as a flower.

Usage:
  petal serve                      run the HTTP server (configuration from the environment)
  petal migrate up|down [N]|version|force V
                                   manage the database schema
  petal mcp                        serve the tools over MCP on stdio, for a local agent
                                   (claude mcp add petal -- go -C <clone> run ./cmd/petal mcp)
  petal invite mint <usd> [--days N] [--json] | revoke <id> | list
                                   manage invites
  petal model distrusted | trust <model>
                                   the models held at one token a byte since NEAR AI
                                   counted past a learned bound; trust one again
  petal version                    print the build id
  petal health [URL]               exit 0 when a running petal's /api/v1/health is 200
                                   (default: the one at PETAL_ADDR); for container health checks

Configuration: see .env.example and docs/operations.md.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, stdout)
	case "migrate":
		err = migrateCmd(ctx, args[1:], stdout, stderr)
	case "mcp":
		err = mcpStdio(ctx, stderr)
	case "health":
		err = healthCmd(ctx, args[1:], stdout)
	case "invite":
		err = inviteCmd(ctx, args[1:], stdout, stderr)
	case "model":
		err = modelCmd(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, toolkit.BuildID)
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "petal: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "petal %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// logFormatFor is text on a terminal, else JSON.
func logFormatFor(w io.Writer) string {
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return "text"
		}
	}
	return "json"
}

// newLogger writes JSON unless the output is a terminal (or PETAL_LOG_FORMAT says).
func newLogger(w io.Writer, format string) *slog.Logger {
	if format == "" {
		format = logFormatFor(w)
	}
	// Lines logged with a request's context carry its request_id.
	if format == "text" {
		return slog.New(toolkit.WithRequestIDs(slog.NewTextHandler(w, nil)))
	}
	return slog.New(toolkit.WithRequestIDs(slog.NewJSONHandler(w, nil)))
}
