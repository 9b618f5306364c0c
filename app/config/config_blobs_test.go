package config_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bodies go to a folder under the data dir only where petal runs its own
// cluster: on a shared database a folder of one machine would hide them from
// replicas on another, so there they stay in PostgreSQL unless told.
func TestBlobStoreDefaultsAndRefusals(t *testing.T) {
	c, err := load(map[string]string{"PETAL_DATA_DIR": "/srv/petal"})
	require.NoError(t, err)
	u, err := c.BlobsFor(true)
	require.NoError(t, err)
	assert.Equal(t, "file://"+filepath.ToSlash("/srv/petal/blobs")+"?create_dir=true", u)
	u, err = c.BlobsFor(false)
	require.NoError(t, err)
	assert.Equal(t, "off", u)

	c, err = load(map[string]string{"PETAL_BLOB_URL": "s3://bodies?region=eu-west-1"})
	require.NoError(t, err)
	u, err = c.BlobsFor(true)
	require.NoError(t, err)
	assert.Equal(t, "s3://bodies?region=eu-west-1", u, "a URL set is used wherever the database is")

	for _, bad := range []string{"mem://", "no scheme", "://x"} {
		_, err := load(map[string]string{"PETAL_BLOB_URL": bad})
		assert.ErrorContains(t, err, "PETAL_BLOB_URL", bad)
	}
}
