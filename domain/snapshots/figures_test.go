package snapshots

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/errs"
)

func accountsOf(weights ...string) []Account {
	out := make([]Account, len(weights))
	for i, w := range weights {
		out[i] = Account{ID: "near:mainnet:a" + string(rune('a'+i%26)), Weight: w, Groups: []string{}}
	}
	return out
}

func repeat(w string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = w
	}
	return out
}

// want is a figure set written as its published JSON text, so the rounding
// rule is checked exactly as callers read it.
type want struct {
	count                int
	total                string
	top1, top10, top1pct string
	top1pctCount         int
	gini, hhi            string
	nakamoto             string // "null" or a number
}

func check(t *testing.T, f Figures, w want) {
	t.Helper()
	assert.Equal(t, w.count, f.Count, "count")
	assert.Equal(t, w.total, f.TotalWeight, "total_weight")
	assert.Equal(t, w.top1, f.Top1Share.String(), "top1_share")
	assert.Equal(t, w.top10, f.Top10Share.String(), "top10_share")
	assert.Equal(t, w.top1pct, f.Top1PctShare.String(), "top1pct_share")
	assert.Equal(t, w.top1pctCount, f.Top1PctCount, "top1pct_count")
	assert.Equal(t, w.gini, f.Gini.String(), "gini")
	assert.Equal(t, w.hhi, f.HHI.String(), "hhi")
	nak := "null"
	if f.Nakamoto != nil {
		b, _ := json.Marshal(*f.Nakamoto)
		nak = string(b)
	}
	assert.Equal(t, w.nakamoto, nak, "nakamoto")
}

// Every expected value below was worked out by hand; the comments show the sums.
func TestFiguresHandComputed(t *testing.T) {
	huge := "1" + strings.Repeat("0", 30) // 10^30, a yoctoNEAR-sized whale
	cases := []struct {
		name    string
		weights []string
		want    want
	}{
		{
			// T=20, each 1/4. Gini 0. More than half needs 3 (15 > 10). HHI 4 × 1/16.
			name: "all equal", weights: repeat("5", 4),
			want: want{4, "20", "0.25", "1", "0.25", 1, "0", "0.25", "3"},
		},
		{
			// Two equal holders: 1 each holds exactly half, which is not more than half.
			name: "two equal holders", weights: []string{"1", "1"},
			want: want{2, "2", "0.5", "1", "0.5", 1, "0", "0.5", "2"},
		},
		{
			// 3 and 1, T=4. Gini: (−1·1 + 1·3)/(2·4) = 2/8. HHI (9+1)/16.
			name: "two holders", weights: []string{"1", "3"},
			want: want{2, "4", "0.75", "1", "0.75", 1, "0.25", "0.625", "1"},
		},
		{
			name: "one holder", weights: []string{"7"},
			want: want{1, "7", "1", "1", "1", 1, "0", "1", "1"},
		},
		{
			// 50 and a tail of 100 ones, T=150, n=101. Top 1% is ceil(101/100)=2
			// accounts: 51/150. Top 10: 59/150 = 0.39333… Gini: Σ|xi−xj| = 2·100·49
			// = 9800 over 2·n·T = 30300 → 0.3234323… Half is 75: 50+25 is not more,
			// 50+26 is, so 27. HHI (2500+100)/22500 = 0.1155555…
			name: "long tail", weights: append([]string{"50"}, repeat("1", 100)...),
			want: want{101, "150", "0.333333", "0.393333", "0.34", 2, "0.323432", "0.115556", "27"},
		},
		{
			// Decimals: 0.5, 0.25, 0.25 (T=1). Gini on hundredths [25,25,50]:
			// (−2·25 + 0·25 + 2·50)/(3·100) = 1/6. Half is 0.5: the top one alone is
			// not more than half, so 2. HHI .25+.0625+.0625.
			name: "decimal weights", weights: []string{"0.25", "0.5", "0.250"},
			want: want{3, "1", "0.5", "1", "0.5", 1, "0.166667", "0.375", "2"},
		},
		{
			// Zero weights count as accounts. [0,0,0,4]: Gini Σ|xi−xj| = 2·3·4 = 24
			// over 2·n·T = 32 → 0.75.
			name: "zero weights", weights: []string{"0", "0", "4", "0"},
			want: want{4, "4", "1", "1", "1", 1, "0.75", "1", "1"},
		},
		{
			// Nobody holds anything: every ratio is undefined, so null.
			name: "all zero", weights: []string{"0", "0.000"},
			want: want{2, "0", "null", "null", "null", 1, "null", "null", "null"},
		},
		{
			name: "no accounts", weights: nil,
			want: want{0, "0", "null", "null", "null", 0, "null", "null", "null"},
		},
		{
			// 10^30 among 999 accounts of 1. Every top share is 1 − ~1e-27 → 1.
			// Gini = 999(10^30 − 1) / (1000(10^30 + 999)) → 0.999. HHI → 1.
			name: "one huge account among dust", weights: append([]string{huge}, repeat("1", 999)...),
			want: want{1000, "1000000000000000000000000000999", "1", "1", "1", 10, "0.999", "1", "1"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w, err := ParseWeights(accountsOf(c.weights...))
			require.NoError(t, err)
			check(t, FiguresOf(w.Values, w.Scale), c.want)
			// The same case on the fixed-width path compute_figures takes.
			fast, err := ComputeFigures(&Snapshot{Accounts: accountsOf(c.weights...)}, "")
			require.NoError(t, err)
			check(t, fast.Figures, c.want)
		})
	}
}

