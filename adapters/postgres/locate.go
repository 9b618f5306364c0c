package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// DatabaseName is the database petal creates on a local server it finds.
const DatabaseName = "petal"

// Located is the database petal will use, and how it was found.
type Located struct {
	URL  string
	How  string       // "DATABASE_URL", "local server", or "private cluster"
	Stop func() error // stops a private cluster; a no-op otherwise
	// DirectURL reaches PostgreSQL itself when URL is a pooler
	// (DATABASE_DIRECT_URL); empty means URL is direct.
	DirectURL string
}

// Direct is the URL of PostgreSQL itself, for what holds a session (LISTEN,
// the migrations' lock): DirectURL, else URL.
func (l *Located) Direct() string {
	if l.DirectURL != "" {
		return l.DirectURL
	}
	return l.URL
}

// PrivateCluster reports whether the database is a cluster this petal
// started (or took over) in its data folder, which no other process uses.
func (l *Located) PrivateCluster() bool { return l.How == howPrivateCluster }

const howPrivateCluster = "private cluster"

// Places are where Locate looks. Zero values mean the defaults; tests and
// operators with unusual machines set them.
type Places struct {
	// LocalServers are admin connection strings tried in order; nil means
	// LocalServerURLs().
	LocalServers []string
	// BinDirs are folders searched for initdb and pg_ctl; nil means the folder
	// of pg_ctl on PATH, then /usr/lib/postgresql/*/bin, newest first.
	BinDirs []string
}

// Locate finds the database: DATABASE_URL when set; else a local PostgreSQL
// (127.0.0.1:5432 or the default socket, as the current OS user), creating the
// petal database if missing; else a private cluster started from PostgreSQL's
// own programs in dataDir. It logs which way was taken.
func Locate(ctx context.Context, databaseURL, dataDir string, log *slog.Logger) (*Located, error) {
	return LocateIn(ctx, databaseURL, dataDir, Places{}, log)
}

// LocateIn is Locate looking in places.
func LocateIn(ctx context.Context, databaseURL, dataDir string, places Places, log *slog.Logger) (*Located, error) {
	noop := func() error { return nil }
	if databaseURL != "" {
		log.Info("database: using DATABASE_URL")
		return &Located{URL: databaseURL, How: "DATABASE_URL", Stop: noop}, nil
	}
	servers := places.LocalServers
	if servers == nil {
		servers = LocalServerURLs()
	}
	var tried []string
	for _, admin := range servers {
		u, err := ensureDatabase(ctx, admin, DatabaseName)
		if err == nil {
			log.Info("database: using the local PostgreSQL server", "url", redact(u))
			return &Located{URL: u, How: "local server", Stop: noop}, nil
		}
		tried = append(tried, fmt.Sprintf("%s (%v)", redact(admin), err))
	}
	bin, err := findPostgresBin(places.BinDirs)
	if err != nil {
		return nil, fmt.Errorf("no PostgreSQL found: tried %s; and %v.\nFix it one of these ways:\n"+
			"  - set DATABASE_URL=postgres://user@host:5432/petal\n"+
			"  - start a local PostgreSQL on 127.0.0.1:5432 that lets the current user in\n"+
			"  - install PostgreSQL's server programs (initdb, pg_ctl; Debian: apt-get install postgresql) and petal starts a private cluster",
			strings.Join(tried, "; "), err)
	}
	log.Info("database: no local server answered; starting a private cluster", "tried", strings.Join(tried, "; "))
	cluster, err := StartPrivateCluster(ctx, bin, dataDir, log)
	if err != nil {
		return nil, fmt.Errorf("no local PostgreSQL answered (%s), and starting a private cluster failed: %w\n"+
			"Fix it: set DATABASE_URL, start a local PostgreSQL on 127.0.0.1:5432, or see the cluster's log in %s",
			strings.Join(tried, "; "), err, filepath.Join(dataDir, "pg", "server.log"))
	}
	u, err := ensureDatabase(ctx, cluster.AdminURL, DatabaseName)
	if err != nil {
		_ = cluster.Stop()
		return nil, fmt.Errorf("private cluster: %w", err)
	}
	log.Info("database: using a private PostgreSQL cluster", "data", cluster.DataDir, "url", u)
	return &Located{URL: u, How: howPrivateCluster, Stop: cluster.Stop}, nil
}

