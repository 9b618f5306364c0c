package snapshots

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bruteBanzhaf counts every coalition: voter i swings in each coalition of
// the others that loses without i and wins with it.
func bruteBanzhaf(w []uint64, quota uint64) []*big.Rat {
	n := len(w)
	swings := make([]int64, n)
	var all int64
	for mask := range 1 << n {
		var s uint64
		for j := range n {
			if mask&(1<<j) != 0 {
				s += w[j]
			}
		}
		for i := range n {
			if mask&(1<<i) == 0 && s < quota && s+w[i] >= quota {
				swings[i]++
				all++
			}
		}
	}
	out := make([]*big.Rat, n)
	for i := range out {
		out[i] = big.NewRat(swings[i], all)
	}
	return out
}

// rankedGame is a game's voters ranked as the figures rank them.
func rankedGame(t *testing.T, w ...uint64) ([]rankedWeight, u128, []Account) {
	t.Helper()
	ws := make([]string, len(w))
	for i, x := range w {
		ws[i] = fmt.Sprint(x)
	}
	accounts := accountsOf(ws...)
	r, err := RankWeights(accounts)
	require.NoError(t, err)
	return r.desc, r.total, accounts
}

func indexOf(t *testing.T, desc []rankedWeight, total u128, accounts []Account, quota uint64) ([]string, string) {
	t.Helper()
	n := len(desc)
	for n > 0 && desc[n-1].v == (u128{}) {
		n--
	}
	swings, all, ok := banzhafExact(desc[:n], u128{0, quota}, n)
	require.True(t, ok)
	out := make([]string, n)
	for i := range out {
		out[i] = NewFraction(new(big.Int).SetUint64(swings[i]), all).String()
	}
	return out, ""
}

func TestBanzhafSmallGamesByHand(t *testing.T) {
	for _, c := range []struct {
		name    string
		weights []uint64
		quota   uint64
		want    []string // largest first
	}{
		// 4, 2, 1 with quota 4: 4 wins alone and 2 + 1 = 3 doesn't, so 4 swings in
		// all four coalitions of the others and the others never: a dictator.
		{"weights 4,2,1 quota 4", []uint64{4, 2, 1}, 4, []string{"1", "0", "0"}},
		// 2, 1, 1 with quota 3: 2 swings with {1}, {1'}, {1,1'} (3 swings); each 1
		// only with {2} (1 swing): 3/5, 1/5, 1/5.
		{"weights 2,1,1 quota 3", []uint64{2, 1, 1}, 3, []string{"0.6", "0.2", "0.2"}},
		// 2, 2, 1 with quota 4: the 1 never turns a loss into a win (it would need
		// the others at 3), a dummy; the two 2s swing twice each.
		{"a dummy", []uint64{2, 2, 1}, 4, []string{"0.5", "0.5", "0"}},
		// Unanimity: everyone swings once, in the coalition of all the others.
		{"unanimity", []uint64{5, 3, 1, 1}, 10, []string{"0.25", "0.25", "0.25", "0.25"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			desc, total, accounts := rankedGame(t, c.weights...)
			got, _ := indexOf(t, desc, total, accounts, c.quota)
			assert.Equal(t, c.want, got)
			// And by brute force.
			brute := bruteBanzhaf(c.weights, c.quota)
			for i := range brute {
				assert.Equal(t, NewFraction(brute[i].Num(), brute[i].Denom()).String(), got[i])
			}
		})
	}
}

// The exact count agrees with brute force on random small games, quota any.
func TestBanzhafExactAgreesWithBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for range 200 {
		n := 1 + rng.IntN(12)
		w := make([]uint64, n)
		var total uint64
		for i := range w {
			w[i] = uint64(1 + rng.IntN(40))
			total += w[i]
		}
		// Sorted largest first, as the ranked weights are.
		for i := range w {
			for j := i + 1; j < n; j++ {
				if w[j] > w[i] {
					w[i], w[j] = w[j], w[i]
				}
			}
		}
		quota := 1 + uint64(rng.IntN(int(total)))
		desc, total128, accounts := rankedGame(t, w...)
		got, _ := indexOf(t, desc, total128, accounts, quota)
		brute := bruteBanzhaf(w, quota)
		for i := range brute {
			require.Equal(t, NewFraction(brute[i].Num(), brute[i].Denom()).String(), got[i], "%v quota %d", w, quota)
		}
	}
}

