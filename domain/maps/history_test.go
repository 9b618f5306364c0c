package maps

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/snapshots"
)

func frac(num, den int64) snapshots.Fraction {
	return snapshots.NewFraction(big.NewInt(num), big.NewInt(den))
}

// A map with three readings of its members a month apart, and one of its
// votes between them: oldest first, each reader's previous beside it.
func TestHistoryOldestFirstWithItsFigures(t *testing.T) {
	one, two := 1, 2
	rs := map[string]Reading{
		sha('1'): {Snapshot: sha('1'), Network: "near-dao-members", Title: "Members", AsOf: t0, Count: 4,
			Headline: &Headline{Count: 4, Top1Share: frac(1, 4), Nakamoto: &two, Gini: frac(0, 1)}},
		sha('2'): {Snapshot: sha('2'), Network: "near-dao-members", Title: "Members", AsOf: t0.Add(30 * 24 * time.Hour), Count: 5,
			Headline: &Headline{Count: 5, Top1Share: frac(3, 5), Nakamoto: &one, Gini: frac(2, 5)}},
		sha('3'): {Snapshot: sha('3'), Network: "near-dao-proposals", Title: "Votes", AsOf: t0.Add(40 * 24 * time.Hour), Count: 2},
		sha('4'): {Snapshot: sha('4'), Network: "near-dao-members", Title: "Members", AsOf: t0.Add(60 * 24 * time.Hour), Count: 2,
			Headline: &Headline{Count: 2, Top1Share: frac(1, 2), Nakamoto: &two, Gini: frac(0, 1)}},
	}
	var ds []Drawing
	for i, c := range []byte("1234") {
		ds = append(ds, Drawing{Flower: fmt.Sprint("f", i), Spec: sha(c + 'a' - '1'), Snapshot: sha(c), Map: dao, MadeBy: "alice.near", MadeAt: t0.Add(time.Duration(i) * time.Hour)})
	}
	x := Build(ds, rs, nil, t0)
	points, ok := x.History(dao)
	require.True(t, ok)
	b, err := json.Marshal(points)
	require.NoError(t, err)
	s1, s2 := sha('1'), sha('2')
	assert.JSONEq(t, `[
	 {"snapshot":"`+s1+`","as_of":"2026-11-01T12:00:00Z","network":"near-dao-members","title":"Members","count":4,"top1_share":0.25,"nakamoto":2,"gini":0,"previous":null},
	 {"snapshot":"`+s2+`","as_of":"2026-12-01T12:00:00Z","network":"near-dao-members","title":"Members","count":5,"top1_share":0.6,"nakamoto":1,"gini":0.4,"previous":"`+s1+`"},
	 {"snapshot":"`+sha('3')+`","as_of":"2026-12-11T12:00:00Z","network":"near-dao-proposals","title":"Votes","count":2,"top1_share":null,"nakamoto":null,"gini":null,"previous":null},
	 {"snapshot":"`+sha('4')+`","as_of":"2026-12-31T12:00:00Z","network":"near-dao-members","title":"Members","count":2,"top1_share":0.5,"nakamoto":2,"gini":0,"previous":"`+s2+`"}]`, string(b))

	_, ok = x.History("near:mainnet:nobody.near")
	assert.False(t, ok)

	// The chart draws the members' three readings (the newest reading's reader)
	// with every value written as text, and says what it shows.
	svg := HistoryChart(points)
	for _, want := range []string{`role="img"`, "<title id=\"history-title\">near-dao-members over time</title>",
		">0.25<", ">0.6<", ">0.5<", ">0.4<", "1 Nov 2026", "31 Dec 2026", "1 Dec 2026: top account 60.0%, Gini 0.4", `font-size="13"`} {
		assert.Contains(t, svg, want)
	}
	assert.Equal(t, 3, strings.Count(svg, `r="3.5" fill="#0072b2"`), "one point a reading of that reader")
	assert.Equal(t, "", HistoryChart(nil))
}
