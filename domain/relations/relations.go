// Package relations is who holds what across the map: a group is a map with
// the accounts of its newest holdings reading, each with its weight and its
// share of the group's total weight. Shares and Jaccard indices are exact
// ratios rounded once, half up, to twelve decimal places (an integer count of
// 10^-12), never floats.
package relations

import (
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Scale is what a share or a Jaccard index is counted in: 10^-12.
const Scale = 1_000_000_000_000

// Kinds of group, by the reader of their reading.
const (
	KindDAO   = "dao"
	KindPool  = "pool"
	KindToken = "token"
	KindOther = "other"
)

// KindOf is a reader's kind of group: DAO members, pool delegators, token
// holders, or other.
func KindOf(reader string) string {
	switch reader {
	case "near-dao-members":
		return KindDAO
	case "near-staking-pool":
		return KindPool
	case "near-ft-balances", "evm-erc20-holders", "evm-erc20-delegates":
		// A token's holders and its delegates are two readings of one map.
		return KindToken
	}
	return KindOther
}

// Holdings reports whether a reader's readings are holdings a group is made
// of: a DAO's proposals and votes are not (their accounts are voters).
func Holdings(reader string) bool { return reader != "near-dao-proposals" }

// Weighted is one account of a reading and its weight, a non-negative
// decimal as the reading gives it.
type Weighted struct {
	Account string
	Weight  string
}

// Member is one account of a group: its weight, its share of the group's
// total in 10^-12 (rounded half up once) and its rank by share (1 the
// largest; equal shares share a rank, the next rank counting them all).
type Member struct {
	Account string
	Weight  string
	Share   int64
	Rank    int
}

// Members makes a reading's accounts a group's members, ordered by share
// (largest first, then account) with their ranks, and the group's total
// weight as decimal text. An account listed twice is an error, as is a
// weight that is not a non-negative decimal. When the total is zero every
// share is zero.
func Members(accounts []Weighted) ([]Member, string, error) {
	type parsed struct {
		w   *big.Rat
		idx int
	}
	ws := make([]parsed, len(accounts))
	total := new(big.Rat)
	seen := make(map[string]struct{}, len(accounts))
	for i, a := range accounts {
		if _, dup := seen[a.Account]; dup {
			return nil, "", fmt.Errorf("relations: account %s is listed twice", a.Account)
		}
		seen[a.Account] = struct{}{}
		w, ok := parseDecimal(a.Weight)
		if !ok {
			return nil, "", fmt.Errorf("relations: weight %q of %s is not a non-negative decimal", a.Weight, a.Account)
		}
		ws[i] = parsed{w, i}
		total.Add(total, w)
	}
	out := make([]Member, len(accounts))
	scale := new(big.Int).SetInt64(Scale)
	num, den := new(big.Int), new(big.Int)
	for i, p := range ws {
		var share int64
		if total.Sign() > 0 {
			// share = w / total × 10^12, rounded half up: floor((2n + d) / 2d).
			num.Mul(p.w.Num(), total.Denom())
			num.Mul(num, scale)
			den.Mul(p.w.Denom(), total.Num())
			share = roundHalfUp(num, den)
		}
		out[i] = Member{Account: accounts[p.idx].Account, Weight: accounts[p.idx].Weight, Share: share}
	}
	slices.SortFunc(out, func(a, b Member) int {
		if a.Share != b.Share {
			if a.Share > b.Share {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Account, b.Account)
	})
	for i := range out {
		if i > 0 && out[i].Share == out[i-1].Share {
			out[i].Rank = out[i-1].Rank
		} else {
			out[i].Rank = i + 1
		}
	}
	return out, decimalText(total), nil
}

// Ratio is n / d in 10^-12, rounded half up once (0 when d is 0).
func Ratio(n, d int64) int64 {
	if d <= 0 || n <= 0 {
		return 0
	}
	num := new(big.Int).Mul(big.NewInt(n), big.NewInt(Scale))
	return roundHalfUp(num, big.NewInt(d))
}

// Jaccard is |A ∩ B| / |A ∪ B| in 10^-12, from the shared count and the two
// sizes.
func Jaccard(shared, a, b int64) int64 { return Ratio(shared, a+b-shared) }

func roundHalfUp(num, den *big.Int) int64 {
	n := new(big.Int).Lsh(num, 1)
	n.Add(n, den)
	d := new(big.Int).Lsh(den, 1)
	return n.Quo(n, d).Int64()
}

// Format writes a count of 10^-12 as decimal text, without trailing zeros:
// 250000000000 is "0.25", 10^12 is "1".
func Format(e12 int64) string {
	neg := e12 < 0
	if neg {
		e12 = -e12
	}
	whole, frac := e12/Scale, e12%Scale
	s := strconv.FormatInt(whole, 10)
	if frac != 0 {
		f := strings.TrimRight(fmt.Sprintf("%012d", frac), "0")
		s += "." + f
	}
	if neg {
		s = "-" + s
	}
	return s
}

// parseDecimal reads a non-negative decimal ("12", "0.5", "1e3" is refused).
func parseDecimal(s string) (*big.Rat, bool) {
	if s == "" || len(s) > 200 {
		return nil, false
	}
	dot := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && !dot && i > 0 && i < len(s)-1:
			dot = true
		default:
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// decimalText writes a sum of decimals exactly (its denominator is a power
// of ten).
func decimalText(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	// The denominator divides 10^k for the smallest such k.
	k := 0
	d := new(big.Int).Set(r.Denom())
	ten, two, five := big.NewInt(10), big.NewInt(2), big.NewInt(5)
	zero := new(big.Int)
	for d.Cmp(big.NewInt(1)) != 0 {
		m := new(big.Int)
		switch {
		case m.Mod(d, ten).Cmp(zero) == 0:
			d.Quo(d, ten)
		case m.Mod(d, two).Cmp(zero) == 0:
			d.Quo(d, two)
		case m.Mod(d, five).Cmp(zero) == 0:
			d.Quo(d, five)
		default:
			return r.FloatString(12)
		}
		k++
	}
	return strings.TrimRight(strings.TrimRight(r.FloatString(k), "0"), ".")
}
