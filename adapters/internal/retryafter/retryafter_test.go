package retryafter

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestParse(t *testing.T) {
	d, ok := Parse(" 7 ")
	assert.True(t, ok)
	assert.Equal(t, 7*time.Second, d)

	d, ok = Parse(time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat))
	assert.True(t, ok)
	assert.InDelta(t, float64(30*time.Second), float64(d), float64(2*time.Second))

	d, ok = Parse(time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat))
	assert.True(t, ok, "a date passed asks for no wait")
	assert.Zero(t, d)

	for _, bad := range []string{"", "-1", "soon"} {
		_, ok = Parse(bad)
		assert.False(t, ok, "%q", bad)
	}
}
