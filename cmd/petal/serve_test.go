package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

// lockedBuffer collects a command's output while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// logRecord finds the first JSON log line with msg.
func (b *lockedBuffer) logRecord(msg string) map[string]any {
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == msg {
			return rec
		}
	}
	return nil
}

// These tests signal this very process (as an operator signals petal), which
// is why no test of this package may run in parallel with them.

// TestServeWithAPrivateClusterStopsOnSignals runs `petal serve` in this
// process, where no local server answers, so it starts a private cluster;
// SIGTERM (then, on a second start, SIGINT) stops the server, which drains and
// then stops the cluster.
func TestServeWithAPrivateClusterStopsOnSignals(t *testing.T) {
	dataDir := t.TempDir()
	// The cluster's unprivileged user must be able to enter the folder.
	require.NoError(t, os.Chmod(dataDir, 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(dataDir), 0o755))
	t.Setenv("DATABASE_URL", "")
	t.Setenv("PETAL_DATA_DIR", dataDir)
	t.Setenv("PETAL_ADDR", "127.0.0.1:0")
	t.Setenv("PETAL_LOG_FORMAT", "json")
	databasePlaces = postgres.Places{LocalServers: []string{"postgres://nobody@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=2"}}
	t.Cleanup(func() { databasePlaces = postgres.Places{} })
	pgdata := filepath.Join(dataDir, "pg")
	// Should the test fail half-way, stop the cluster anyway (SIGINT is
	// PostgreSQL's fast shutdown): it runs in its own process group and would
	// outlive the test.
	t.Cleanup(func() {
		if pid := pgtest.ClusterPID(t, pgdata); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGINT)
		}
	})

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			serving, out, exit := startServe(t, 120*time.Second)
			assert.Equal(t, "private cluster", serving["database"])
			addr := strings.TrimPrefix(serving["addr"].(string), "http://")

			res, err := http.Get("http://" + addr + "/api/v1/health")
			require.NoError(t, err)
			var h map[string]any
			require.NoError(t, json.NewDecoder(res.Body).Decode(&h))
			res.Body.Close()
			assert.Equal(t, http.StatusOK, res.StatusCode)
			assert.Equal(t, "up", h["db"])
			pid := pgtest.ClusterPID(t, pgdata)
			require.NotZero(t, pid, "the private cluster runs")

			stopServe(t, sig, exit, out, 90*time.Second)
			assert.NotNil(t, out.logRecord("shutting down: draining requests"))
			assert.NotNil(t, out.logRecord("petal stopped"))
			assert.NotNil(t, out.logRecord("database: stopped the private cluster"))
			assert.Zero(t, pgtest.ClusterPID(t, pgdata), "the cluster is stopped on exit")
			_, err = net.DialTimeout("tcp", addr, time.Second)
			assert.Error(t, err, "nothing listens after exit")
		})
	}
}

