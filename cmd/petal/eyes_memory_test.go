package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

// Two people at once read the hostile page (80 nested lists around a
// <pre> of 220,000 lines, 440 KB, inside every cap) through a real petal
// serve: each read is answered within read_page's 15 s, and the process's
// peak memory stays under 300 MiB (each read took 55-70 s and 602-645 MiB).
func TestReadingAPageOfDeepListsIsBoundedInTimeAndMemory(t *testing.T) {
	var page strings.Builder
	for range 80 {
		page.WriteString("<ul><li>")
	}
	page.WriteString("<pre>" + strings.Repeat("x\n", 220_000) + "</pre>")
	for range 80 {
		page.WriteString("</li></ul>")
	}
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page.String()))
	}))
	defer pages.Close()
	p := startBinary(t, leanBinary(t), pgtest.New(t), map[string]string{
		"PETAL_READ_PAGE_LOOPBACK": "1", "PETAL_NEAR_RPC_MAINNET": "http://127.0.0.1:1", "PETAL_NEAR_RPC_TESTNET": "http://127.0.0.1:1",
		"PETAL_ONECLICK_URL": "http://127.0.0.1:1", "PETAL_MAP_SYNC_MIN": "0", "PETAL_MAP_MARKS_MIN": "0",
	})
	settle()
	type read struct {
		code  int
		took  time.Duration
		chars int
	}
	reads := make([]read, 2)
	base, peak := peakRSS(t, p.cmd.Process.Pid, func() {
		var wg sync.WaitGroup
		for i := range reads {
			wg.Go(func() {
				b := p.browser(t)
				started := time.Now()
				// Two pages, so the second read is not the first one's cache.
				res, body := b.do(t, http.MethodGet, "/api/v1/read-page?url="+url.QueryEscape(pages.URL+"/lists/"+string(rune('a'+i))), "")
				reads[i] = read{res.StatusCode, time.Since(started), len(body)}
			})
		}
		wg.Wait()
	})
	t.Logf("two reads at once: %+v; %d MiB before, peak %d MiB", reads, base>>20, peak>>20)
	for _, r := range reads {
		assert.Equal(t, http.StatusOK, r.code)
		assert.Less(t, r.took, 16*time.Second, "answered within read_page's 15 s")
	}
	assert.Less(t, peak, int64(300<<20), "peak resident memory")
}
