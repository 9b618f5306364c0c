package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/migrations"
)

func latestMigration(t *testing.T) int {
	t.Helper()
	files, err := fs.Glob(migrations.FS, "*.up.sql")
	require.NoError(t, err)
	latest := 0
	for _, f := range files {
		n, err := strconv.Atoi(regexp.MustCompile(`^\d+`).FindString(f))
		require.NoError(t, err)
		latest = max(latest, n)
	}
	return latest
}

// petal migrate, as an operator runs it: up, down to zero, up again, one
// step, force, and refusals naming what is wrong.
func TestMigrateCommand(t *testing.T) {
	t.Setenv("DATABASE_URL", pgtest.NewEmptyURL(t))
	latest := latestMigration(t)
	migrate := func(args ...string) (int, string, string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"migrate"}, args...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	version := func(v int) string { return fmt.Sprintf("version %d\n", v) }

	code, out, errOut := migrate("version")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, version(0), out)

	code, out, errOut = migrate("up")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, version(latest), out)
	assert.Contains(t, errOut, "using DATABASE_URL", "it logs which way the database was found")

	code, out, _ = migrate("up")
	require.Equal(t, 0, code, "nothing pending is fine")
	assert.Equal(t, version(latest), out)

	code, out, errOut = migrate("down", "all")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, version(0), out)

	code, out, errOut = migrate("up")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, version(latest), out)

	code, out, errOut = migrate("down")
	require.Equal(t, 0, code, errOut)
	assert.NotEqual(t, version(latest), out, "down reverts one migration")

	code, out, errOut = migrate("force", strconv.Itoa(latest))
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, version(latest), out)
	code, out, errOut = migrate("down", "all")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, version(0), out)

	for _, bad := range [][]string{{}, {"sideways"}, {"down", "-2"}, {"down", "some"}, {"force"}, {"force", "x"}} {
		code, _, errOut = migrate(bad...)
		assert.Equal(t, 1, code, "%v", bad)
		assert.Contains(t, errOut, "petal migrate:", "%v", bad)
	}
}

func TestUsageAndVersion(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, run(nil, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "petal serve")
	stderr.Reset()
	assert.Equal(t, 2, run([]string{"dance"}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), `unknown command "dance"`)
	assert.Equal(t, 0, run([]string{"version"}, &stdout, &stderr))
	assert.Equal(t, "dev\n", stdout.String())
}
