package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	leanOnce sync.Once
	leanPath string
	leanErr  error
)

// leanBinary is petal built as it ships (no race detector, whatever GOFLAGS
// the tests run under): the binary whose memory the memory tests sample.
func leanBinary(t testing.TB) string {
	t.Helper()
	leanOnce.Do(func() {
		dir, err := os.MkdirTemp("", "petal-lean-")
		if err != nil {
			leanErr = err
			return
		}
		leanPath = filepath.Join(dir, "petal")
		// -trimpath as deploy/Dockerfile builds: in CI the binary step has
		// compiled these packages already, so this is a link.
		cmd := exec.Command("go", "build", "-trimpath", "-o", leanPath, ".")
		cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			leanErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if leanErr != nil {
		t.Fatal(leanErr)
	}
	return leanPath
}

// peakRSS runs work and returns the process's peak resident memory during it
// (VmHWM, reset through clear_refs first) and its resident memory before.
func peakRSS(t testing.TB, pid int, work func()) (base, peak int64) {
	t.Helper()
	p := strconv.Itoa(pid)
	base = procField(t, p, "VmRSS")
	// Writing 5 resets the peak (VmHWM) to the current resident size.
	if err := os.WriteFile("/proc/"+p+"/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak: %v", err)
	}
	work()
	return base, procField(t, p, "VmHWM")
}

func procField(t testing.TB, pid, field string) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%s/status", field, pid)
	return 0
}

// settle waits a moment so a fresh process's start is not counted.
func settle() { time.Sleep(time.Second) }
