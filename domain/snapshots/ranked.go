package snapshots

import (
	"math/big"
	"math/bits"
	"slices"
	"sync"
	"unsafe"
)

// The fast figures path. Weights are read into 128-bit integers, sorted once,
// and every figure of the snapshot and of each group is a walk down that one
// order with fixed-width sums; math/big appears only in the last handful of
// divisions (NewFraction, the same rounding as the reference path).
//
// Why 128 bits is enough: when the total T fits in 128 bits, so does every
// weight and every partial sum; Σ of the n prefix sums (the Gini numerator's
// half) is at most n·T < 2^160, and Σ x² ≤ T² < 2^256, so the 256-bit
// accumulators cannot overflow. A snapshot whose scaled weights or total do
// not fit falls back to computeFiguresBig.

type u128 struct{ hi, lo uint64 }

func (a u128) less(b u128) bool { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo) }

// add returns a+b and whether it overflowed 128 bits.
func (a u128) add(b u128) (u128, bool) {
	lo, c := bits.Add64(a.lo, b.lo, 0)
	hi, c := bits.Add64(a.hi, b.hi, c)
	return u128{hi, lo}, c != 0
}

// sub returns a−b for a ≥ b.
func (a u128) sub(b u128) u128 {
	lo, borrow := bits.Sub64(a.lo, b.lo, 0)
	hi, _ := bits.Sub64(a.hi, b.hi, borrow)
	return u128{hi, lo}
}

// mulAdd returns a·m + c and whether it overflowed 128 bits.
func (a u128) mulAdd(m, c uint64) (u128, bool) {
	carry, lo := bits.Mul64(a.lo, m)
	over, hi := bits.Mul64(a.hi, m)
	hi, c1 := bits.Add64(hi, carry, 0)
	lo, c2 := bits.Add64(lo, c, 0)
	hi, c3 := bits.Add64(hi, 0, c2)
	return u128{hi, lo}, over != 0 || c1 != 0 || c3 != 0
}

func (a u128) big() *big.Int {
	var b [16]byte
	for i := range 8 {
		b[i] = byte(a.hi >> (56 - 8*i))
		b[8+i] = byte(a.lo >> (56 - 8*i))
	}
	return new(big.Int).SetBytes(b[:])
}

// u256 is an accumulator, limbs least significant first.
type u256 [4]uint64

func (z *u256) add128(a u128) {
	var c uint64
	z[0], c = bits.Add64(z[0], a.lo, 0)
	z[1], c = bits.Add64(z[1], a.hi, c)
	z[2], c = bits.Add64(z[2], 0, c)
	z[3], _ = bits.Add64(z[3], 0, c)
}

// addSquare adds a².
func (z *u256) addSquare(a u128) {
	// a² = lo² + 2·hi·lo·2^64 + hi²·2^128
	h, l := bits.Mul64(a.lo, a.lo)
	z.addShifted(0, u128{h, l})
	if a.hi != 0 {
		h, l = bits.Mul64(a.hi, a.lo)
		z.addShifted(1, u128{h, l})
		z.addShifted(1, u128{h, l})
		h, l = bits.Mul64(a.hi, a.hi)
		z.addShifted(2, u128{h, l})
	}
}

// addShifted adds a·2^(64·limb).
func (z *u256) addShifted(limb int, a u128) {
	var c uint64
	z[limb], c = bits.Add64(z[limb], a.lo, 0)
	z[limb+1], c = bits.Add64(z[limb+1], a.hi, c)
	for i := limb + 2; i < 4; i++ {
		z[i], c = bits.Add64(z[i], 0, c)
	}
}

func (z *u256) big() *big.Int {
	var b [32]byte
	for limb := range 4 {
		for i := range 8 {
			b[31-8*limb-i] = byte(z[limb] >> (8 * i))
		}
	}
	return new(big.Int).SetBytes(b[:])
}

// rankedWeight is one account's weight with its index in Accounts.
type rankedWeight struct {
	v   u128
	idx uint32
}

// RankedWeights are a snapshot's weights parsed once and sorted once, largest
// first: everything compute_figures needs, for any group filter. They do not
// hold the snapshot, so they can be kept beside its decoded form.
type RankedWeights struct {
	desc  []rankedWeight // nil when the weights do not fit 128 bits
	total u128
	scale int
	wide  bool // the total needs more than 128 bits: figures take the math/big path

	// The Banzhaf index depends on the weights alone: made once, by the
	// first call that needs it, and kept with the ranked weights.
	banzhafOnce sync.Once
	banzhaf     *Banzhaf
}

