package snapshots

import (
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
)

// The normalised Banzhaf index: in a weighted vote where a coalition wins
// when its weight reaches the quota, an account's swings are the coalitions
// of the others that lose without it and win with it; its index is its
// swings over everyone's (docs/figures.md, "What a vote weighs").

// Bounds on the Banzhaf computation.
const (
	// BanzhafAccounts is how many of the largest accounts the answer lists.
	BanzhafAccounts = 10
	// BanzhafExactVoters is the most voters counted exactly: subsets of 59
	// others fit a uint64.
	BanzhafExactVoters = 60
	// banzhafExactWeight bounds the total of the weights (divided by their
	// greatest common divisor) the exact count walks, so it costs at most
	// 60 × 2^18 steps.
	banzhafExactWeight = 1 << 18
	// banzhafWork bounds a sampled estimate: samples × voters steps (about
	// 4 ms on one core; once per reading, since the ranked weights keep it).
	banzhafWork = 2_000_000
	// banzhafMinSamples and banzhafMaxSamples bound the samples drawn.
	banzhafMinSamples = 100
	banzhafMaxSamples = 20_000
)

// RuleMajority is the decision rule when a reading doesn't carry its own:
// more than half of all the weight.
const RuleMajority = "majority of weight: more than half of the total"

// Banzhaf is the normalised Banzhaf index of a reading's largest accounts.
type Banzhaf struct {
	Rule   string `json:"rule"`   // the decision rule, in words
	Quota  string `json:"quota"`  // the weight a coalition needs, exact decimal
	Voters int    `json:"voters"` // accounts with any weight (zero weights never swing)
	// Method is "exact" (counted over every coalition), or "sampled": then
	// Samples random coalitions, and each index has its error.
	Method   string         `json:"method"`
	Samples  int            `json:"samples,omitempty"`
	Accounts []BanzhafIndex `json:"accounts"` // the largest first
}

// BanzhafIndex is one account's index.
type BanzhafIndex struct {
	ID    string   `json:"id"`
	Label string   `json:"label"`
	Index Fraction `json:"index"`
	// Error is the half-width of an about-95% interval around a sampled
	// index (1.96 standard errors of its swing rate over the mean swings per
	// coalition); null when the index is exact.
	Error Fraction `json:"error"`
}

// banzhafOf computes the index of the voters desc (weights largest first,
// on one scale, summing to total) under the majority rule; nil when nobody
// holds anything. The first BanzhafAccounts are described.
func banzhafOf(desc []rankedWeight, total u128, scale int, accounts []Account) *Banzhaf {
	if total == (u128{}) {
		return nil
	}
	n := len(desc)
	for n > 0 && desc[n-1].v == (u128{}) {
		n--
	}
	voters := desc[:n]
	// More than half: 2·w(S) > T, so the quota is ⌊T/2⌋ + 1.
	quota, _ := u128{total.hi >> 1, total.lo>>1 | total.hi<<63}.add(u128{0, 1})
	b := &Banzhaf{Rule: RuleMajority, Quota: FormatScaled(quota.big(), scale), Voters: n, Accounts: []BanzhafIndex{}}
	k := min(BanzhafAccounts, n)
	var swings []uint64 // the first k voters' swings
	var all *big.Int    // everyone's
	var errs []Fraction
	if voters[0].v == voters[n-1].v {
		// Everyone weighs the same: by symmetry each holds 1/n.
		b.Method = "exact"
		swings, all = make([]uint64, k), big.NewInt(int64(n))
		for i := range swings {
			swings[i] = 1
		}
	} else {
		var ok bool
		if swings, all, ok = banzhafExact(voters, quota, k); ok {
			b.Method = "exact"
		} else {
			b.Method = "sampled"
			var sampledAll uint64
			b.Samples, swings, sampledAll, errs = banzhafSampled(voters, quota, k)
			all = new(big.Int).SetUint64(sampledAll)
		}
	}
	for i := range k {
		a := accounts[voters[i].idx]
		bi := BanzhafIndex{ID: a.ID, Label: a.Label, Index: NewFraction(new(big.Int).SetUint64(swings[i]), all)}
		if errs != nil {
			bi.Error = errs[i]
		}
		b.Accounts = append(b.Accounts, bi)
	}
	return b
}

