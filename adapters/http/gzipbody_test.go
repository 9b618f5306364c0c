package httpapi

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/errs"
)

// gzipOfZeros compresses n bytes of zeros, the classic bomb shape.
func gzipOfZeros(t testing.TB, n int) []byte {
	t.Helper()
	return gzipOfRepeats(t, "", 0, n)
}

// gzipOfRepeats compresses prefix and then n bytes of b.
func gzipOfRepeats(t testing.TB, prefix string, b byte, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write([]byte(prefix))
	require.NoError(t, err)
	chunk := bytes.Repeat([]byte{b}, 1<<20)
	for left := n; left > 0; left -= len(chunk) {
		_, err := zw.Write(chunk[:min(left, len(chunk))])
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

var (
	bombOnce sync.Once
	bomb     []byte
)

// gzipBomb is a JSON string of 256 MiB in about a quarter of a MiB: well
// under the 2 MiB wire limit, eight times the 32 MiB inflated limit. It starts
// as valid JSON, so a decoder reads on until a cap stops it.
func gzipBomb(t testing.TB) []byte {
	bombOnce.Do(func() { bomb = gzipOfRepeats(t, `{"text":"`, 'x', 256<<20) })
	return bomb
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestGzipBodyReaderStopsABombAtTheCap(t *testing.T) {
	wire := gzipBomb(t)
	require.Less(t, len(wire), PostedReadingWireLimit)
	src := &countingReader{r: bytes.NewReader(wire)}
	body, err := NewGzipBodyReader(src, PostedReadingInflatedLimit)
	require.NoError(t, err)
	inflated, err := io.Copy(io.Discard, body)
	var tooBig *BodyTooLargeError
	require.ErrorAs(t, err, &tooBig)
	assert.Equal(t, "32 MiB inflated", tooBig.Limit)
	assert.Equal(t, int64(PostedReadingInflatedLimit), inflated, "yields exactly the cap, then fails")
	// It stopped reading the wire near the cap instead of inflating it all:
	// the whole stream inflates to 8× the cap.
	assert.Less(t, src.n, int64(len(wire))/4, "read %d of %d compressed bytes", src.n, len(wire))
	require.NoError(t, body.Close())
}

func TestGzipBodyReaderPassesABodyAtTheCap(t *testing.T) {
	const limit = 1 << 20
	for _, size := range []int{0, 1, limit - 1, limit} {
		body, err := NewGzipBodyReader(bytes.NewReader(gzipOfZeros(t, size)), limit)
		require.NoError(t, err)
		n, err := io.Copy(io.Discard, body)
		require.NoError(t, err, "size %d", size)
		assert.Equal(t, int64(size), n)
	}
	body, err := NewGzipBodyReader(bytes.NewReader(gzipOfZeros(t, limit+1)), limit)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, body)
	var tooBig *BodyTooLargeError
	require.ErrorAs(t, err, &tooBig)
}

func TestGzipBodyReaderRefusesWhatIsNotGzip(t *testing.T) {
	_, err := NewGzipBodyReader(bytes.NewReader([]byte(`{"a":1}`)), 1<<20)
	assert.True(t, errs.Is(err, errs.BadInput), "%v", err)

	whole := gzipOfZeros(t, 1<<16)
	body, err := NewGzipBodyReader(bytes.NewReader(whole[:len(whole)/2]), 1<<20)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, body)
	assert.True(t, errs.Is(err, errs.BadInput), "a cut stream is bad input: %v", err)
	assert.False(t, errors.Is(err, io.EOF))
}
