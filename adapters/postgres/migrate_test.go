package postgres_test

import (
	"context"
	"io/fs"
	"regexp"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/migrations"
)

// catalogQuery describes everything a migration can create, one line per
// object, so two schemas compare as two strings.
const catalogQuery = `
WITH ns AS (
  SELECT oid, nspname FROM pg_namespace
  WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') AND nspname NOT LIKE 'pg_temp%' AND nspname NOT LIKE 'pg_toast_temp%'
)
SELECT coalesce(string_agg(line, E'\n' ORDER BY line), '') FROM (
  SELECT 'schema ' || nspname AS line FROM ns
  UNION ALL SELECT 'relation ' || ns.nspname || '.' || c.relname || ' ' || c.relkind::text
    FROM pg_class c JOIN ns ON ns.oid = c.relnamespace
  UNION ALL SELECT 'column ' || table_schema || '.' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '')
    FROM information_schema.columns WHERE table_schema IN (SELECT nspname FROM ns)
  UNION ALL SELECT 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(co.oid)
    FROM pg_constraint co JOIN ns ON ns.oid = co.connamespace
  UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname IN (SELECT nspname FROM ns)
  UNION ALL SELECT 'function ' || ns.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')'
    FROM pg_proc p JOIN ns ON ns.oid = p.pronamespace
  UNION ALL SELECT 'type ' || ns.nspname || '.' || t.typname || ' ' || t.typtype::text
    FROM pg_type t JOIN ns ON ns.oid = t.typnamespace
    WHERE t.typtype IN ('e', 'd', 'r', 'm') OR (t.typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c')
  UNION ALL SELECT 'trigger ' || tgrelid::regclass::text || ' ' || tgname FROM pg_trigger WHERE NOT tgisinternal
  UNION ALL SELECT 'extension ' || extname FROM pg_extension
) lines`

func catalog(t *testing.T, url string) string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var out string
	require.NoError(t, conn.QueryRow(t.Context(), catalogQuery).Scan(&out))
	return out
}

// latestVersion is the highest migration number among the embedded files.
func latestVersion(t *testing.T) uint {
	t.Helper()
	files, err := fs.Glob(migrations.FS, "*.up.sql")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var latest uint
	for _, f := range files {
		n, err := strconv.ParseUint(regexp.MustCompile(`^\d+`).FindString(f), 10, 64)
		require.NoError(t, err, f)
		latest = max(latest, uint(n))
	}
	return latest
}

// Every down undoes its up exactly: up, down to zero (the schema is as a
// fresh database's), up again (the schema is as the first up's).
func TestMigrationsUpDownUp(t *testing.T) {
	migrated, _ := pgtest.NewURL(t) // cloned from the template: every up applied
	empty := pgtest.NewEmptyURL(t)

	m, err := postgres.NewMigrator(empty)
	require.NoError(t, err)
	// Opening the migrator makes its bookkeeping table; that is the baseline.
	v, dirty, err := m.Version()
	require.NoError(t, err)
	require.Equal(t, uint(0), v)
	require.False(t, dirty)
	require.NoError(t, m.Close())
	fresh := catalog(t, empty)

	m, err = postgres.NewMigrator(migrated)
	require.NoError(t, err)
	defer func() { require.NoError(t, m.Close()) }()
	v, _, err = m.Version()
	require.NoError(t, err)
	require.Equal(t, latestVersion(t), v)
	up := catalog(t, migrated)
	require.NotEqual(t, fresh, up, "the migrations create nothing?")

	require.NoError(t, m.Down(0))
	v, _, err = m.Version()
	require.NoError(t, err)
	assert.Equal(t, uint(0), v)
	assert.Equal(t, fresh, catalog(t, migrated), "down to zero leaves something behind")

	require.NoError(t, m.Up())
	v, dirty, err = m.Version()
	require.NoError(t, err)
	assert.Equal(t, latestVersion(t), v)
	assert.False(t, dirty)
	assert.Equal(t, up, catalog(t, migrated), "up after down differs from the first up")

	// One step at a time, down and up, lands in the same place.
	for range latestVersion(t) {
		if v, _, _ := m.Version(); v == 0 {
			break
		}
		require.NoError(t, m.Down(1))
	}
	assert.Equal(t, fresh, catalog(t, migrated))
	require.NoError(t, m.Up())
	assert.Equal(t, up, catalog(t, migrated))
}

// TestMigrationsNumberedInOneSequence keeps the files numbered 1, 2, 3 … with
// an up and a down each. golang-migrate never applies a file numbered below a
// database's version, so a gap filled later (or numbering by area) would leave
// that file unapplied on every database already past it.
func TestMigrationsNumberedInOneSequence(t *testing.T) {
	name := regexp.MustCompile(`^(\d{6})_[a-z0-9_]+\.(up|down)\.sql$`)
	files, err := fs.Glob(migrations.FS, "*.sql")
	require.NoError(t, err)
	halves := map[int]map[string]bool{}
	for _, f := range files {
		m := name.FindStringSubmatch(f)
		require.NotNil(t, m, "%s: name migrations NNNNNN_title.up.sql / .down.sql", f)
		v, _ := strconv.Atoi(m[1])
		if halves[v] == nil {
			halves[v] = map[string]bool{}
		}
		halves[v][m[2]] = true
	}
	for v := 1; v <= len(halves); v++ {
		require.Contains(t, halves, v, "migration %06d is missing: number new migrations right after the highest, with no gaps", v)
		assert.True(t, halves[v]["up"] && halves[v]["down"], "migration %06d needs both an up and a down", v)
	}
}
