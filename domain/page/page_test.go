package page_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/page"
)

func TestCursorRoundTripsAndRefusesOthers(t *testing.T) {
	valid := func(k string) bool { return strings.HasPrefix(k, "run_") }
	at := time.Date(2026, 11, 30, 21, 0, 0, 123456789, time.UTC)
	c := page.Cursor{At: at, Key: "run_1"}
	back, err := page.ParseCursor(c.String(), valid)
	require.NoError(t, err)
	assert.Equal(t, page.Cursor{At: at.Truncate(time.Microsecond), Key: "run_1"}, back, "kept to the microsecond, as PostgreSQL keeps time")

	start, err := page.ParseCursor("", valid)
	require.NoError(t, err)
	assert.True(t, start.IsStart())
	assert.Empty(t, page.Cursor{}.String())

	for _, bad := range []string{"%%%", strings.Repeat("A", 401), page.Cursor{At: at, Key: "exp_1"}.String(), "MS4x"} {
		_, err := page.ParseCursor(bad, valid)
		assert.True(t, errs.Is(err, errs.BadInput), "%q: %v", bad, err)
	}
}

func TestLimit(t *testing.T) {
	n, err := page.Limit(0, 50, 200)
	require.NoError(t, err)
	assert.Equal(t, 50, n)
	n, err = page.Limit(200, 50, 200)
	require.NoError(t, err)
	assert.Equal(t, 200, n)
	for _, bad := range []int{-1, 201} {
		_, err := page.Limit(bad, 50, 200)
		assert.True(t, errs.Is(err, errs.BadInput))
	}
}
