package postgres

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUnreachableAncestor(t *testing.T) {
	base := t.TempDir()
	require.NoError(t, os.Chmod(base, 0o755))
	require.NoError(t, os.Chmod(filepath.Dir(base), 0o755))
	closed := filepath.Join(base, "closed")
	inner := filepath.Join(closed, "data")
	require.NoError(t, os.MkdirAll(inner, 0o755))
	require.NoError(t, os.Chmod(closed, 0o700))
	t.Cleanup(func() { _ = os.Chmod(closed, 0o755) })

	someoneElse := &syscall.Credential{Uid: uint32(os.Getuid() + 4242), Gid: uint32(os.Getgid() + 4242)}
	assert.Equal(t, closed, unreachableAncestor(inner, someoneElse))
	assert.Equal(t, "", unreachableAncestor(base, someoneElse))
	owner := &syscall.Credential{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())}
	assert.Equal(t, "", unreachableAncestor(inner, owner), "the owner may enter its own 0700 folder")
}

// As root, a data folder the cluster's user cannot enter (under a 0700
// folder, like /root) moves to the fallback folder instead of failing in
// initdb. As anyone else, the folder is used as asked.
func TestPrivateClusterFindsAFolderItsUserCanEnter(t *testing.T) {
	base := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(base), 0o755))
	require.NoError(t, os.Chmod(base, 0o700))
	asked := filepath.Join(base, "project", ".petal")
	fallback := filepath.Join(t.TempDir(), "fallback")
	require.NoError(t, os.Chmod(filepath.Dir(fallback), 0o755))
	saved := rootFallbackDir
	rootFallbackDir = fallback
	t.Cleanup(func() { rootFallbackDir = saved })

	bin, err := findPostgresBin(nil)
	require.NoError(t, err)
	cluster, err := StartPrivateCluster(t.Context(), bin, asked, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cluster.Stop() })
	if os.Geteuid() == 0 {
		assert.True(t, strings.HasPrefix(cluster.DataDir, fallback+string(filepath.Separator)), "%s", cluster.DataDir)
	} else {
		assert.Equal(t, filepath.Join(asked, "pg"), cluster.DataDir)
	}
	require.NoError(t, cluster.Stop())
}
