package snapshots

import (
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/petal-near/petal/domain/errs"
)

// FractionDigits is how many decimals a published fraction keeps. Every
// figure is computed exactly from the decimal weights and rounded once, at
// the end, half to even (docs/figures.md).
const FractionDigits = 6

var fractionScale = big.NewInt(1_000_000) // 10^FractionDigits

// Fraction is an exact ratio rounded half to even to six decimals, written as
// a JSON number ("0.5", "0.333333", "1"), or null when it is undefined (a
// share of nothing).
type Fraction struct {
	Millionths int64 // the value times 10^6, rounded half to even
	Defined    bool
}

// NewFraction rounds num/den (both ≥ 0) half to even to six decimals. A zero
// denominator is undefined.
func NewFraction(num, den *big.Int) Fraction {
	if den.Sign() == 0 {
		return Fraction{}
	}
	q, r := new(big.Int), new(big.Int)
	q.QuoRem(new(big.Int).Mul(num, fractionScale), den, r)
	switch new(big.Int).Lsh(r, 1).Cmp(den) {
	case 1:
		q.Add(q, big.NewInt(1))
	case 0:
		if q.Bit(0) == 1 {
			q.Add(q, big.NewInt(1))
		}
	}
	return Fraction{Millionths: q.Int64(), Defined: true}
}

// String is the fraction as a decimal without trailing zeros, or "null".
func (f Fraction) String() string {
	if !f.Defined {
		return "null"
	}
	neg := f.Millionths < 0
	m := f.Millionths
	if neg {
		m = -m
	}
	whole, frac := m/1_000_000, m%1_000_000
	s := strconv.FormatInt(whole, 10)
	if frac != 0 {
		fs := strconv.FormatInt(frac+1_000_000, 10)[1:]
		s += "." + strings.TrimRight(fs, "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Float is the rounded value, for drawing and sorting; 0 when undefined.
func (f Fraction) Float() float64 { return float64(f.Millionths) / 1e6 }

// MarshalJSON writes the fraction as a JSON number, or null.
func (f Fraction) MarshalJSON() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalJSON reads what MarshalJSON wrote.
func (f *Fraction) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		*f = Fraction{}
		return nil
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() < 0 {
		return errs.Newf(errs.BadInput, "%q is not a fraction from 0 up", s)
	}
	*f = NewFraction(r.Num(), r.Denom())
	return nil
}

// Figures are the concentration figures of one set of accounts.
type Figures struct {
	Count       int    `json:"count"`
	TotalWeight string `json:"total_weight"` // exact decimal, in the token's units
	// Shares of the total held by the top account, the top 10, and the top 1%
	// of accounts (rounded up to whole accounts: Top1PctCount of them).
	Top1Share    Fraction `json:"top1_share"`
	Top10Share   Fraction `json:"top10_share"`
	Top1PctShare Fraction `json:"top1pct_share"`
	Top1PctCount int      `json:"top1pct_count"`
	// Gini in its population form: the mean absolute difference over twice
	// the mean, with no n/(n−1) correction.
	Gini Fraction `json:"gini"`
	// Nakamoto is the fewest accounts that together hold more than half;
	// null when nobody holds anything.
	Nakamoto *int `json:"nakamoto"`
	// HHI is the Herfindahl–Hirschman index, the sum of squared shares (0 to 1).
	HHI Fraction `json:"hhi"`
}

// GroupFigures are the figures of the accounts in one group, with the
// group's share of the whole snapshot.
type GroupFigures struct {
	ID    string   `json:"id"`
	Label string   `json:"label"`
	Share Fraction `json:"share"` // the group's weight over the snapshot's total
	Figures
}

// FigureSet is what compute_figures answers for one snapshot.
type FigureSet struct {
	Figures
	Groups []GroupFigures `json:"groups"`
	// Banzhaf is what a vote of the whole reading's weight gives its largest
	// accounts; null when nobody holds anything, or past 128 bits.
	Banzhaf *Banzhaf `json:"banzhaf"`
}

// Weights are a snapshot's account weights as integers on one common decimal
// scale, so every figure is exact integer arithmetic.
type Weights struct {
	Values []*big.Int // Values[i] is Accounts[i].Weight × 10^Scale
	Scale  int
}

// ParseWeights reads every account's weight exactly. A weight that is not a
// non-negative decimal is bad_input naming the account.
func ParseWeights(accounts []Account) (Weights, error) {
	ints := make([]*big.Int, len(accounts))
	scales := make([]int, len(accounts))
	maxScale := 0
	for i, a := range accounts {
		v, scale, ok := parseDecimal(a.Weight)
		if !ok {
			return Weights{}, weightError(i, a.Weight)
		}
		ints[i], scales[i] = v, scale
		maxScale = max(maxScale, scale)
	}
	ten := big.NewInt(10)
	for i := range ints {
		if d := maxScale - scales[i]; d > 0 {
			ints[i].Mul(ints[i], new(big.Int).Exp(ten, big.NewInt(int64(d)), nil))
		}
	}
	return Weights{Values: ints, Scale: maxScale}, nil
}

// parseDecimal reads digits with an optional fractional part ("12", "0.25").
// Exponents, signs and other forms are refused so a weight means one thing.
func parseDecimal(s string) (*big.Int, int, bool) {
	whole, frac, ok := splitDecimal(s)
	if !ok {
		return nil, 0, false
	}
	v := new(big.Int)
	setDigits(v, whole)
	if frac != "" {
		v.Mul(v, pow10(len(frac)))
		v.Add(v, setDigits(new(big.Int), frac))
	}
	return v, len(frac), true
}

var tenTo19 = new(big.Int).SetUint64(10_000_000_000_000_000_000)

// splitDecimal checks a weight's form and splits it into its whole digits and
// its fractional digits without trailing zeros. Both parsers use it, so they
// accept and refuse the same strings.
func splitDecimal(s string) (whole, frac string, ok bool) {
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || (hasDot && frac == "") || len(s) > 200 {
		return "", "", false
	}
	for _, part := range []string{whole, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return "", "", false
			}
		}
	}
	return whole, strings.TrimRight(frac, "0"), true
}

