package evm

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestProvidersSuggestedRangesAreRead(t *testing.T) {
	for msg, want := range map[string]uint64{
		"query returned more than 10000 results. Try with this block range [0x1E8480, 0x1E8C4F].":                  0x1E8C4F - 0x1E8480 + 1,
		"Log response size exceeded. ... this block range should work: [0x10, 0x1f]":                               16,
		"exceed maximum block range: 5000":                                                                         5000,
		"eth_getLogs is limited to a 10,000 range":                                                                 0,
		"invalid block range params: block range is too wide; the max allowed range is 1,000 blocks (got 100,000)": 1000,
	} {
		got, ok := suggestedSpan(msg)
		assert.Equal(t, want > 0, ok, msg)
		assert.Equal(t, want, got, msg)
	}
}

func TestRangesFollowTheLogsPerBlock(t *testing.T) {
	g := newRanges(2000, 1_000_000)
	g.answered(2000, 0)
	assert.Equal(t, uint64(8000), g.span, "an empty answer grows the range fourfold")
	g.answered(8000, 40_000)
	assert.Equal(t, uint64(1000), g.span, "5 logs a block: 1,000 blocks hold 5,000")
	g.refused("query returned more than 10000 results", false)
	assert.Equal(t, uint64(250), g.span, "refused without a hint: a quarter")
	g.answered(250, 0)
	assert.Equal(t, uint64(999), g.span, "never past a range refused, for a while")
	for range 8 {
		g.answered(g.span, 0)
	}
	assert.Greater(t, g.span, uint64(999), "the ceiling relaxes after eight answers")
	g.refused("", true)
	assert.Equal(t, max(g.ceiling+1, 8)/8, g.span, "an answer too large: an eighth")
	g.refused("exceed maximum block range: 5", false)
	assert.Equal(t, uint64(5), g.span)
	g = newRanges(1, 1)
	g.refused("", false)
	assert.Equal(t, uint64(1), g.span)
}