func TestBanzhafInTheFigures(t *testing.T) {
	// 6, 2, 2 (T=10), majority: more than 5, so quota 6. 6 is a dictator.
	s := &Snapshot{Accounts: accountsOf("2", "6", "2", "0")}
	fs, err := ComputeFigures(s, "")
	require.NoError(t, err)
	b := fs.Banzhaf
	require.NotNil(t, b)
	assert.Equal(t, RuleMajority, b.Rule)
	assert.Equal(t, "6", b.Quota)
	assert.Equal(t, 3, b.Voters, "a zero weight never swings")
	assert.Equal(t, "exact", b.Method)
	require.Len(t, b.Accounts, 3)
	assert.Equal(t, s.Accounts[1].ID, b.Accounts[0].ID)
	assert.Equal(t, []string{"1", "0", "0"}, []string{b.Accounts[0].Index.String(), b.Accounts[1].Index.String(), b.Accounts[2].Index.String()})
	assert.Equal(t, "null", b.Accounts[0].Error.String())

	// Decimal weights are divided by their common divisor: 0.5, 0.25, 0.25
	// (quota 0.51 on hundredths: 51) is 2, 1, 1 with quota ⌈51/25⌉ = 3.
	fs, err = ComputeFigures(&Snapshot{Accounts: accountsOf("0.5", "0.25", "0.25")}, "")
	require.NoError(t, err)
	assert.Equal(t, "0.51", fs.Banzhaf.Quota)
	assert.Equal(t, "0.6 0.2 0.2", fs.Banzhaf.Accounts[0].Index.String()+" "+fs.Banzhaf.Accounts[1].Index.String()+" "+fs.Banzhaf.Accounts[2].Index.String())

	// A hundred equal members: 1/100 each, by symmetry, exact past 60 voters.
	fs, err = ComputeFigures(&Snapshot{Accounts: accountsOf(repeat("1", 100)...)}, "")
	require.NoError(t, err)
	assert.Equal(t, "exact", fs.Banzhaf.Method)
	assert.Len(t, fs.Banzhaf.Accounts, BanzhafAccounts)
	assert.Equal(t, "0.01", fs.Banzhaf.Accounts[0].Index.String())

	// Nobody holds anything: no vote to weigh.
	fs, err = ComputeFigures(&Snapshot{Accounts: accountsOf("0")}, "")
	require.NoError(t, err)
	assert.Nil(t, fs.Banzhaf)
}

// Past 60 voters the index is sampled, and the exact index is within the
// stated error for (nearly) every account: 80 voters of small weights, whose
// exact index a float DP in the test gives.
func TestBanzhafSampledWithinItsError(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 19))
	w := make([]uint64, 80)
	var total uint64
	for i := range w {
		w[i] = uint64(1 + rng.IntN(20))
		if i < 3 {
			w[i] = 150 - uint64(i)*30 // three large holders: 150, 120, 90
		}
		total += w[i]
	}
	desc, total128, accounts := rankedGame(t, w...)
	sorted := make([]uint64, len(desc))
	for i, d := range desc {
		sorted[i] = d.v.lo
	}
	quota := total/2 + 1
	// Exact by a DP in float64 (counts up to 2^80 lose low bits, not the ratio).
	exact := func() []float64 {
		c := make([]float64, quota)
		c[0] = 1
		for _, x := range sorted {
			for s := int(quota) - 1; s >= int(x); s-- {
				c[s] += c[s-int(x)]
			}
		}
		sw := make([]float64, len(sorted))
		var all float64
		for i, x := range sorted {
			others := make([]float64, quota)
			for s := range int(quota) {
				others[s] = c[s]
				if s >= int(x) {
					others[s] -= others[s-int(x)]
				}
				if s >= int(quota)-int(x) {
					sw[i] += others[s]
				}
			}
			all += sw[i]
		}
		for i := range sw {
			sw[i] /= all
		}
		return sw
	}()
	b := banzhafOf(desc, total128, 0, accounts)
	require.Equal(t, "sampled", b.Method)
	assert.Equal(t, min(banzhafWork/80, banzhafMaxSamples), b.Samples)
	within := 0
	for i, a := range b.Accounts {
		require.True(t, a.Error.Defined)
		if d := a.Index.Float() - exact[i]; d <= a.Error.Float() && -d <= a.Error.Float() {
			within++
		}
		t.Logf("%d: sampled %s ± %s, exact %.6f", i, a.Index, a.Error, exact[i])
	}
	// About 95% intervals: at least 9 of the 10 hold (with this seed, all do).
	assert.GreaterOrEqual(t, within, 9)
}
