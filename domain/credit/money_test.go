package credit

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseUSD(t *testing.T) {
	cases := []struct {
		in   string
		want Micros
	}{
		{"3", 3_000_000},
		{"0.50", 500_000},
		{"0.05", 50_000},
		{".5", 500_000},
		{"0.000001", 1},
		{"-1.25", -1_250_000},
		{"1000", 1_000_000_000},
	}
	for _, c := range cases {
		got, err := ParseUSD(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
	}
	for _, bad := range []string{"", "abc", "1.0000001", "1e3", "1.2.3", "+1", "99999999999999999999", "."} {
		_, err := ParseUSD(bad)
		assert.Error(t, err, bad)
	}
}

func TestMicrosJSON(t *testing.T) {
	b, err := json.Marshal(map[string]any{"a": Micros(50_000).USD(), "b": Micros(0).USD(), "c": Micros(3_000_000).USD(), "d": Micros(-1).USD()})
	require.NoError(t, err)
	assert.JSONEq(t, `{"a":0.05,"b":0,"c":3,"d":-0.000001}`, string(b))
	assert.Equal(t, "0.050000", Micros(50_000).String())
}
