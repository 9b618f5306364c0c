package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/blobstore"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/snapshotsapp"
)

// With PETAL_BLOB_REDIRECT on an S3 store (gofakes3, S3's REST protocol on
// loopback, through go-cloud and the AWS SDK), a body's gzip-taking reader
// is sent to the store's signed URL, which serves the stored gzip with the
// route's headers; a reader that takes no gzip is still served by petal.
func TestSnapshotBodiesRedirectToTheS3StoresSignedURL(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "petal-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "petal-test-secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	backend := s3mem.New()
	s3 := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(s3.Close)
	require.NoError(t, backend.CreateBucket("petal-bodies"))
	q := url.Values{"endpoint": {s3.URL}, "region": {"us-east-1"}, "use_path_style": {"true"}}
	p := startPetal(t, map[string]string{"PETAL_BLOB_URL": "s3://petal-bodies?" + q.Encode(), "PETAL_BLOB_REDIRECT": "on"})
	sh := snapshotsapp.ShippedSnapshots()[0]
	stored := storedBody(t, p, sh.SHA256)
	var inRow int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM snapshots WHERE body_gzip IS NOT NULL`).Scan(&inRow))
	assert.Zero(t, inRow, "the shipped readings' bodies went to the S3 store")

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, p.URL+"/api/v1/snapshots/"+sh.SHA256, nil)
	require.NoError(t, err)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := noFollow.Do(req)
	require.NoError(t, err)
	_ = res.Body.Close()
	require.Equal(t, http.StatusFound, res.StatusCode)
	link := res.Header.Get("Location")
	assert.True(t, strings.HasPrefix(link, s3.URL+"/petal-bodies/"), link)
	assert.Contains(t, link, "X-Amz-Signature=")
	assert.Equal(t, "public, max-age=300", res.Header.Get("Cache-Control"), "kept less than the link lives")
	assert.NotEmpty(t, res.Header.Get("Petal-Origin"))

	// Followed, as a browser would: the stored gzip, with its headers.
	res, body := p.do(t, http.MethodGet, "/api/v1/snapshots/"+sh.SHA256, "", "Accept-Encoding", "gzip")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, stored, []byte(body))
	assert.Equal(t, "gzip", res.Header.Get("Content-Encoding"))
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	assert.Equal(t, "public, max-age=31536000, immutable", res.Header.Get("Cache-Control"))

	// No gzip taken: petal inflates it itself, no redirect.
	res, body = p.do(t, http.MethodGet, "/api/v1/snapshots/"+sh.SHA256, "", "Accept-Encoding", "identity")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Empty(t, res.Header.Get("Content-Encoding"))
	assert.True(t, strings.HasPrefix(body, "{"), "the canonical JSON")

	// An unknown name is the route's 404, not a redirect.
	res, _ = p.do(t, http.MethodGet, "/api/v1/snapshots/"+strings.Repeat("ab", 32), "", "Accept-Encoding", "gzip")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
}

// A store that signs no URLs (a file:// folder), or none at all, refuses
// PETAL_BLOB_REDIRECT at start with a message saying why.
func TestBlobRedirectIsRefusedWhereTheStoreSignsNothing(t *testing.T) {
	t.Parallel()
	files, err := blobstore.Open(t.Context(), "file://"+filepath.ToSlash(t.TempDir())+"?create_dir=true")
	require.NoError(t, err)
	t.Cleanup(func() { _ = files.Close() })
	on := config.Config{BlobRedirect: true}
	_, err = newSnapshotLinks(t.Context(), on, nil, files)
	require.ErrorContains(t, err, "PETAL_BLOB_REDIRECT is on, and the blob store (file://) can't sign a URL")
	_, err = newSnapshotLinks(t.Context(), on, nil, nil)
	require.ErrorContains(t, err, "PETAL_BLOB_URL off")
	links, err := newSnapshotLinks(t.Context(), config.Config{}, nil, files)
	require.NoError(t, err)
	assert.Nil(t, links, "off: petal serves every body itself")
}
