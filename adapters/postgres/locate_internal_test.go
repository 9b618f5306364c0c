package postgres

import (
	"os"
	"path/filepath"
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