// RankWeights parses every account's weight exactly and sorts them. A weight
// that is not a non-negative decimal is bad_input naming the account, as in
// ParseWeights.
func RankWeights(accounts []Account) (*RankedWeights, error) {
	if uint64(len(accounts)) >= 1<<32 {
		return &RankedWeights{wide: true}, nil
	}
	desc := make([]rankedWeight, len(accounts))
	scales := make([]uint8, len(accounts)) // splitDecimal refuses more than 200 characters
	maxScale, wide := 0, false
	for i, a := range accounts {
		whole, frac, ok := splitDecimal(a.Weight)
		if !ok {
			return nil, weightError(i, a.Weight)
		}
		if wide {
			continue // keep checking every weight's form
		}
		v, over := digits128(u128{}, whole)
		if !over {
			v, over = digits128(v, frac)
		}
		wide = over
		desc[i] = rankedWeight{v: v, idx: uint32(i)}
		scales[i] = uint8(len(frac))
		maxScale = max(maxScale, len(frac))
	}
	if wide {
		return &RankedWeights{wide: true}, nil
	}
	var total u128
	for i := range desc {
		d := maxScale - int(scales[i])
		for over := false; d > 0; d -= 19 {
			step := min(d, 19)
			if desc[i].v, over = desc[i].v.mulAdd(pow10u64[step], 0); over {
				return &RankedWeights{wide: true}, nil
			}
		}
		var over bool
		if total, over = total.add(desc[i].v); over {
			return &RankedWeights{wide: true}, nil
		}
	}
	desc = sortDesc(desc, make([]rankedWeight, len(desc)))
	return &RankedWeights{desc: desc, total: total, scale: maxScale}, nil
}

// RankedFootprint is roughly what the ranked weights of n accounts hold, for
// a cache that keeps room for them before they are made.
func RankedFootprint(n int) int {
	return int(unsafe.Sizeof(RankedWeights{})) + n*int(unsafe.Sizeof(rankedWeight{}))
}

// Bytes is roughly what the ranked weights hold in memory, for a cache
// bounded in bytes.
func (r *RankedWeights) Bytes() int {
	return int(unsafe.Sizeof(*r)) + cap(r.desc)*int(unsafe.Sizeof(rankedWeight{}))
}

var pow10u64 = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// digits128 appends the decimal digits s (already checked) to v, nineteen at
// a time, and says whether the result overflowed 128 bits.
func digits128(v u128, s string) (u128, bool) {
	for len(s) > 0 {
		n := min(len(s), 19)
		var chunk uint64
		for i := range n {
			chunk = chunk*10 + uint64(s[i]-'0')
		}
		var over bool
		if v, over = v.mulAdd(pow10u64[n], chunk); over {
			return v, true
		}
		s = s[n:]
	}
	return v, false
}

// ComputeFigures computes the figures of a snapshot and of each of its groups
// (only the group named by onlyGroup when it is not empty, which must be one of
// the snapshot's groups).
func ComputeFigures(s *Snapshot, onlyGroup string) (FigureSet, error) {
	r, err := RankWeights(s.Accounts)
	if err != nil {
		return FigureSet{}, err
	}
	return r.Figures(s, onlyGroup)
}

// Figures computes the figures of s, whose weights r ranks (r must come from
// RankWeights(s.Accounts)).
func (r *RankedWeights) Figures(s *Snapshot, onlyGroup string) (FigureSet, error) {
	if r.wide {
		return computeFiguresBig(s, onlyGroup)
	}
	if err := checkGroup(s, onlyGroup); err != nil {
		return FigureSet{}, err
	}
	values := make([]u128, len(r.desc))
	for i, w := range r.desc {
		values[i] = w.v
	}
	r.banzhafOnce.Do(func() { r.banzhaf = banzhafOf(r.desc, r.total, r.scale, s.Accounts) })
	out := FigureSet{Figures: figuresOf128(values, r.total, r.scale), Groups: []GroupFigures{}, Banzhaf: r.banzhaf}
	member := r.memberships(s, onlyGroup)
	var totalBig *big.Int
	for gi, g := range s.Groups {
		if member[gi] == nil {
			continue
		}
		// The group's members in the one sorted order: no second sort.
		members, sum := values[:0], u128{}
		for _, w := range r.desc {
			if member[gi][w.idx/64]&(1<<(w.idx%64)) != 0 {
				members = append(members, w.v)
				sum, _ = sum.add(w.v) // ≤ the total, which fits
			}
		}
		if totalBig == nil {
			totalBig = r.total.big()
		}
		out.Groups = append(out.Groups, GroupFigures{
			ID:      g.ID,
			Label:   g.Label,
			Share:   NewFraction(sum.big(), totalBig),
			Figures: figuresOf128(members, sum, r.scale),
		})
	}
	return out, nil
}

