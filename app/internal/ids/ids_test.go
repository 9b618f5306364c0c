package ids_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"regexp"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/app/internal/ids"
)

// An id is its prefix and 16 bytes of the reader in hex: the bytes read are
// the id, so two ids from fresh randomness differ.
func TestNewIDIsItsPrefixAndSixteenBytesInHex(t *testing.T) {
	seed := bytes.Repeat([]byte{0xab}, 16)
	id, err := ids.NewID(bytes.NewReader(seed), "hold_")
	require.NoError(t, err)
	assert.Equal(t, "hold_"+"abababababababababababababababab", id)

	a, err := ids.NewID(rand.Reader, "wal_")
	require.NoError(t, err)
	b, err := ids.NewID(rand.Reader, "wal_")
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`^wal_[0-9a-f]{32}$`), a)
	assert.NotEqual(t, a, b)
}

// A reader that runs dry or fails gives no id, never a short or zeroed one.
func TestNoIDFromRandomnessThatFails(t *testing.T) {
	id, err := ids.NewID(bytes.NewReader(make([]byte, 15)), "hold_")
	require.Error(t, err, "15 bytes are too few")
	assert.Empty(t, id)

	boom := errors.New("entropy gone")
	id, err = ids.NewID(iotest.ErrReader(boom), "hold_")
	require.ErrorIs(t, err, boom)
	assert.Empty(t, id)

	h, err := ids.RandomHex(iotest.ErrReader(boom), 12)
	require.ErrorIs(t, err, boom)
	assert.Empty(t, h)
}

// RandomHex is n bytes in 2n hex digits, read in full even from a reader
// that hands out one byte at a time.
func TestRandomHexReadsAllItsBytes(t *testing.T) {
	h, err := ids.RandomHex(iotest.OneByteReader(bytes.NewReader([]byte{0, 1, 0xfe, 0xff})), 4)
	require.NoError(t, err)
	assert.Equal(t, "0001feff", h)

	h, err = ids.RandomHex(rand.Reader, 12)
	require.NoError(t, err)
	assert.Len(t, h, 24)
}
