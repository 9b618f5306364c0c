package main

import (
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMemoryLimitComesFromTheContainer(t *testing.T) {
	t.Parallel()
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if v, ok := m[p]; ok {
				return []byte(v), nil
			}
			return nil, os.ErrNotExist
		}
	}
	noEnv := func(string) string { return "" }

	assert.Equal(t, int64(448<<20), setMemoryLimit(log, noEnv, files(map[string]string{"/sys/fs/cgroup/memory.max": "536870912\n"})), "cgroup v2, 512 MiB")
	assert.Equal(t, int64(448<<20), debug.SetMemoryLimit(-1), "and the runtime has it")
	assert.Equal(t, int64(448<<20), setMemoryLimit(log, noEnv, files(map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912"})), "cgroup v1")
	assert.Zero(t, setMemoryLimit(log, noEnv, files(map[string]string{"/sys/fs/cgroup/memory.max": "max\n"})), "no limit in v2")
	assert.Zero(t, setMemoryLimit(log, noEnv, files(map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712"})), "no limit in v1")
	assert.Zero(t, setMemoryLimit(log, noEnv, files(nil)), "no cgroup at all")
	withEnv := func(k string) string {
		if k == "GOMEMLIMIT" {
			return "300MiB"
		}
		return ""
	}
	assert.Zero(t, setMemoryLimit(log, withEnv, files(map[string]string{"/sys/fs/cgroup/memory.max": "536870912"})), "GOMEMLIMIT wins")
}
