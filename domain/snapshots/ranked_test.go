package snapshots

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agree checks that the fixed-width path and the math/big reference give the
// same answer, digit for digit, for every group filter (or the same refusal).
func agree(t *testing.T, s *Snapshot) {
	t.Helper()
	filters := []string{"", "nope"}
	for _, g := range s.Groups {
		filters = append(filters, g.ID)
	}
	for _, only := range filters {
		want, wantErr := computeFiguresBig(s, only)
		got, gotErr := ComputeFigures(s, only)
		if wantErr != nil {
			require.Error(t, gotErr, "group %q", only)
			assert.Equal(t, wantErr.Error(), gotErr.Error(), "group %q", only)
			continue
		}
		require.NoError(t, gotErr, "group %q", only)
		require.Equal(t, want, got, "group %q", only)
	}
}

func groupedSnapshot(weights []string, rng *rand.Rand) *Snapshot {
	s := &Snapshot{Groups: []Group{{ID: "a", Label: "A"}, {ID: "b", Label: "B"}, {ID: "none", Label: "None"}}}
	for i, w := range weights {
		var groups []string
		if rng.IntN(2) == 0 {
			groups = append(groups, "a")
		}
		if rng.IntN(3) == 0 {
			groups = append(groups, "b")
		}
		s.Accounts = append(s.Accounts, Account{ID: fmt.Sprint("near:mainnet:a", i), Weight: w, Groups: groups})
	}
	return s
}

// randomWeight draws weights of the shapes snapshots hold (small integers,
// yoctoNEAR, decimals of many places, zeros, ties) and some beyond 128 bits
// so the fallback is exercised too.
func randomWeight(rng *rand.Rand, maxDigits int) string {
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		return b.String()
	}
	switch rng.IntN(6) {
	case 0:
		return "0"
	case 1:
		return fmt.Sprint(rng.IntN(5)) // many ties
	case 2:
		return digits(1 + rng.IntN(maxDigits))
	case 3:
		return digits(1+rng.IntN(maxDigits/2)) + "." + digits(1+rng.IntN(maxDigits/2))
	case 4:
		return "1" + strings.Repeat("0", rng.IntN(maxDigits)) // powers of ten
	default:
		return digits(1+rng.IntN(3)) + "." + digits(1+rng.IntN(24)) + "0" // trailing zero
	}
}

func TestFiguresFastAgreesWithBig(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 400 {
		// Up to 30 digits stays inside 128 bits; up to 45 often does not.
		maxDigits := []int{6, 20, 30, 38, 45}[round%5]
		size := rng.IntN(300)
		if round%20 == 0 {
			size = 512 + rng.IntN(3000) // large enough for the radix sort
		}
		weights := make([]string, size)
		for i := range weights {
			weights[i] = randomWeight(rng, maxDigits)
		}
		agree(t, groupedSnapshot(weights, rng))
	}
}

func TestFiguresFastAtTheEdgeOf128Bits(t *testing.T) {
	max128 := "340282366920938463463374607431768211455" // 2^128 − 1
	cases := map[string][]string{
		"one weight of 2^128 − 1":             {max128},
		"2^128 − 1 and a zero":                {max128, "0"},
		"a total of 2^128 − 1":                {"340282366920938463463374607431768211454", "1"},
		"a total of 2^128 (falls back)":       {max128, "1"},
		"one weight of 2^128 (falls back)":    {"340282366920938463463374607431768211456"},
		"fits only before scaling":            {max128, "0.1"},
		"two of 2^127":                        {"170141183460469231731687303715884105728", "170141183460469231731687303715884105728"},
		"200 characters":                      {strings.Repeat("9", 200)},
		"long fraction":                       {"0." + strings.Repeat("0", 37) + "1", "1"},
		"bad weight after a wide one":         {strings.Repeat("9", 50), "1e3"},
		"bad weight":                          {"1", "-1"},
		"many equal yoctoNEAR holders":        repeat("1"+strings.Repeat("0", 30), 1000),
		"ties across whole and decimal forms": {"1", "1.0", "1.00", "0.5", "0.50"},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for name, weights := range cases {
		t.Run(name, func(t *testing.T) { agree(t, groupedSnapshot(weights, rng)) })
	}
}

func TestSortDescMatchesTheStandardSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 511, 512, 513, 5000} {
		for _, spread := range []uint64{1, 3, 1 << 20, 1 << 63} {
			a := make([]rankedWeight, n)
			for i := range a {
				hi := uint64(0)
				if spread == 1<<63 {
					hi = rng.Uint64N(spread)
				}
				a[i] = rankedWeight{v: u128{hi, rng.Uint64N(spread)}, idx: uint32(i)}
			}
			want := slices.Clone(a)
			slices.SortStableFunc(want, func(x, y rankedWeight) int {
				switch {
				case y.v.less(x.v):
					return -1
				case x.v.less(y.v):
					return 1
				}
				return 0
			})
			assert.Equal(t, want, sortDesc(a, make([]rankedWeight, n)), "n=%d spread=%d", n, spread)
		}
	}
}

func TestFiguresWithARepeatedGroupID(t *testing.T) {
	s := &Snapshot{
		Groups:   []Group{{ID: "a", Label: "A"}, {ID: "a", Label: "A again"}},
		Accounts: []Account{{ID: "x", Weight: "2", Groups: []string{"a"}}, {ID: "y", Weight: "1", Groups: []string{}}},
	}
	agree(t, s)
}

func TestRankWeightsFallsBackWhenTheTotalIsWide(t *testing.T) {
	r, err := RankWeights(accountsOf("340282366920938463463374607431768211455", "1"))
	require.NoError(t, err)
	assert.True(t, r.wide, "a total of 2^128 does not fit 128 bits")
	r, err = RankWeights(accountsOf("340282366920938463463374607431768211454", "1"))
	require.NoError(t, err)
	assert.False(t, r.wide)
	assert.Equal(t, "340282366920938463463374607431768211455", r.total.big().String())
	assert.Positive(t, r.Bytes())
}

// FuzzFiguresAgree: any comma-separated weights, the first byte choosing
// group memberships, give the reference's answer or its refusal.
func FuzzFiguresAgree(f *testing.F) {
	f.Add(uint64(0), "1,3")
	f.Add(uint64(7), "0.25,0.5,0.250")
	f.Add(uint64(99), "340282366920938463463374607431768211455,1")
	f.Add(uint64(5), "0,0.000")
	f.Fuzz(func(t *testing.T, seed uint64, list string) {
		var weights []string
		if list != "" {
			weights = strings.Split(list, ",")
		}
		if len(weights) > 2000 {
			t.Skip()
		}
		agree(t, groupedSnapshot(weights, rand.New(rand.NewPCG(seed, seed))))
	})
}