func TestFiguresPerGroup(t *testing.T) {
	s := &Snapshot{
		Groups: []Group{{ID: "council", Label: "Council"}, {ID: "members", Label: "Members"}, {ID: "empty", Label: "Nobody"}},
		Accounts: []Account{
			{ID: "a", Weight: "6", Groups: []string{"council", "members"}},
			{ID: "b", Weight: "2", Groups: []string{"council"}},
			{ID: "c", Weight: "2", Groups: []string{"members"}},
		},
	}
	fs, err := ComputeFigures(s, "")
	require.NoError(t, err)
	check(t, fs.Figures, want{3, "10", "0.6", "1", "0.6", 1, "0.266667", "0.44", "1"})
	require.Len(t, fs.Groups, 3)
	assert.Equal(t, "council", fs.Groups[0].ID)
	assert.Equal(t, "Council", fs.Groups[0].Label)
	assert.Equal(t, "0.8", fs.Groups[0].Share.String()) // (6+2)/10
	// Council 6 and 2: T=8, Gini (−2 + 6)/(2·8) = 0.25, HHI (36+4)/64.
	check(t, fs.Groups[0].Figures, want{2, "8", "0.75", "1", "0.75", 1, "0.25", "0.625", "1"})
	assert.Equal(t, "0.8", fs.Groups[1].Share.String())
	assert.Equal(t, "0", fs.Groups[2].Share.String())
	check(t, fs.Groups[2].Figures, want{0, "0", "null", "null", "null", 0, "null", "null", "null"})

	one, err := ComputeFigures(s, "members")
	require.NoError(t, err)
	require.Len(t, one.Groups, 1)
	assert.Equal(t, "members", one.Groups[0].ID)
	assert.Equal(t, fs.Figures, one.Figures, "the snapshot's own figures do not change with group")

	_, err = ComputeFigures(s, "nope")
	assert.True(t, errs.Is(err, errs.BadInput))
}

func TestFiguresJSON(t *testing.T) {
	w, err := ParseWeights(accountsOf("1", "3"))
	require.NoError(t, err)
	b, err := json.Marshal(FiguresOf(w.Values, w.Scale))
	require.NoError(t, err)
	assert.JSONEq(t, `{"count":2,"total_weight":"4","top1_share":0.75,"top10_share":1,"top1pct_share":0.75,
		"top1pct_count":1,"gini":0.25,"nakamoto":1,"hhi":0.625}`, string(b))

	w, err = ParseWeights(accountsOf("0"))
	require.NoError(t, err)
	b, err = json.Marshal(FiguresOf(w.Values, w.Scale))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"gini":null`)
	assert.Contains(t, string(b), `"nakamoto":null`)
}

func TestFractionRoundsHalfToEven(t *testing.T) {
	ten7 := big.NewInt(10_000_000)
	for num, want := range map[int64]string{
		5:  "0",        // 0.0000005 → 0.000000 (0 is even)
		15: "0.000002", // 0.0000015 → 0.000002
		25: "0.000002", // 0.0000025 → 0.000002
		26: "0.000003", // above half rounds up
		24: "0.000002", // below half rounds down
	} {
		assert.Equal(t, want, NewFraction(big.NewInt(num), ten7).String(), "%d/10^7", num)
	}
	assert.Equal(t, "0.333333", NewFraction(big.NewInt(1), big.NewInt(3)).String())
	assert.Equal(t, "0.666667", NewFraction(big.NewInt(2), big.NewInt(3)).String())
	assert.Equal(t, "null", NewFraction(big.NewInt(1), big.NewInt(0)).String())

	var f Fraction
	require.NoError(t, json.Unmarshal([]byte("0.125"), &f))
	assert.Equal(t, int64(125000), f.Millionths)
}

func TestParseWeightsRefusesOtherForms(t *testing.T) {
	for _, bad := range []string{"", "-1", "+1", "1e3", "1.", ".5", "0x10", "1/2", " 1", "1,000", "NaN", "١"} {
		_, err := ParseWeights(accountsOf(bad))
		assert.True(t, errs.Is(err, errs.BadInput), "%q", bad)
	}
	w, err := ParseWeights(accountsOf("1.50", "2", "0.001"))
	require.NoError(t, err)
	assert.Equal(t, 3, w.Scale)
	assert.Equal(t, "1500 2000 1", w.Values[0].String()+" "+w.Values[1].String()+" "+w.Values[2].String())
	assert.Equal(t, "3.501", FormatScaled(sum(w.Values), w.Scale))
	assert.Equal(t, "0.001", FormatScaled(big.NewInt(1), 3))
	assert.Equal(t, "0", FormatScaled(big.NewInt(0), 3))
}

func TestParseWeightsLongDecimals(t *testing.T) {
	for _, s := range []string{"0", "7", "1234567890123456789", "12345678901234567890", "9999999999999999999999999999999999999999",
		"1" + strings.Repeat("0", 57), "000123", "3.14159265358979323846264338327950288", "0.0000000000000000000000001"} {
		w, err := ParseWeights(accountsOf(s))
		require.NoError(t, err, s)
		r, ok := new(big.Rat).SetString(s)
		require.True(t, ok)
		got := new(big.Rat).SetFrac(w.Values[0], new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(w.Scale)), nil))
		assert.Equal(t, r.String(), got.String(), s)
	}
}
