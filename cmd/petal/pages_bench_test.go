package main

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/specs"
)

// BenchmarkDraftPage: the /draft page of the shipped reading's flower (the
// drawing, its interpretation and the figures, in the page's template)
// beside its floor, the same drawing through POST /api/v1/render as JSON,
// from one real `petal serve`:
//
//	go test ./cmd/petal -run '^$' -bench DraftPage -benchtime 200x
func BenchmarkDraftPage(b *testing.B) {
	db := pgtest.New(b)
	p := startProcess(b, db, map[string]string{"PETAL_TOOL_CALLS_PER_MIN": "1000000000"})
	sh := snapshotsapp.ShippedSnapshots()[0]
	spec, err := specs.Propose(&sh.Snapshot, sh.SHA256, "")
	require.NoError(b, err)
	_, canonical, err := specs.Name(spec)
	require.NoError(b, err)
	client := &http.Client{}
	get := func(b *testing.B, req func() (*http.Request, error)) {
		r, err := req()
		require.NoError(b, err)
		res, err := client.Do(r)
		require.NoError(b, err)
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d", r.URL.Path, res.StatusCode)
		}
		b.SetBytes(n)
	}
	b.Run("page", func(b *testing.B) {
		addr := p.URL + "/draft?spec=" + url.QueryEscape(string(canonical))
		for b.Loop() {
			get(b, func() (*http.Request, error) { return http.NewRequest(http.MethodGet, addr, nil) })
		}
	})
	b.Run("render-api", func(b *testing.B) {
		body := `{"spec":` + string(canonical) + `}`
		for b.Loop() {
			get(b, func() (*http.Request, error) {
				r, err := http.NewRequest(http.MethodPost, p.URL+"/api/v1/render", strings.NewReader(body))
				if err == nil {
					r.Header.Set("Content-Type", "application/json")
				}
				return r, err
			})
		}
	})
}
