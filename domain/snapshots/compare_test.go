package snapshots

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/errs"
)

// reading is a snapshot of named accounts ("x=3") for the comparison tests.
func reading(accounts ...string) *Snapshot {
	s := &Snapshot{Network: "near-staking-pool", Chain: Mainnet, Params: json.RawMessage(`{"pool":"p.poolv1.near"}`),
		Groups: []Group{}, Accounts: []Account{}}
	for _, a := range accounts {
		id, w, _ := strings.Cut(a, "=")
		s.Accounts = append(s.Accounts, Account{ID: "near:mainnet:" + id, Label: id, Weight: w, Groups: []string{}})
	}
	return s
}

func compareBoth(t *testing.T, a, b *Snapshot, page ComparePage) Comparison {
	t.Helper()
	ra, err := RankWeights(a.Accounts)
	require.NoError(t, err)
	rb, err := RankWeights(b.Accounts)
	require.NoError(t, err)
	fast, err := Compare(a, ra, b, rb, page)
	require.NoError(t, err)
	// The math/big path gives the same answer to the digit.
	slow, err := Compare(a, &RankedWeights{wide: true}, b, &RankedWeights{wide: true}, page)
	require.NoError(t, err)
	assert.Equal(t, mustText(t, fast), mustText(t, slow), "the fixed-width and math/big paths agree")
	return fast
}

func mustText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// moves writes a list as "id:before→after:change" for exact comparison.
func moves(l AccountMoves) []string {
	out := []string{}
	for _, m := range l.Accounts {
		out = append(out, fmt.Sprintf("%s:%s→%s:%s→%s:%s", m.Label, m.WeightBefore, m.WeightAfter, m.ShareBefore, m.ShareAfter, m.Change))
	}
	return out
}

func changeText(c FiguresChange) string {
	nak := "null"
	if c.Nakamoto != nil {
		nak = fmt.Sprint(*c.Nakamoto)
	}
	return fmt.Sprintf("count %d total %s top1 %s top10 %s top1pct %s/%d gini %s nakamoto %s hhi %s",
		c.Count, c.TotalWeight, c.Top1Share, c.Top10Share, c.Top1PctShare, c.Top1PctCount, c.Gini, nak, c.HHI)
}

func TestCompareAnAccountEntering(t *testing.T) {
	// a: x=3, y=1 (T=4): top1 3/4, Gini (−1+3)/(2·4) = 0.25, HHI 10/16 = 0.625, Nakamoto 1.
	// b: z=4 joins (T=8): top1 4/8, Gini ascending 1,3,4: (−2·1 + 0·3 + 2·4)/(3·8) = 0.25,
	// HHI (16+9+1)/64 = 0.40625, Nakamoto 2 (4 is half, not more; 4+3 is).
	c := compareBoth(t, reading("x=3", "y=1"), reading("x=3", "y=1", "z=4"), ComparePage{})
	check(t, c.A.Figures, want{2, "4", "0.75", "1", "0.75", 1, "0.25", "0.625", "1"})
	check(t, c.B.Figures, want{3, "8", "0.5", "1", "0.5", 1, "0.25", "0.40625", "2"})
	assert.Equal(t, "count 1 total 4 top1 -0.25 top10 0 top1pct -0.25/0 gini 0 nakamoto 1 hhi -0.21875", changeText(c.Change))
	assert.Equal(t, []string{"z:0→4:0→0.5:0.5"}, moves(c.Entered))
	assert.Equal(t, 0, c.Left.Total)
	// Over T_a·T_b = 32: z 4·4 − 0 = +16; x 3·4 − 3·8 = −12; y 1·4 − 1·8 = −4.
	assert.Equal(t, []string{"z:0→4:0→0.5:0.5"}, moves(c.MoversUp))
	assert.Equal(t, []string{"x:3→3:0.75→0.375:-0.375", "y:1→1:0.25→0.125:-0.125"}, moves(c.MoversDown))

	// Listed in another order, the accounts are matched by id all the same.
	again := compareBoth(t, reading("x=3", "y=1"), reading("z=4", "y=1", "x=3"), ComparePage{})
	assert.Equal(t, moves(c.MoversDown), moves(again.MoversDown))
	assert.Equal(t, moves(c.Entered), moves(again.Entered))
}

