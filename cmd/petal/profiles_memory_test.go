package main

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/domain/profiles"
	"github.com/petal-near/petal/domain/profiles/picturetest"
)

// Three people at once send an avatar and a banner of 4,096 × 4,096 px,
// 16-bit RGBA, each ~130 KB on the wire and 128 MiB decoded (256 MiB
// interlaced): each is refused from its header with its cost named, and the
// process's peak memory stays under 300 MiB (it went past 550 MiB, 677 MiB
// interlaced, when only the sides were bounded). Then the dearest pictures it
// keeps, 8-bit 4,096 × 4,096, three people at once, decode within the
// process's decode budget, also under 300 MiB.
func TestPicturesAreBoundedByWhatDecodingThemTakes(t *testing.T) {
	rpc := nearrpctest.New(t)
	p := startBinary(t, leanBinary(t), pgtest.New(t), map[string]string{
		"PETAL_API": "https://petal.example", "PETAL_NEAR_RPC_MAINNET": rpc.URL, "PETAL_NEAR_RPC_TESTNET": rpc.URL,
		"PETAL_ONECLICK_URL": "http://127.0.0.1:1", "PETAL_MAP_SYNC_MIN": "0", "PETAL_MAP_MARKS_MIN": "0",
	})
	people := make([]*signedIn, 3)
	for i := range people {
		people[i] = signInAs(t, p.testPetal, rpc, []string{"ann.testnet", "ben.testnet", "cat.testnet"}[i])
	}
	type answer struct {
		code int
		body string
	}
	putAll := func(avatar, banner []byte) []answer {
		body := profileBody(t, map[string]any{"name": "x", "avatar": dataURL(profiles.PNG, avatar), "banner": dataURL(profiles.PNG, banner)})
		answers := make([]answer, len(people))
		var wg sync.WaitGroup
		for i, who := range people {
			wg.Go(func() {
				res, out := who.do(t, http.MethodPut, "/api/v1/me/profile", body)
				answers[i] = answer{res.StatusCode, out}
			})
		}
		wg.Wait()
		return answers
	}
	for _, interlaced := range []bool{false, true} {
		avatar, banner := picturetest.RGBA(4096, 4096, 16, interlaced), picturetest.RGBA(4096, 4095, 16, interlaced)
		settle()
		var answers []answer
		base, peak := peakRSS(t, p.cmd.Process.Pid, func() { answers = putAll(avatar, banner) })
		t.Logf("16-bit, interlaced %v, %d + %d bytes, three at once: %d MiB before, peak %d MiB", interlaced, len(avatar), len(banner), base>>20, peak>>20)
		for _, a := range answers {
			var e struct {
				Error struct{ Code, Message string }
			}
			require.Equal(t, http.StatusBadRequest, a.code, a.body)
			require.NoError(t, json.Unmarshal([]byte(a.body), &e), a.body)
			assert.Equal(t, "bad_input", e.Error.Code)
			want := "/avatar: the picture takes 128 MiB to decode (4096 × 4096 px, 16-bit RGBA)"
			if interlaced {
				want = "/avatar: the picture takes 256 MiB to decode (4096 × 4096 px, 16-bit RGBA, interlaced)"
			}
			assert.Contains(t, e.Error.Message, want)
			assert.Contains(t, e.Error.Message, "at most 65 MiB")
		}
		assert.Less(t, peak, int64(300<<20), "peak resident memory")
	}
	settle()
	var answers []answer
	avatar, banner := picturetest.RGBA(4096, 4096, 8, false), picturetest.RGBA(4096, 4095, 8, false)
	base, peak := peakRSS(t, p.cmd.Process.Pid, func() { answers = putAll(avatar, banner) })
	t.Logf("8-bit (kept), three at once: %d MiB before, peak %d MiB", base>>20, peak>>20)
	for _, a := range answers {
		assert.Equal(t, http.StatusOK, a.code, a.body)
	}
	assert.Less(t, peak, int64(300<<20), "peak resident memory")
}