// LocalServerURLs are the addresses of a local server as the current OS user,
// on TCP then on the default socket, connecting to the maintenance database.
func LocalServerURLs() []string {
	name := "postgres"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	return []string{
		fmt.Sprintf("postgres://%s@127.0.0.1:5432/postgres?sslmode=disable&connect_timeout=3", url.PathEscape(name)),
		fmt.Sprintf("host=/var/run/postgresql user=%s dbname=postgres connect_timeout=3", name),
	}
}

// ensureDatabase connects to admin, creates dbName if it is missing and returns
// the connection string for dbName on the same server.
func ensureDatabase(ctx context.Context, admin, dbName string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, dbName).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{dbName}.Sanitize()); err != nil && !strings.Contains(err.Error(), "already exists") {
			return "", fmt.Errorf("create database %s: %w", dbName, err)
		}
	}
	return WithDatabase(admin, dbName)
}

// WithDatabase returns conn (a URL or a key=value DSN) pointed at another database.
func WithDatabase(conn, dbName string) (string, error) {
	if strings.HasPrefix(conn, "postgres://") || strings.HasPrefix(conn, "postgresql://") {
		u, err := url.Parse(conn)
		if err != nil {
			return "", err
		}
		u.Path = "/" + dbName
		return u.String(), nil
	}
	var parts []string
	for _, f := range strings.Fields(conn) {
		if !strings.HasPrefix(f, "dbname=") {
			parts = append(parts, f)
		}
	}
	return strings.Join(append(parts, "dbname="+dbName), " "), nil
}

func findPostgresBin(dirs []string) (string, error) {
	if dirs == nil {
		if p, err := exec.LookPath("pg_ctl"); err == nil {
			dirs = append(dirs, filepath.Dir(p))
		}
		found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		// The newest version first.
		sort.Slice(found, func(i, j int) bool { return versionOf(found[i]) > versionOf(found[j]) })
		dirs = append(dirs, found...)
	}
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	return "", errors.New("initdb and pg_ctl are not on PATH nor under /usr/lib/postgresql/*/bin")
}

func versionOf(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode()&0o111 != 0
}

// PrivateCluster is a PostgreSQL cluster petal started for itself.
type PrivateCluster struct {
	DataDir  string
	AdminURL string
	Stop     func() error
}

