package main

import (
	"log/slog"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Where a container's memory limit is read: cgroup v2, then v1.
var cgroupMemoryFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// setMemoryLimit gives the Go runtime a soft memory limit below the
// container's, so the collector works harder as memory nears the limit
// instead of the kernel killing the pod at it. GOMEMLIMIT, when set, wins
// (the runtime has read it already). The limit left is 7/8 of the
// container's: room for what the runtime does not count (the binary, and
// memory freed but not yet returned). It returns the limit set, 0 for none.
func setMemoryLimit(log *slog.Logger, getenv func(string) string, readFile func(string) ([]byte, error)) int64 {
	if v := getenv("GOMEMLIMIT"); v != "" {
		log.Info("memory limit from GOMEMLIMIT", "gomemlimit", v)
		return 0
	}
	for _, path := range cgroupMemoryFiles {
		b, err := readFile(path)
		if err != nil {
			continue
		}
		container, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		// "max" (v2) or a number near MaxInt64 (v1) means no limit.
		if err != nil || container <= 0 || container >= 1<<60 {
			return 0
		}
		limit := container - container/8
		debug.SetMemoryLimit(limit)
		log.Info("memory limit from the container's", "container_bytes", container, "gomemlimit_bytes", limit, "from", path)
		return limit
	}
	return 0
}

// setMemoryLimitFromHost is setMemoryLimit on this process's environment and files.
func setMemoryLimitFromHost(log *slog.Logger) { setMemoryLimit(log, os.Getenv, os.ReadFile) }
