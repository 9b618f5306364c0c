// Package pgtest gives each test a fresh, migrated PostgreSQL database, cloned
// from a template migrated once per set of migration files. The server is named
// by PETAL_TEST_DATABASE_URL, else the local server as the current OS user.
// A missing server fails the test: tests never skip silently.
package pgtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/migrations"
)

// DB is one test's database.
type DB struct {
	*postgres.DB
	URL  string
	Name string
}

var (
	templateOnce sync.Once
	templateName string
	templateErr  error
)

// AdminURL is the maintenance connection to the test server.
func AdminURL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("PETAL_TEST_DATABASE_URL"); u != "" {
		return u
	}
	for _, u := range postgres.LocalServerURLs() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		conn, err := pgx.Connect(ctx, u)
		cancel()
		if err == nil {
			_ = conn.Close(context.Background())
			return u
		}
	}
	t.Fatalf("pgtest: no PostgreSQL answers on 127.0.0.1:5432 or the default socket as the current user; " +
		"start one or set PETAL_TEST_DATABASE_URL (these tests need a real database and never skip)")
	return ""
}

// New makes a fresh migrated database for t, dropped when t ends.
func New(t testing.TB) *DB {
	t.Helper()
	url, name := NewURL(t)
	db, err := postgres.Connect(context.Background(), url)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(db.Close)
	return &DB{DB: db, URL: url, Name: name}
}

// NewURL makes a fresh migrated database for t and returns its URL, for tests
// that start processes of their own on it.
func NewURL(t testing.TB) (string, string) {
	t.Helper()
	admin := AdminURL(t)
	templateOnce.Do(func() {
		templateName, templateErr = ensureTemplate(admin)
		dropLeftovers(admin, time.Now())
	})
	if templateErr != nil {
		t.Fatalf("pgtest: template: %v", templateErr)
	}
	return createDatabase(t, admin, templateName)
}

// NewEmptyURL makes a fresh database with no migrations applied, dropped when
// t ends, for tests of the migrations themselves.
func NewEmptyURL(t testing.TB) string {
	t.Helper()
	url, _ := createDatabase(t, AdminURL(t), "template0")
	return url
}

func createDatabase(t testing.TB, admin, template string) (string, string) {
	t.Helper()
	// The name carries its birth time, so databases left by a killed test run
	// can be told from those of runs going on now (see dropLeftovers).
	name := fmt.Sprintf("petal_t_%x_%s", time.Now().Unix(), randomHex(6))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(context.Background())
	// Two creates from one template at once can collide briefly; try again
	// until ctx's deadline (a loaded machine can make "briefly" seconds).
	for {
		_, err = conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, template))
		if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "being accessed by other users") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
	})
	url, err := postgres.WithDatabase(admin, name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return url, name
}

// ensureTemplate makes (once per migration set, across test processes) a
// database with every migration applied, named by a hash of the files.
func ensureTemplate(admin string) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(migrations.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	name := "petal_tpl_" + hex.EncodeToString(h.Sum(nil))[:16]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	// Test packages run as parallel processes: one of them builds the template.
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(74657374)`); err != nil {
		return "", err
	}
	defer func() { _, _ = conn.Exec(context.Background(), `SELECT pg_advisory_unlock(74657374)`) }()
	var ready bool
	err = conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate)`, name).Scan(&ready)
	if err != nil || ready {
		return name, err
	}
	_, _ = conn.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", name))
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE DATABASE %s", name)); err != nil {
		return "", err
	}
	url, err := postgres.WithDatabase(admin, name)
	if err != nil {
		return "", err
	}
	if err := postgres.MigrateUp(url); err != nil {
		return "", fmt.Errorf("migrate template: %w", err)
	}
	// Marking it a template is what tells other processes it is complete.
	if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s WITH is_template true", name)); err != nil {
		return "", err
	}
	return name, nil
}

// leftoverAge is older than any test run: a test database this old was left
// by a run that was killed before its cleanup.
const leftoverAge = 6 * time.Hour

var leftoverName = regexp.MustCompile(`^petal_t_([0-9a-f]+)_[0-9a-f]+$`)

// dropLeftovers drops test databases left by killed runs, so a machine that
// runs the tests for months does not fill up. Errors are ignored: this is
// housekeeping, and another process may be dropping the same ones.
func dropLeftovers(admin string, now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return
	}
	defer func() { _ = conn.Close(context.Background()) }()
	rows, err := conn.Query(ctx, `SELECT datname FROM pg_database WHERE datname LIKE 'petal\_t\_%'`)
	if err != nil {
		return
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	for _, name := range names {
		m := leftoverName.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		born, err := strconv.ParseInt(m[1], 16, 64)
		if err != nil || now.Sub(time.Unix(born, 0)) < leftoverAge {
			continue
		}
		_, _ = conn.Exec(ctx, fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", pgx.Identifier{name}.Sanitize()))
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ClusterPID is the pid of the PostgreSQL server running on the data folder
// pgdata, or 0 when none runs there: how tests of a private cluster see that
// it started and that it stopped.
func ClusterPID(t testing.TB, pgdata string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pgdata, "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		t.Fatalf("pgtest: %s/postmaster.pid: %v", pgdata, err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
		return 0
	}
	return pid
}