func TestCompareAnAccountLeaving(t *testing.T) {
	c := compareBoth(t, reading("x=3", "y=1", "z=4"), reading("x=3", "y=1"), ComparePage{})
	assert.Equal(t, "count -1 total -4 top1 0.25 top10 0 top1pct 0.25/0 gini 0 nakamoto -1 hhi 0.21875", changeText(c.Change))
	assert.Equal(t, []string{"z:4→0:0.5→0:-0.5"}, moves(c.Left))
	assert.Equal(t, 0, c.Entered.Total)
	assert.Equal(t, []string{"x:3→3:0.375→0.75:0.375", "y:1→1:0.125→0.25:0.125"}, moves(c.MoversUp))
	assert.Equal(t, []string{"z:4→0:0.5→0:-0.5"}, moves(c.MoversDown))
}

func TestCompareAWhaleSellingHalf(t *testing.T) {
	// a: w=8, p=1, q=1 (T=10): top1 0.8, Gini ascending 1,1,8: (−2 + 0 + 16)/30 = 0.466667,
	// HHI 66/100. b: w sells half, out of the reading (T=6): top1 4/6 = 0.666667,
	// Gini (−2 + 0 + 8)/18 = 0.333333, HHI 18/36 = 0.5, Nakamoto still 1 (8 > 6).
	c := compareBoth(t, reading("w=8", "p=1", "q=1"), reading("w=4", "p=1", "q=1"), ComparePage{})
	check(t, c.A.Figures, want{3, "10", "0.8", "1", "0.8", 1, "0.466667", "0.66", "1"})
	check(t, c.B.Figures, want{3, "6", "0.666667", "1", "0.666667", 1, "0.333333", "0.5", "1"})
	// Each change is the published values subtracted: Gini 0.333333 − 0.466667 =
	// −0.133334, where the exact −2/15 would round to −0.133333.
	assert.Equal(t, "count 0 total -4 top1 -0.133333 top10 0 top1pct -0.133333/0 gini -0.133334 nakamoto 0 hhi -0.16", changeText(c.Change))
	// p and q rise alike (1/6 − 1/10, +4/60 each over T_a·T_b = 60): by id.
	assert.Equal(t, []string{"p:1→1:0.1→0.166667:0.066667", "q:1→1:0.1→0.166667:0.066667"}, moves(c.MoversUp))
	assert.Equal(t, []string{"w:8→4:0.8→0.666667:-0.133333"}, moves(c.MoversDown))
	assert.Equal(t, 0, c.Entered.Total+c.Left.Total)
}

func TestCompareEqualWeights(t *testing.T) {
	// Everyone doubles: every share stays a third, so nothing moves.
	c := compareBoth(t, reading("x=1", "y=1", "z=1"), reading("x=2", "y=2", "z=2"), ComparePage{})
	assert.Equal(t, "count 0 total 3 top1 0 top10 0 top1pct 0/0 gini 0 nakamoto 0 hhi 0", changeText(c.Change))
	assert.Equal(t, 0, c.MoversUp.Total+c.MoversDown.Total+c.Entered.Total+c.Left.Total)
	assert.NotNil(t, c.MoversUp.Accounts, "an empty list is [], not null")
}

func TestCompareOneSideEmpty(t *testing.T) {
	// a holds nothing: its shares are undefined, so every share's change is null
	// and nobody moves by share; the one account entered.
	c := compareBoth(t, reading(), reading("x=5"), ComparePage{})
	check(t, c.A.Figures, want{0, "0", "null", "null", "null", 0, "null", "null", "null"})
	assert.Equal(t, "count 1 total 5 top1 null top10 null top1pct null/1 gini null nakamoto null hhi null", changeText(c.Change))
	assert.Equal(t, []string{"x:0→5:null→1:null"}, moves(c.Entered))
	assert.Equal(t, 0, c.MoversUp.Total+c.MoversDown.Total)

	c = compareBoth(t, reading("x=5"), reading(), ComparePage{})
	assert.Equal(t, []string{"x:5→0:1→null:null"}, moves(c.Left))
	assert.Equal(t, "total -5", "total "+c.Change.TotalWeight)
}

