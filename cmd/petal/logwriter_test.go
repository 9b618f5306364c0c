package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lines written at once go out together, each whole and in its writer's
// order; a line written alone shows within a few flush periods; Close writes
// what is kept, and a line past the buffer's cap is written at once.
func TestCoalescingWriterKeepsEveryLine(t *testing.T) {
	t.Parallel()
	out := &lockedBuffer{}
	w := newCoalescingWriter(out)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				_, _ = fmt.Fprintf(w, "g%d line %d\n", g, i)
			}
		})
	}
	wg.Wait()
	require.NoError(t, w.Close())
	next := map[string]int{}
	lines := 0
	for line := range strings.Lines(out.String()) {
		var g string
		var i int
		_, err := fmt.Sscanf(line, "%s line %d\n", &g, &i)
		require.NoError(t, err, "a whole line: %q", line)
		assert.Equal(t, next[g], i, "%s's lines in order", g)
		next[g] = i + 1
		lines++
	}
	assert.Equal(t, 8*500, lines)
	assert.Less(t, w.flushes.Load(), int64(8*500), "lines went out together")

	out = &lockedBuffer{}
	w = newCoalescingWriter(out)
	_, _ = w.Write([]byte("alone\n"))
	assert.Eventually(t, func() bool { return out.String() == "alone\n" }, 5*time.Second, time.Millisecond, "written without Close")
	big := bytes.Repeat([]byte("x"), logBufferCap)
	_, _ = w.Write(big)
	assert.Equal(t, len("alone\n")+logBufferCap, len(out.String()), "past the cap, at once")
	require.NoError(t, w.Close())
	_, _ = w.Write([]byte("after\n"))
	assert.True(t, strings.HasSuffix(out.String(), "after\n"), "after Close, straight through")
}