// banzhafExact counts every voter's swings by dynamic programming over the
// weights divided by their greatest common divisor: c[s] is how many
// coalitions weigh s, and a voter's coalitions of the others come from c by
// taking the voter out again. ok is false past 60 voters or when the
// divided weights sum past banzhafExactWeight.
func banzhafExact(voters []rankedWeight, quota u128, k int) (swings []uint64, all *big.Int, ok bool) {
	n := len(voters)
	if n > BanzhafExactVoters {
		return nil, nil, false
	}
	g := new(big.Int)
	for _, v := range voters {
		g.GCD(nil, nil, g, v.v.big())
	}
	w := make([]int, n)
	sum := 0
	for i, v := range voters {
		r := new(big.Int).Quo(v.v.big(), g)
		if !r.IsInt64() || r.Int64() > banzhafExactWeight {
			return nil, nil, false
		}
		w[i] = int(r.Int64())
		if sum += w[i]; sum > banzhafExactWeight {
			return nil, nil, false
		}
	}
	// A coalition wins when g·r(S) ≥ quota, that is r(S) ≥ ⌈quota / g⌉.
	qb, rem := new(big.Int).QuoRem(quota.big(), g, new(big.Int))
	if rem.Sign() > 0 {
		qb.Add(qb, big.NewInt(1))
	}
	q := int(qb.Int64()) // ≤ sum + 1, since the quota is at most the total
	// c[s] for s < q is all a swing needs.
	c := make([]uint64, q)
	c[0] = 1
	for _, wi := range w {
		for s := q - 1; s >= wi; s-- {
			c[s] += c[s-wi]
		}
	}
	others := make([]uint64, q)
	count := func(wi int) uint64 {
		// others[s]: coalitions of everyone but this voter weighing s.
		var swing uint64
		for s := range q {
			others[s] = c[s]
			if s >= wi {
				others[s] -= others[s-wi]
			}
			if s >= q-wi {
				swing += others[s]
			}
		}
		return swing
	}
	// Each count is below 2^59, but sixty of them may pass 2^64.
	swings, all = make([]uint64, k), new(big.Int)
	var one big.Int
	for i, wi := range w {
		swing := count(wi)
		if i < k {
			swings[i] = swing
		}
		all.Add(all, one.SetUint64(swing))
	}
	return swings, all, true
}

// banzhafSampled estimates the swings from random coalitions of all the
// voters (each in with probability ½), as many as banzhafWork allows: in one
// coalition S, a voter outside it swings when w(S) < q ≤ w(S) + w, and one
// inside when w(S) − w < q ≤ w(S), so a coalition tests every voter at once.
// The voters are sorted largest first, so those that swing are a prefix of
// the ones outside (or inside) S, counted with popcounts. The generator is
// seeded with a constant: the same reading gives the same figures.
func banzhafSampled(voters []rankedWeight, quota u128, k int) (samples int, swings []uint64, all uint64, errs []Fraction) {
	n := len(voters)
	samples = min(max(banzhafWork/n, banzhafMinSamples), banzhafMaxSamples)
	rng := rand.New(rand.NewPCG(0x9e3779b97f4a7c15, 0xbf58476d1ce4e5b9))
	words := (n + 63) / 64
	in := make([]uint64, words)
	swings = make([]uint64, k)
	// in[0, t) counted: how many of the first t voters are in S.
	inPrefix := func(t int) int {
		c := 0
		for i := range t / 64 {
			c += bits.OnesCount64(in[i])
		}
		if r := t % 64; r > 0 {
			c += bits.OnesCount64(in[t/64] & (1<<r - 1))
		}
		return c
	}
	// firstBelow is the first voter (largest first) weighing less than x:
	// voters [0, firstBelow) weigh at least x.
	firstBelow := func(x u128) int {
		lo, hi := 0, n
		for lo < hi {
			m := (lo + hi) / 2
			if voters[m].v.less(x) {
				hi = m
			} else {
				lo = m + 1
			}
		}
		return lo
	}
	// For the error: Σ y² and Σ x_i·y, y a coalition's swings, x_i voter i's.
	var sumY2 float64
	sumXY := make([]float64, k)
	for range samples {
		var s u128
		var y uint64
		for wi := range words {
			bitsOf := rng.Uint64()
			if wi == words-1 && n%64 != 0 {
				bitsOf &= 1<<(n%64) - 1
			}
			in[wi] = bitsOf
			for bitsOf != 0 {
				j := wi*64 + bits.TrailingZeros64(bitsOf)
				s, _ = s.add(voters[j].v) // ≤ the total
				bitsOf &= bitsOf - 1
			}
		}
		if s.less(quota) {
			// Outside S, a voter swings when w ≥ q − w(S): a prefix of the voters.
			t := firstBelow(quota.sub(s))
			y = uint64(t - inPrefix(t))
			for i := range min(k, t) {
				if in[i/64]&(1<<(i%64)) == 0 {
					swings[i]++
					sumXY[i] += float64(y)
				}
			}
		} else {
			// Inside S, a voter swings when w > w(S) − q, that is w ≥ w(S) − q + 1.
			over, _ := s.sub(quota).add(u128{0, 1})
			t := firstBelow(over)
			y = uint64(inPrefix(t))
			for i := range min(k, t) {
				if in[i/64]&(1<<(i%64)) != 0 {
					swings[i]++
					sumXY[i] += float64(y)
				}
			}
		}
		all += y
		sumY2 += float64(y) * float64(y)
	}
	// Error: the index is a ratio of means, x̄_i / ȳ (x_i voter i's swing in a
	// coalition, y the coalition's swings); by the delta method its variance
	// is (Var x − 2R·Cov(x, y) + R²·Var y) / (m·ȳ²), and the error is 1.96 of
	// its standard deviations.
	errs = make([]Fraction, k)
	m := float64(samples)
	meanY := float64(all) / m
	varY := sumY2/m - meanY*meanY
	for i := range k {
		meanX := float64(swings[i]) / m
		e := 1.0
		if meanY > 0 {
			r := meanX / meanY
			varX := meanX - meanX*meanX // x is 0 or 1
			cov := sumXY[i]/m - meanX*meanY
			e = 1.96 * math.Sqrt(max(varX-2*r*cov+r*r*varY, 0)/m) / meanY
		}
		// The error is a bound people read, so it is rounded up, never down.
		errs[i] = Fraction{Millionths: int64(math.Ceil(e * 1e6)), Defined: true}
	}
	return samples, swings, all, errs
}