func weightError(i int, weight string) error {
	return errs.Newf(errs.BadInput, "accounts[%d].weight: %q is not a non-negative decimal", i, truncate(weight, 40)).
		WithHint("weights are decimal strings such as \"1250\" or \"0.5\"")
}

// setDigits sets z to the decimal digits s (already checked), nineteen at a
// time: several times faster than SetString on 100,000 weights.
func setDigits(z *big.Int, s string) *big.Int {
	first := len(s) % 19
	if first == 0 {
		first = min(19, len(s))
	}
	n, _ := strconv.ParseUint(s[:first], 10, 64)
	z.SetUint64(n)
	var chunk big.Int
	for i := first; i < len(s); i += 19 {
		n, _ := strconv.ParseUint(s[i:i+19], 10, 64)
		z.Mul(z, tenTo19)
		z.Add(z, chunk.SetUint64(n))
	}
	return z
}

func pow10(n int) *big.Int {
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// FormatScaled writes v / 10^scale as a decimal without trailing zeros.
func FormatScaled(v *big.Int, scale int) string {
	s := v.String()
	if scale == 0 {
		return s
	}
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	whole, frac := s[:len(s)-scale], strings.TrimRight(s[len(s)-scale:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// computeFiguresBig is the reference computation: every weight a math/big
// integer, sorted per set. ComputeFigures falls back to it when a snapshot's
// total does not fit in 128 bits, and the differential tests hold the fast
// path to its every digit.
func computeFiguresBig(s *Snapshot, onlyGroup string) (FigureSet, error) {
	w, err := ParseWeights(s.Accounts)
	if err != nil {
		return FigureSet{}, err
	}
	if err := checkGroup(s, onlyGroup); err != nil {
		return FigureSet{}, err
	}
	all := FiguresOf(w.Values, w.Scale)
	out := FigureSet{Figures: all, Groups: []GroupFigures{}}
	// The Banzhaf index has its own reference (brute force, in its tests); this
	// path gives the fixed-width one's where the weights fit 128 bits, and
	// none past them.
	if r, err := RankWeights(s.Accounts); err == nil && !r.wide {
		out.Banzhaf = banzhafOf(r.desc, r.total, r.scale, s.Accounts)
	}
	total := sum(w.Values)
	for _, g := range s.Groups {
		if onlyGroup != "" && g.ID != onlyGroup {
			continue
		}
		var members []*big.Int
		for i, a := range s.Accounts {
			if slices.Contains(a.Groups, g.ID) {
				members = append(members, w.Values[i])
			}
		}
		out.Groups = append(out.Groups, GroupFigures{
			ID:      g.ID,
			Label:   g.Label,
			Share:   NewFraction(sum(members), total),
			Figures: FiguresOf(members, w.Scale),
		})
	}
	return out, nil
}

// checkGroup refuses a group filter that names none of the snapshot's groups.
func checkGroup(s *Snapshot, onlyGroup string) error {
	if onlyGroup != "" && !slices.ContainsFunc(s.Groups, func(g Group) bool { return g.ID == onlyGroup }) {
		return errs.Newf(errs.BadInput, "group: %q is not one of this snapshot's groups", truncate(onlyGroup, 80)).
			WithHint("describe_snapshot lists the groups")
	}
	return nil
}

// FiguresOf computes the figures of weights already on one scale. It does not
// change values.
func FiguresOf(values []*big.Int, scale int) Figures {
	n := len(values)
	desc := slices.Clone(values)
	slices.SortFunc(desc, func(a, b *big.Int) int { return b.Cmp(a) })
	total := sum(desc)
	f := Figures{Count: n, TotalWeight: FormatScaled(total, scale), Top1PctCount: (n + 99) / 100}
	f.Top1Share = NewFraction(sum(desc[:min(1, n)]), total)
	f.Top10Share = NewFraction(sum(desc[:min(10, n)]), total)
	f.Top1PctShare = NewFraction(sum(desc[:f.Top1PctCount]), total)
	if total.Sign() == 0 {
		return f // nobody holds anything: every share, Gini, HHI and Nakamoto are undefined
	}

	// Nakamoto: walk down from the largest until the running sum passes half.
	run := new(big.Int)
	for i, v := range desc {
		run.Add(run, v)
		if new(big.Int).Lsh(run, 1).Cmp(total) > 0 {
			k := i + 1
			f.Nakamoto = &k
			break
		}
	}

	// Gini = Σ_i Σ_j |x_i − x_j| / (2 n² μ) = Σ_i (2i − n − 1) x_(i) / (n T),
	// with x_(i) ascending and i from 1. Ascending is desc read backwards.
	gnum, term := new(big.Int), new(big.Int)
	for i := 1; i <= n; i++ {
		term.SetInt64(int64(2*i - n - 1))
		term.Mul(term, desc[n-i])
		gnum.Add(gnum, term)
	}
	f.Gini = NewFraction(gnum, new(big.Int).Mul(big.NewInt(int64(n)), total))

	// HHI = Σ (x_i / T)² = Σ x_i² / T².
	sq := new(big.Int)
	for _, v := range desc {
		sq.Add(sq, term.Mul(v, v))
	}
	f.HHI = NewFraction(sq, new(big.Int).Mul(total, total))
	return f
}

func sum(values []*big.Int) *big.Int {
	t := new(big.Int)
	for _, v := range values {
		t.Add(t, v)
	}
	return t
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