// memberships reads the accounts once, in order, into one bit set per wanted
// group (nil for a group left out), so the walk down the sorted weights tests
// a bit instead of reaching back into the accounts at random.
func (r *RankedWeights) memberships(s *Snapshot, onlyGroup string) [][]uint64 {
	member := make([][]uint64, len(s.Groups))
	index := make(map[string]int, len(s.Groups))
	for gi, g := range s.Groups {
		if onlyGroup != "" && g.ID != onlyGroup {
			continue
		}
		if _, dup := index[g.ID]; dup {
			// A repeated id: the reference gives it the same members.
			member[gi] = member[index[g.ID]]
			continue
		}
		index[g.ID] = gi
		member[gi] = make([]uint64, (len(s.Accounts)+63)/64)
	}
	for i, a := range s.Accounts {
		for _, id := range a.Groups {
			if gi, ok := index[id]; ok {
				member[gi][i/64] |= 1 << (i % 64)
			}
		}
	}
	return member
}

// figuresOf128 computes the figures of weights sorted largest first whose sum
// is total (which fits 128 bits), with the definitions of FiguresOf.
func figuresOf128(desc []u128, total u128, scale int) Figures {
	n := len(desc)
	totalBig := total.big()
	f := Figures{Count: n, TotalWeight: FormatScaled(totalBig, scale), Top1PctCount: (n + 99) / 100}

	// One walk: prefix sums give the top shares and Nakamoto; their sum is
	// Σ_i i·x_(i) over the ascending order (each ascending suffix is a
	// descending prefix), the Gini numerator's half; and Σ x².
	var run, top1, top10, top1pct u128
	var prefixSum, squares u256
	nakamoto := 0
	for i, v := range desc {
		run, _ = run.add(v) // ≤ total
		prefixSum.add128(run)
		squares.addSquare(v)
		switch i + 1 {
		case 1:
			top1 = run
		}
		if i+1 == min(10, n) {
			top10 = run
		}
		if i+1 == f.Top1PctCount {
			top1pct = run
		}
		// More than half: 2·run > T, that is run > T − run.
		if nakamoto == 0 && total.sub(run).less(run) {
			nakamoto = i + 1
		}
	}
	f.Top1Share = NewFraction(top1.big(), totalBig)
	f.Top10Share = NewFraction(top10.big(), totalBig)
	f.Top1PctShare = NewFraction(top1pct.big(), totalBig)
	if total == (u128{}) {
		return f // nobody holds anything: every share, Gini, HHI and Nakamoto are undefined
	}
	f.Nakamoto = &nakamoto

	// Gini = Σ_i (2i − n − 1) x_(i) / (n T) = (2 Σ_i i·x_(i) − (n+1) T) / (n T).
	nBig := big.NewInt(int64(n))
	gnum := prefixSum.big()
	gnum.Lsh(gnum, 1)
	gnum.Sub(gnum, new(big.Int).Mul(new(big.Int).Add(nBig, big.NewInt(1)), totalBig))
	f.Gini = NewFraction(gnum, new(big.Int).Mul(nBig, totalBig))

	f.HHI = NewFraction(squares.big(), new(big.Int).Mul(totalBig, totalBig))
	return f
}

// sortDesc sorts weights largest first, equal weights in account order. Small
// sets use the standard sort; large ones a least-significant-digit radix sort
// on bytes, linear in n, skipping the byte positions where every weight has
// the same byte (the high bytes of weights far below 2^128). It returns the
// sorted slice, which is a or buf.
func sortDesc(a, buf []rankedWeight) []rankedWeight {
	if len(a) < 512 {
		slices.SortFunc(a, func(x, y rankedWeight) int {
			switch {
			case y.v.less(x.v):
				return -1
			case x.v.less(y.v):
				return 1
			}
			return int(x.idx) - int(y.idx)
		})
		return a
	}
	// digit(p) is byte p (0 least significant) of the complement, so an
	// ascending sort on it is descending on the weight; LSD radix is stable.
	digit := func(w *rankedWeight, p int) uint8 {
		if p < 8 {
			return ^uint8(w.v.lo >> (8 * p))
		}
		return ^uint8(w.v.hi >> (8 * (p - 8)))
	}
	var counts [16][256]uint32
	for i := range a {
		for p := range 16 {
			counts[p][digit(&a[i], p)]++
		}
	}
	src, dst := a, buf[:len(a)]
	for p := range 16 {
		c := &counts[p]
		if c[digit(&src[0], p)] == uint32(len(src)) {
			continue // every weight has this byte
		}
		var offsets [256]uint32
		var at uint32
		for d := range 256 {
			offsets[d] = at
			at += c[d]
		}
		for i := range src {
			d := digit(&src[i], p)
			dst[offsets[d]] = src[i]
			offsets[d]++
		}
		src, dst = dst, src
	}
	return src
}
