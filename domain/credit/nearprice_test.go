package credit

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPriceAtBlock(t *testing.T) {
	block := noon
	q := func(offset time.Duration, usd Micros) *NearQuote {
		return &NearQuote{At: block.Add(offset), USD: usd, Source: "1click"}
	}
	cases := []struct {
		name          string
		before, after *NearQuote
		want          *NearQuote
	}{
		{"nothing read", nil, nil, nil},
		{"the reading before", q(-4*time.Minute, 3_000_000), nil, q(-4*time.Minute, 3_000_000)},
		{"a reading at the block itself counts as before", q(0, 3_000_000), q(time.Minute, 2_000_000), q(0, 3_000_000)},
		{"the nearer reading after, when it is lower", q(-9*time.Minute, 3_000_000), q(time.Minute, 2_900_000), q(time.Minute, 2_900_000)},
		{"never a later, higher one, however near", q(-9*time.Minute, 3_000_000), q(time.Minute, 3_100_000), q(-9*time.Minute, 3_000_000)},
		{"the nearer reading before, though the one after is lower", q(-time.Minute, 3_000_000), q(9*time.Minute, 2_000_000), q(-time.Minute, 3_000_000)},
		{"only a reading after, within ten minutes", nil, q(8*time.Minute, 3_000_000), q(8*time.Minute, 3_000_000)},
		{"a reading before more than twenty minutes old is too old", q(-21*time.Minute, 3_000_000), nil, nil},
		{"a reading after more than ten minutes on is too late", nil, q(11*time.Minute, 3_000_000), nil},
		{"a too old one gives way to one after", q(-21*time.Minute, 1_000_000), q(5*time.Minute, 3_000_000), q(5*time.Minute, 3_000_000)},
		{"a price of nothing is no reading", q(-time.Minute, 0), nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := PriceAtBlock(block, tc.before, tc.after)
			if tc.want == nil {
				assert.False(t, ok)
				return
			}
			assert.True(t, ok)
			assert.Equal(t, *tc.want, got)
		})
	}
}
