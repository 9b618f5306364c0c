package postgres_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

// deadServer refuses connections at once.
const deadServer = "postgres://nobody@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=2"

// reachableTempDir is a temp folder that an unprivileged user can enter, as
// the private cluster's user must when the tests run as root.
func reachableTempDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	return dir
}

func query(t *testing.T, url, sql string) string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var out string
	require.NoError(t, conn.QueryRow(t.Context(), sql).Scan(&out))
	return out
}

func TestPrivateClusterIsStartedStoppedAndKept(t *testing.T) {
	dataDir := reachableTempDir(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	places := postgres.Places{LocalServers: []string{deadServer}}

	located, err := postgres.LocateIn(t.Context(), "", dataDir, places, log)
	require.NoError(t, err, "%s", logs.String())
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = located.Stop()
		}
	})
	assert.Equal(t, "private cluster", located.How)
	assert.Contains(t, logs.String(), "initialising a private cluster")
	pgdata := filepath.Join(dataDir, "pg")
	assert.Equal(t, "petal", query(t, located.URL, `SELECT current_database()`))
	assert.Equal(t, pgdata, query(t, located.URL, `SELECT current_setting('data_directory')`))
	assert.Equal(t, "", query(t, located.URL, `SELECT current_setting('listen_addresses')`), "socket only: no TCP port taken")
	conn, err := pgx.Connect(t.Context(), located.URL)
	require.NoError(t, err)
	_, err = conn.Exec(t.Context(), `CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')`)
	require.NoError(t, err)
	require.NoError(t, conn.Close(t.Context()))

	pid := pgtest.ClusterPID(t, pgdata)
	require.NotZero(t, pid)
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	require.NoError(t, err)
	if os.Geteuid() == 0 {
		assert.NotRegexp(t, `(?m)^Uid:\s+0\s`, string(status), "as root, the server runs as an unprivileged user")
	}
	pgid, err := syscall.Getpgid(pid)
	require.NoError(t, err)
	assert.NotEqual(t, syscall.Getpgrp(), pgid, "the server has its own process group, out of reach of a Ctrl-C meant for petal")

	// A second petal on the same folder, while the first still runs, takes
	// the running cluster over rather than failing to start it again.
	again, err := postgres.LocateIn(t.Context(), "", dataDir, places, log)
	require.NoError(t, err)
	assert.Contains(t, logs.String(), "already running")
	assert.Equal(t, pid, pgtest.ClusterPID(t, pgdata))

	require.NoError(t, again.Stop())
	stopped = true
	assert.Zero(t, pgtest.ClusterPID(t, pgdata), "stopped")
	_, err = pgx.Connect(t.Context(), located.URL)
	assert.Error(t, err, "nothing answers once stopped")

	// Started again: the data folder is kept, not initialised anew.
	logs.Reset()
	third, err := postgres.LocateIn(t.Context(), "", dataDir, places, log)
	require.NoError(t, err, "%s", logs.String())
	stopped = false
	located = third
	assert.NotContains(t, logs.String(), "initialising")
	assert.Equal(t, "still here", query(t, third.URL, `SELECT v FROM kept`))
	require.NoError(t, third.Stop())
	stopped = true
	assert.Zero(t, pgtest.ClusterPID(t, pgdata))
}

func TestLocateSaysHowToFixIt(t *testing.T) {
	places := postgres.Places{LocalServers: []string{deadServer}, BinDirs: []string{t.TempDir()}}
	_, err := postgres.LocateIn(t.Context(), "", t.TempDir(), places, slog.New(slog.DiscardHandler))
	require.Error(t, err)
	for _, fix := range []string{"127.0.0.1:1", "DATABASE_URL", "127.0.0.1:5432", "initdb", "apt-get install postgresql"} {
		assert.Contains(t, err.Error(), fix)
	}
}

func TestLocatePrefersDATABASE_URLThenALocalServer(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	located, err := postgres.LocateIn(t.Context(), "postgres://someone@db.example/petal", t.TempDir(), postgres.Places{}, log)
	require.NoError(t, err)
	assert.Equal(t, "DATABASE_URL", located.How)
	assert.Equal(t, "postgres://someone@db.example/petal", located.URL)

	// A local server: the first that answers, with the petal database made.
	admin := pgtest.AdminURL(t)
	located, err = postgres.LocateIn(t.Context(), "", t.TempDir(), postgres.Places{LocalServers: []string{deadServer, admin}}, log)
	require.NoError(t, err)
	assert.Equal(t, "local server", located.How)
	assert.Equal(t, postgres.DatabaseName, query(t, located.URL, `SELECT current_database()`))
	require.NoError(t, located.Stop(), "stopping a server petal did not start does nothing")
}

// The programs are found on PATH or under /usr/lib/postgresql/*/bin.
func TestPostgresProgramsAreOnThisMachine(t *testing.T) {
	if _, err := exec.LookPath("pg_ctl"); err != nil {
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
		require.NotEmpty(t, dirs, "the private-cluster tests need PostgreSQL's server programs")
	}
}