// StartPrivateCluster initialises (once) and starts a cluster in dataDir/pg,
// listening only on a Unix socket of its own, so it never takes a port another
// server uses. As root it runs the server as an unprivileged user, since
// PostgreSQL refuses to run as root; when that user cannot reach dataDir (a
// folder under /root, say), the cluster lives in /var/lib/petal instead. The
// server runs in its own process group, so a Ctrl-C meant for petal reaches
// petal, which drains its requests and then stops the cluster itself. A
// cluster left running by a petal that was killed is taken over, not started
// twice.
func StartPrivateCluster(ctx context.Context, bin, dataDir string, log *slog.Logger) (*PrivateCluster, error) {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, err
	}
	cred, owner, err := serverUser()
	if err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, err
		}
		// The server user must be able to reach its folder.
		_ = os.Chmod(abs, 0o755)
		if dir := unreachableAncestor(abs, cred); dir != "" {
			sum := sha256.Sum256([]byte(abs))
			moved := filepath.Join(rootFallbackDir, filepath.Base(abs)+"-"+hex.EncodeToString(sum[:6]))
			log.Warn("database: the private cluster's user cannot reach the data folder; using another",
				"as", owner, "unreachable", dir, "data", moved)
			abs = moved
			if err := os.MkdirAll(abs, 0o755); err != nil {
				return nil, err
			}
		}
	}
	pgdata := filepath.Join(abs, "pg")
	// Socket paths are limited to about 100 bytes, so the socket lives in a short
	// folder named after the data folder.
	sum := sha256.Sum256([]byte(pgdata))
	sockDir := filepath.Join(os.TempDir(), "petal-pg-"+hex.EncodeToString(sum[:6]))
	for _, d := range []string{abs, pgdata, sockDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	if cred != nil {
		for _, d := range []string{pgdata, sockDir} {
			if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
				return nil, fmt.Errorf("chown %s to %s: %w", d, owner, err)
			}
		}
	}
	command := func(ctx context.Context, name string, args ...string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
		// Its own process group: a terminal's Ctrl-C goes to petal, not to the server.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
		cmd.Dir = pgdata
		return cmd
	}
	run := func(name string, args ...string) error {
		out, err := command(ctx, name, args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if _, err := os.Stat(filepath.Join(pgdata, "PG_VERSION")); err != nil {
		log.Info("database: initialising a private cluster", "data", pgdata, "as", owner)
		if err := run("initdb", "-D", pgdata, "-U", "petal", "--auth=trust", "-E", "UTF8", "--no-sync"); err != nil {
			return nil, err
		}
	}
	stop := func() error {
		out, err := command(context.Background(), "pg_ctl", "-D", pgdata, "-m", "fast", "-w", "-t", "60", "stop").CombinedOutput()
		if err != nil {
			return fmt.Errorf("pg_ctl stop: %w: %s", err, strings.TrimSpace(string(out)))
		}
		log.Info("database: stopped the private cluster", "data", pgdata)
		return nil
	}
	cluster := &PrivateCluster{
		DataDir:  pgdata,
		AdminURL: fmt.Sprintf("host=%s user=petal dbname=postgres connect_timeout=5", sockDir),
		Stop:     stop,
	}
	// pg_ctl status exits 0 when a server runs on this data folder.
	if err := command(ctx, "pg_ctl", "-D", pgdata, "status").Run(); err == nil {
		log.Warn("database: the private cluster is already running (left by an earlier petal?); using it", "data", pgdata)
		return cluster, nil
	}
	opts := fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories='%s'", sockDir)
	if err := run("pg_ctl", "-D", pgdata, "-o", opts, "-l", filepath.Join(pgdata, "server.log"), "-w", "-t", "60", "start"); err != nil {
		return nil, err
	}
	log.Info("database: started a private cluster", "data", pgdata, "socket", sockDir, "as", owner)
	return cluster, nil
}

// rootFallbackDir is where, as root, a private cluster lives when its user
// cannot reach the data folder asked for.
var rootFallbackDir = "/var/lib/petal"

// unreachableAncestor is the first folder on the way to dir (dir included)
// that the user cred cannot enter, or "" when every one can be entered.
func unreachableAncestor(dir string, cred *syscall.Credential) string {
	for d := dir; ; d = filepath.Dir(d) {
		var st syscall.Stat_t
		if err := syscall.Stat(d, &st); err == nil {
			var bit uint32 = 0o001
			switch {
			case st.Uid == cred.Uid:
				bit = 0o100
			case st.Gid == cred.Gid:
				bit = 0o010
			}
			if st.Mode&bit == 0 {
				return d
			}
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// serverUser is who runs a private cluster: the current user, or as root the
// system's postgres user (else nobody).
func serverUser() (*syscall.Credential, string, error) {
	if os.Geteuid() != 0 {
		return nil, "the current user", nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, name, nil
	}
	return nil, "", errors.New("running as root and no unprivileged user (postgres, nobody) to run PostgreSQL as")
}

// redact hides a password in a connection string for logs.
func redact(conn string) string {
	if u, err := url.Parse(conn); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		return u.String()
	}
	return conn
}