func TestCompareGroups(t *testing.T) {
	a := reading("x=6", "y=2", "z=2")
	a.Groups = []Group{{ID: "council", Label: "Council"}, {ID: "old", Label: "Old"}}
	a.Accounts[0].Groups = []string{"council"}
	a.Accounts[1].Groups = []string{"council", "old"}
	b := reading("x=6", "y=2", "z=2")
	b.Groups = []Group{{ID: "new", Label: "New"}, {ID: "council", Label: "Council"}}
	b.Accounts[0].Groups = []string{"council"}
	b.Accounts[2].Groups = []string{"new"}
	c := compareBoth(t, a, b, ComparePage{})
	var got []string
	for _, g := range c.Groups {
		got = append(got, fmt.Sprintf("%s %s %s→%s %s %d→%d", g.ID, g.In, g.ShareBefore, g.ShareAfter, g.Change, g.CountBefore, g.CountAfter))
	}
	// council (6+2)/10 → 6/10; old 2/10 → none (0); new none → 2/10.
	assert.Equal(t, []string{"council both 0.8→0.6 -0.2 2→1", "old a 0.2→0 -0.2 1→0", "new b 0→0.2 0.2 0→1"}, got)
}

func TestComparePaging(t *testing.T) {
	// Ten accounts each entering with weight i: the page is the largest first.
	var bs []string
	for i := 1; i <= 10; i++ {
		bs = append(bs, fmt.Sprintf("e%02d=%d", i, i))
	}
	c := compareBoth(t, reading("x=1"), reading(append(bs, "x=1")...), ComparePage{Offset: 2, Limit: 3})
	assert.Equal(t, 10, c.Entered.Total)
	var labels []string
	for _, m := range c.Entered.Accounts {
		labels = append(labels, m.Label)
	}
	assert.Equal(t, []string{"e08", "e07", "e06"}, labels)
	c = compareBoth(t, reading("x=1"), reading(append(bs, "x=1")...), ComparePage{Offset: 10, Limit: 3})
	assert.Empty(t, c.Entered.Accounts)
	assert.Equal(t, 10, c.Entered.Total)

	ra, _ := RankWeights(nil)
	for _, p := range []ComparePage{{Limit: -1}, {Limit: MaxCompareLimit + 1}, {Offset: -1}, {Offset: MaxCompareOffset + 1}} {
		_, err := Compare(reading(), ra, reading(), ra, p)
		assert.True(t, errs.Is(err, errs.BadInput), "%+v", p)
	}
}

func TestCompareRefusesReadingsNotComparable(t *testing.T) {
	ra, _ := RankWeights(nil)
	cases := map[string]func(b *Snapshot){
		"another chain":  func(b *Snapshot) { b.Chain = Testnet },
		"another reader": func(b *Snapshot) { b.Network = "near-dao-members" },
		"another token": func(b *Snapshot) {
			b.Network = "near-ft-balances"
			b.Params = json.RawMessage(`{"token":"usdt.tether-token.near"}`)
		},
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			a, b := reading(), reading()
			if name == "another token" {
				a.Network, a.Params = "near-ft-balances", json.RawMessage(`{"token":"wrap.near"}`)
			}
			change(b)
			_, err := Compare(a, ra, b, ra, ComparePage{})
			require.True(t, errs.Is(err, errs.BadInput), "%v", err)
			assert.Regexp(t, `^b: `, err.(*errs.Error).Message, "names the field")
		})
	}
	// Two pools read by one reader weigh in one unit: comparable.
	other := reading()
	other.Params = json.RawMessage(`{"pool":"q.poolv1.near"}`)
	_, err := Compare(reading(), ra, other, ra, ComparePage{})
	assert.NoError(t, err)
}

// The fixed-width path agrees with math/big on random readings of every
// weight shape, with accounts entering, leaving and moving.
func TestCompareFastAgreesWithBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	weight := func() string {
		switch rng.IntN(4) {
		case 0:
			return "0"
		case 1:
			return fmt.Sprint(rng.IntN(5))
		case 2:
			return fmt.Sprintf("%d.%03d", rng.IntN(1000), rng.IntN(1000))
		}
		return fmt.Sprintf("%d%018d", rng.Uint64()%1_000_000_000_000, rng.Uint64()%1_000_000_000_000_000_000)
	}
	for range 60 {
		var as, bs []string
		for i := range rng.IntN(40) {
			as = append(as, fmt.Sprintf("a%d=%s", i, weight()))
		}
		for i := range rng.IntN(40) {
			bs = append(bs, fmt.Sprintf("a%d=%s", i+rng.IntN(3), weight()))
		}
		seen := map[string]bool{}
		var bUnique []string
		for _, s := range bs {
			if id, _, _ := strings.Cut(s, "="); !seen[id] {
				seen[id] = true
				bUnique = append(bUnique, s)
			}
		}
		compareBoth(t, reading(as...), reading(bUnique...), ComparePage{Limit: 1 + rng.IntN(20), Offset: rng.IntN(5)})
	}
}
