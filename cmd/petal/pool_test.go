package main

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/ports"
)

// Wire's cleanup closes what the wiring opened, in order: this process's
// lease is given back over the pool, then the pool closes.
func TestTheServicesCleanupGivesTheLeaseBackThenClosesThePool(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	svc, cleanup, err := buildService(t.Context(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), locatedDatabase{&postgres.Located{URL: db.URL}, slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(t, err)
	require.NoError(t, svc.Leases.Register(t.Context(), ports.Process{ID: string(svc.Process), Hostname: "test"}))

	cleanup()
	var held int
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM processes WHERE id = $1`, string(svc.Process)).Scan(&held))
	assert.Zero(t, held, "the lease was given back")
	assert.Error(t, svc.Leases.Register(t.Context(), ports.Process{ID: string(svc.Process)}), "the service's pool is closed")
}
