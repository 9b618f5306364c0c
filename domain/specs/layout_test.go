package specs

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/snapshots"
)

// The quickselect Nakamoto agrees with the figures' sorted walk, ties and
// zeros included.
func TestNakamotoAgreesWithFigures(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		n := rng.IntN(60)
		values := make([]*big.Int, n)
		total := new(big.Int)
		for i := range values {
			values[i] = big.NewInt(int64(rng.IntN(1 + round%9)))
			total.Add(total, values[i])
		}
		want := snapshots.FiguresOf(values, 0).Nakamoto
		got := Nakamoto(values, total)
		if want == nil {
			assert.Nil(t, got, "round %d: %v", round, values)
			continue
		}
		require.NotNil(t, got, "round %d: %v", round, values)
		assert.Equal(t, *want, *got, "round %d: %v", round, values)
	}
}

func TestLargestKeepsTheFirstKInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		items := rng.Perm(rng.IntN(100))
		k := rng.IntN(12)
		got := largest(items, k, func(a, b int) bool { return a > b })
		want := slices.Clone(items)
		slices.SortFunc(want, func(a, b int) int { return b - a })
		assert.Equal(t, want[:min(k, len(want))], append([]int{}, got...))
	}
}
