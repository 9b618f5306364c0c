package blobstore_test

import (
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
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
	t.Setenv("AWS_ACCESS_KEY_ID", "petal-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "petal-test-secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	n := 0
	porttest.BlobsContract(t, func(t *testing.T) ports.Blobs {
		n++
		bucket := "petal-" + string(rune('a'+n))
		require.NoError(t, backend.CreateBucket(bucket))
		q := url.Values{"endpoint": {srv.URL}, "region": {"us-east-1"}, "use_path_style": {"true"}}
		return open(t, "s3://"+bucket+"?"+q.Encode())
	})
}
