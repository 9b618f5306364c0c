package pgtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func databaseExists(t *testing.T, admin, name string) bool {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), admin)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var ok bool
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&ok))
	return ok
}

// A test database left by a killed run is dropped once it is older than any
// run; one of a run going on now is kept.
func TestDropLeftovers(t *testing.T) {
	admin := AdminURL(t)
	conn, err := pgx.Connect(t.Context(), admin)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	now := time.Now()
	old := fmt.Sprintf("petal_t_%x_%s", now.Add(-leftoverAge-time.Hour).Unix(), randomHex(6))
	_, err = conn.Exec(t.Context(), "CREATE DATABASE "+old)
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+old) })
	_, current := NewURL(t)

	dropLeftovers(admin, now)
	assert.False(t, databaseExists(t, admin, old), "a leftover is dropped")
	assert.True(t, databaseExists(t, admin, current), "a database in use is kept")
}