func TestServeRefusesABadValueNamingIt(t *testing.T) {
	t.Setenv("PETAL_TOOL_CALLS_PER_MIN", "lots")
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 1, run([]string{"serve"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `PETAL_TOOL_CALLS_PER_MIN: "lots" is not a positive whole number`)
	assert.Empty(t, stdout.String(), "nothing started")
}

// On SIGTERM petal serve drains and then closes its pool: no connection of
// its stays open on the database.
func TestServeClosesItsPoolOnExit(t *testing.T) {
	db := pgtest.New(t)
	t.Setenv("DATABASE_URL", db.URL)
	serving, out, exit := startServe(t, 60*time.Second)
	assert.Equal(t, "DATABASE_URL", serving["database"])
	assert.NotNil(t, out.logRecord("migrations applied"))
	res, err := http.Get(serving["addr"].(string) + "/api/v1/health")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)

	connections := func() int {
		var n int
		require.NoError(t, db.Pool.QueryRow(t.Context(),
			`SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, db.Name).Scan(&n))
		return n
	}
	// The test's own pool holds one; petal's pool holds at least one more.
	require.Positive(t, connections())

	stopServe(t, syscall.SIGTERM, exit, out, 60*time.Second)
	require.Eventually(t, func() bool { return connections() == 0 }, 10*time.Second, 20*time.Millisecond,
		"petal's connections are closed on exit")
}

// startServe runs `petal serve` in this process with the environment the test
// set (on any free port, logging JSON) and waits, up to within, until it
// serves. exit receives its exit code.
func startServe(t *testing.T, within time.Duration) (serving map[string]any, out *lockedBuffer, exit chan int) {
	t.Helper()
	t.Setenv("PETAL_ADDR", "127.0.0.1:0")
	t.Setenv("PETAL_LOG_FORMAT", "json")
	out = &lockedBuffer{}
	exit = make(chan int, 1)
	go func() { exit <- run([]string{"serve"}, out, out) }()
	exited := -1
	require.Eventually(t, func() bool {
		select {
		case exited = <-exit:
			return true
		default:
		}
		serving = out.logRecord("petal is serving")
		return serving != nil
	}, within, 20*time.Millisecond, "petal serve starts")
	require.Equal(t, -1, exited, "petal serve exited:\n%s", out)
	return serving, out, exit
}

// stopServe signals this process, as an operator signals petal, and waits for
// serve to exit cleanly. serve has registered for the signal once it serves,
// so the test process itself is never stopped by it.
func stopServe(t *testing.T, sig syscall.Signal, exit chan int, out *lockedBuffer, within time.Duration) {
	t.Helper()
	require.NoError(t, syscall.Kill(os.Getpid(), sig))
	select {
	case code := <-exit:
		require.Equal(t, 0, code, "%s", out)
	case <-time.After(within):
		t.Fatalf("petal serve did not stop on %s:\n%s", sig, out)
	}
}

// servePetal runs `petal serve` until the test ends (or stop is called) and
// returns its address and log.
func servePetal(t *testing.T) (addr string, out *lockedBuffer, stop func()) {
	t.Helper()
	serving, out, exit := startServe(t, 60*time.Second)
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			stopServe(t, syscall.SIGTERM, exit, out, 60*time.Second)
		}
	}
	t.Cleanup(stop)
	return serving["addr"].(string), out, stop
}

// petal serve applies pending migrations at start, unless PETAL_MIGRATE=off;
// then it refuses to start on a schema older than it needs, saying what to
// do, and leaves the schema alone.
func TestServeMigratesAtStartUnlessOff(t *testing.T) {
	schemaVersion := func(url string) int {
		var stdout, stderr bytes.Buffer
		t.Setenv("DATABASE_URL", url)
		require.Equal(t, 0, run([]string{"migrate", "version"}, &stdout, &stderr), stderr.String())
		v, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(stdout.String(), "version ")))
		require.NoError(t, err, stdout.String())
		return v
	}

	off := pgtest.NewEmptyURL(t)
	t.Setenv("DATABASE_URL", off)
	t.Setenv("PETAL_MIGRATE", "off")
	t.Setenv("PETAL_ADDR", "127.0.0.1:0")
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 1, run([]string{"serve"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "PETAL_MIGRATE=off: the database schema is at version 0 and this petal needs "+strconv.Itoa(latestMigration(t)))
	assert.Contains(t, stderr.String(), "run petal migrate up first")
	assert.Equal(t, 0, schemaVersion(off), "PETAL_MIGRATE=off leaves the schema alone")

	// Migrated by an operator first, it starts with PETAL_MIGRATE=off.
	t.Setenv("DATABASE_URL", off)
	require.Equal(t, 0, run([]string{"migrate", "up"}, &stdout, &stderr), stderr.String())
	_, out, stop := servePetal(t)
	stop()
	assert.Nil(t, out.logRecord("migrations applied"))

	on := pgtest.NewEmptyURL(t)
	t.Setenv("DATABASE_URL", on)
	t.Setenv("PETAL_MIGRATE", "")
	_, out, stop = servePetal(t)
	stop()
	assert.NotNil(t, out.logRecord("migrations applied"))
	assert.Equal(t, latestMigration(t), schemaVersion(on))
}
