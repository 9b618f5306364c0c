package pgtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Bouncer is Debian's pgbouncer running in front of the test server.
type Bouncer struct {
	// Admin is its admin console (SHOW POOLS, SHOW STATS) as the test user.
	Admin string
	port  int
}

// URL is dbURL (a postgres:// URL of the test server) through the bouncer.
func (b *Bouncer) URL(t testing.TB, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	u.Host = net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port))
	return u.String()
}

// StartPgBouncer runs pgbouncer in poolMode ("transaction", "session") on a
// free loopback port in front of the test server, with at most serverConns
// server connections for each database and user, until t ends. Every database
// of the server is reachable through it by name. pgbouncer missing fails the
// test (.ci/run installs it): these tests never skip.
func StartPgBouncer(t testing.TB, poolMode string, serverConns int) *Bouncer {
	t.Helper()
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		bin = "/usr/sbin/pgbouncer" // Debian's, outside a plain user's PATH
		if _, serr := os.Stat(bin); serr != nil {
			t.Fatalf("pgtest: pgbouncer is not installed (apt-get install pgbouncer; .ci/run does): %v", err)
		}
	}
	server, err := pgx.ParseConfig(AdminURL(t))
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	// pgbouncer refuses to run as root; as root it becomes nobody, who must
	// be able to read its files.
	dir, err := os.MkdirTemp("", "pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	ini := fmt.Sprintf(`[databases]
* = host=%s port=%d

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
admin_users = %s
pool_mode = %s
default_pool_size = %d
max_client_conn = 500
logfile =
pidfile =
stats_period = 1
`, server.Host, server.Port, port, filepath.Join(dir, "users.txt"), server.User, poolMode, serverConns)
	for name, body := range map[string]string{
		"pgbouncer.ini": ini,
		"users.txt":     fmt.Sprintf("%q %q\n", server.User, server.Password),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{filepath.Join(dir, "pgbouncer.ini")}
	if me, err := user.Current(); err == nil && me.Uid == "0" {
		args = append([]string{"-u", "nobody"}, args...)
	}
	cmd := exec.Command(bin, args...)
	logs := &lockedLog{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("pgtest: start pgbouncer: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT) // its fast shutdown
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("pgbouncer said:\n%s", logs.String())
		}
	})
	admin := (&url.URL{Scheme: "postgres", User: url.UserPassword(server.User, server.Password),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Path: "/pgbouncer",
		RawQuery: "sslmode=disable&default_query_exec_mode=simple_protocol"}).String()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, admin)
		cancel()
		if err == nil {
			_ = conn.Close(context.Background())
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pgtest: pgbouncer did not answer on port %d within 15 s: %v\n%s", port, err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &Bouncer{Admin: admin, port: port}
}

// Transactions is how many transactions pgbouncer has carried to database
// name so far (SHOW STATS' total_xact_count): proof that traffic went
// through it. Its figures are a second late at most (stats_period).
func (b *Bouncer) Transactions(t testing.TB, name string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, b.Admin)
	if err != nil {
		t.Fatalf("pgtest: pgbouncer admin: %v", err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, "SHOW STATS")
	if err != nil {
		t.Fatalf("pgtest: SHOW STATS: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		values := rows.RawValues() // text: the console speaks the simple protocol
		for i, f := range rows.FieldDescriptions() {
			if f.Name == "total_xact_count" && string(values[0]) == name {
				n, err := strconv.ParseInt(string(values[i]), 10, 64)
				if err != nil {
					t.Fatalf("pgtest: total_xact_count %q: %v", values[i], err)
				}
				return n
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("pgtest: SHOW STATS: %v", err)
	}
	return 0
}

type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
