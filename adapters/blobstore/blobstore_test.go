package blobstore_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/blobstore"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func open(t *testing.T, u string) ports.Blobs {
	t.Helper()
	s, err := blobstore.Open(t.Context(), u)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestBlobsContractOnFiles(t *testing.T) {
	porttest.BlobsContract(t, func(t *testing.T) ports.Blobs {
		return open(t, "file://"+filepath.ToSlash(t.TempDir())+"?create_dir=true")
	})
}

func TestBlobsContractInMemory(t *testing.T) {
	porttest.BlobsContract(t, func(t *testing.T) ports.Blobs { return open(t, "mem://") })
}

// Against a real S3-compatible server in the test process (gofakes3, which
// speaks S3's REST protocol over HTTP), through go-cloud's s3blob driver and
// the AWS SDK, as production would talk to S3.
func TestBlobsContractOnAnS3Server(t *testing.T) {
	backend, srv := s3Server(t)
	n := 0
	porttest.BlobsContract(t, func(t *testing.T) ports.Blobs {
		n++
		bucket := "petal-" + string(rune('a'+n))
		require.NoError(t, backend.CreateBucket(bucket))
		q := url.Values{"endpoint": {srv.URL}, "region": {"us-east-1"}, "use_path_style": {"true"}}
		return open(t, "s3://"+bucket+"?"+q.Encode())
	})
}

// s3Server is gofakes3 on loopback, with the AWS SDK's credentials set.
func s3Server(t *testing.T) (*s3mem.Backend, *httptest.Server) {
	t.Setenv("AWS_ACCESS_KEY_ID", "petal-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "petal-test-secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	return backend, srv
}

// An S3 store signs a GET that serves the body with the headers asked;
// a folder and memory sign nothing, and say so.
func TestSignedURLs(t *testing.T) {
	backend, srv := s3Server(t)
	require.NoError(t, backend.CreateBucket("petal-links"))
	q := url.Values{"endpoint": {srv.URL}, "region": {"us-east-1"}, "use_path_style": {"true"}}
	s, err := blobstore.Open(t.Context(), "s3://petal-links?"+q.Encode())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	body := []byte("a gzipped body, say")
	sum := sha256.Sum256(body)
	key := hex.EncodeToString(sum[:])
	require.NoError(t, s.Put(t.Context(), key, body))
	as := ports.ServedAs{ContentType: "application/json", ContentEncoding: "gzip", CacheControl: "public, max-age=31536000, immutable"}
	link, err := s.SignedURL(t.Context(), key, as, time.Minute)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(link, srv.URL+"/petal-links/"), link)
	assert.Contains(t, link, "X-Amz-Signature=")
	// Read as a browser would: raw, the encoding left to the reader.
	res, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Get(link)
	require.NoError(t, err)
	defer func() { _ = res.Body.Close() }()
	got, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, body, got)
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
	assert.Equal(t, "gzip", res.Header.Get("Content-Encoding"))
	assert.Equal(t, as.CacheControl, res.Header.Get("Cache-Control"))

	_, err = s.SignedURL(t.Context(), "not a key", as, time.Minute)
	require.Error(t, err)
	for _, u := range []string{"file://" + filepath.ToSlash(t.TempDir()) + "?create_dir=true", "mem://"} {
		s, err := blobstore.Open(t.Context(), u)
		require.NoError(t, err)
		_, err = s.SignedURL(t.Context(), key, as, time.Minute)
		assert.ErrorIs(t, err, ports.ErrNoLinks, u)
		_ = s.Close()
	}
}
