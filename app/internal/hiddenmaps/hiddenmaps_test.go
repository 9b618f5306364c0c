package hiddenmaps

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/maps"
)

// The shipped file reads, and every hidden map says why and who decided, by
// a map id in its normal form (how every list looks it up).
func TestTheShippedHiddenMapsReadWithTheirReasons(t *testing.T) {
	hidden, err := Load()
	require.NoError(t, err)
	require.NotEmpty(t, hidden, "the file holds the end-to-end example at least")
	for id, h := range hidden {
		assert.Equal(t, maps.NormaliseID(id), id, "map id in its normal form")
		assert.NotEmpty(t, h.Why, "%s says why", id)
		assert.NotEmpty(t, h.Decided, "%s says who decided", id)
	}
}
