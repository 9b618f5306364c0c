package evm

import (
	"regexp"
	"strconv"
	"strings"
)

// targetLogs is how many logs a range of blocks is sized to hold: answers of
// a few MiB, well under every provider's cap (10,000 results is the usual).
const targetLogs = 5_000

// ranges sizes eth_getLogs' block ranges as a read goes: each answer sizes
// the next range by the logs per block it held (at most four times larger
// at once); a refused range shrinks to the provider's suggestion when it
// gives one (Infura's and Alchemy's "Try with this block range [a, b]",
// "exceed maximum block range: 5000"), else to a quarter (an eighth for an
// answer too large, which the node had to build whole), and the span refused
// becomes a ceiling that relaxes after eight answers in a row.
type ranges struct {
	span, most uint64
	ceiling    uint64 // 0: none
	calm       int    // answers since the last refusal
}

func newRanges(first, most uint64) *ranges { return &ranges{span: max(first, 1), most: max(most, 1)} }

// refused shrinks the span after a refusal whose error said msg.
func (g *ranges) refused(msg string, tooLarge bool) {
	s := g.span
	g.ceiling, g.calm = max(s-1, 1), 0
	if hint, ok := suggestedSpan(msg); ok && hint < s {
		g.span = max(hint, 1)
		return
	}
	if tooLarge {
		g.span = max(s/8, 1)
		return
	}
	g.span = max(s/4, 1)
}

// answered sizes the next span after an answer of logs over blocks blocks.
func (g *ranges) answered(blocks uint64, logs int) {
	want := g.span * 4
	if logs > 0 {
		want = min(want, max(blocks*targetLogs/uint64(logs), 1))
	}
	if g.calm++; g.calm >= 8 && g.ceiling > 0 {
		g.ceiling, g.calm = g.ceiling*2, 0
		if g.ceiling >= g.most {
			g.ceiling = 0
		}
	}
	if g.ceiling > 0 {
		want = min(want, g.ceiling)
	}
	g.span = max(min(want, g.most), 1)
}

var (
	hexRange     = regexp.MustCompile(`\[\s*0x([0-9a-fA-F]+)\s*,\s*0x([0-9a-fA-F]+)\s*\]`)
	decimalRange = regexp.MustCompile(`range[^0-9\[]{0,30}?(\d[\d,]*)`)
)

// suggestedSpan reads the range a provider's refusal suggests, if any.
func suggestedSpan(msg string) (uint64, bool) {
	if m := hexRange.FindStringSubmatch(msg); m != nil {
		a, err1 := strconv.ParseUint(m[1], 16, 64)
		b, err2 := strconv.ParseUint(m[2], 16, 64)
		if err1 == nil && err2 == nil && b >= a {
			return b - a + 1, true
		}
	}
	if m := decimalRange.FindStringSubmatch(strings.ToLower(msg)); m != nil {
		if n, err := strconv.ParseUint(strings.ReplaceAll(m[1], ",", ""), 10, 64); err == nil && n > 0 {
			return n, true
		}
	}
	return 0, false
}
