package specs

import (
	"cmp"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/petal-near/petal/domain/snapshots"
)

// MaxGroupColours is how many groups get a colour of their own: the smallest
// palette's count, so a view's palette never changes which groups share a key.
const MaxGroupColours = 6

// KeyKind is what a colour key stands for.
type KeyKind int

// Key kinds.
const (
	KeyGroup     KeyKind = iota // one of the snapshot's groups, Index into the palette's colours
	KeyBand                     // a weight band, Index into the bands
	KeyUngrouped                // accounts in no coloured group
	KeyOthers                   // the folded tail
)

// Key is one colour of a flower, as its legend shows it.
type Key struct {
	Kind  KeyKind
	Index int
	Label string
}

// Petal is one petal as laid out.
type Petal struct {
	Account string // the account id; empty for the others petal
	Name    string // what is written on it
	Weight  *big.Int
	Share   snapshots.Fraction // of the snapshot's total weight
	Size    float64            // area relative to the largest petal's, in (0, 1]
	Key     int                // index into Flower.Keys
	Others  bool
	Folded  int // accounts folded into the others petal
}

// Flower is a spec laid out on its snapshot: which petals, in which order, at
// what size and colour. Rendering only draws it.
type Flower struct {
	Spec        Spec
	Petals      []Petal // drawing order, clockwise from twelve o'clock; others last
	Keys        []Key   // legend order: colours, then the tail's
	Count       int     // accounts in the snapshot
	Selected    int     // accounts the spec's groups select (Count without a group filter)
	Folded      int     // selected accounts that are not petals of their own
	FoldedShare snapshots.Fraction
	Hidden      bool // the folded accounts are not drawn (others: hide)
	Nakamoto    *int // of the whole snapshot
	Total       *big.Int
	Scale       int
}

// Layout lays a valid spec out on its snapshot. The spec must have passed
// ParseSpec and CheckAgainst.
func Layout(s Spec, snap *snapshots.Snapshot) (*Flower, error) {
	w, err := snapshots.ParseWeights(snap.Accounts)
	if err != nil {
		return nil, err
	}
	total := new(big.Int)
	for _, v := range w.Values {
		total.Add(total, v)
	}
	f := &Flower{Spec: s, Count: len(snap.Accounts), Total: total, Scale: w.Scale}

	groupOrder := map[string]int{}
	for i, g := range snap.Groups {
		if _, dup := groupOrder[g.ID]; !dup {
			groupOrder[g.ID] = i
		}
	}
	wanted := map[string]bool{}
	for _, g := range s.Petals.Groups {
		wanted[g] = true
	}
	// primary is an account's first group in the snapshot's order (among the
	// spec's groups when it names some), or -1.
	primary := func(a *snapshots.Account) int {
		best := -1
		for _, g := range a.Groups {
			i, ok := groupOrder[g]
			if ok && (len(wanted) == 0 || wanted[g]) && (best < 0 || i < best) {
				best = i
			}
		}
		return best
	}

	// Candidates: the accounts the spec's groups select.
	cands := make([]int, 0, len(snap.Accounts))
	candWeight := new(big.Int)
	for i := range snap.Accounts {
		if len(wanted) == 0 || slices.ContainsFunc(snap.Accounts[i].Groups, func(g string) bool { return wanted[g] }) {
			cands = append(cands, i)
			candWeight.Add(candWeight, w.Values[i])
		}
	}
	f.Selected = len(cands)
	f.Nakamoto = Nakamoto(w.Values, total)

	// The largest Top candidates, largest first; ties by account id, then
	// position, so the order depends on nothing but the snapshot. Only these
	// are ever sorted, which keeps 100,000 accounts cheap.
	top := largest(cands, s.Petals.Top, func(a, b int) bool {
		if c := w.Values[a].Cmp(w.Values[b]); c != 0 {
			return c > 0
		}
		if c := strings.Compare(snap.Accounts[a].ID, snap.Accounts[b].ID); c != 0 {
			return c < 0
		}
		return a < b
	})

	// Petals are a prefix of those: the ones whose share is at least
	// min_share (exactly: weight ≥ min_share × total) and, unless every petal
	// is the same size, whose weight is not zero.
	minWeight := new(big.Rat).Mul(new(big.Rat).SetFloat64(s.Petals.MinShare), new(big.Rat).SetInt(total))
	n := 0
	for n < len(top) {
		v := w.Values[top[n]]
		if new(big.Rat).SetInt(v).Cmp(minWeight) < 0 || (s.Size != SizeEqual && v.Sign() == 0) {
			break
		}
		n++
	}
	restWeight := new(big.Int).Set(candWeight)
	for _, i := range top[:n] {
		a := &snap.Accounts[i]
		restWeight.Sub(restWeight, w.Values[i])
		f.Petals = append(f.Petals, Petal{
			Account: a.ID,
			Name:    displayName(a),
			Weight:  w.Values[i],
			Share:   snapshots.NewFraction(w.Values[i], total),
			Key:     primary(a), // a group index until keys are made below
		})
	}
	f.Folded = len(cands) - n
	f.FoldedShare = snapshots.NewFraction(restWeight, total)
	f.Hidden = f.Folded > 0 && s.Others == OthersHide
	if f.Folded > 0 && s.Others == OthersFold && (s.Size == SizeEqual || restWeight.Sign() > 0) {
		f.Petals = append(f.Petals, Petal{
			Name:   groupDigits(f.Folded) + " others",
			Weight: restWeight,
			Share:  f.FoldedShare,
			Others: true,
			Folded: f.Folded,
		})
	}

	f.sizes()
	f.colours(snap, total)
	f.order()
	return f, nil
}

// sizes sets each petal's area relative to the largest.
func (f *Flower) sizes() {
	maxW := new(big.Int)
	for _, p := range f.Petals {
		if p.Weight.Cmp(maxW) > 0 {
			maxW = p.Weight
		}
	}
	biggest := 0.0
	for i := range f.Petals {
		p := &f.Petals[i]
		switch f.Spec.Size {
		case SizeEqual:
			p.Size = 1
		default:
			r := 0.0
			if maxW.Sign() > 0 {
				r, _ = new(big.Rat).SetFrac(p.Weight, maxW).Float64()
			}
			if f.Spec.Size == SizeSqrt {
				r = math.Sqrt(r)
			}
			p.Size = r
		}
		biggest = max(biggest, p.Size)
	}
	if biggest > 0 {
		for i := range f.Petals {
			f.Petals[i].Size /= biggest
		}
	}
}

// colours turns each petal's group (or band) into a key, and lists the keys
// in legend order.
func (f *Flower) colours(snap *snapshots.Snapshot, total *big.Int) {
	ungrouped, others := -1, -1
	keyOf := map[[2]int]int{} // (kind, index) → key
	addKey := func(k Key) int {
		id := [2]int{int(k.Kind), k.Index}
		if i, ok := keyOf[id]; ok {
			return i
		}
		keyOf[id] = len(f.Keys)
		f.Keys = append(f.Keys, k)
		return len(f.Keys) - 1
	}
	if f.Spec.Colour == ColourBand {
		bands := make([]int, len(f.Petals))
		present := map[int]bool{}
		for i, p := range f.Petals {
			if !p.Others {
				bands[i] = bandOfWeight(p.Weight, total)
				present[bands[i]] = true
			}
		}
		for b := range bandColours {
			if present[b] {
				addKey(Key{Kind: KeyBand, Index: b, Label: bandLabels[b]})
			}
		}
		for i := range f.Petals {
			if !f.Petals[i].Others {
				f.Petals[i].Key = keyOf[[2]int{int(KeyBand), bands[i]}]
			}
		}
	} else {
		// The groups holding the most petal weight get the colours; the rest
		// share the grey of accounts in no group.
		weightOf := map[int]*big.Int{}
		for _, p := range f.Petals {
			if !p.Others && p.Key >= 0 {
				if weightOf[p.Key] == nil {
					weightOf[p.Key] = new(big.Int)
				}
				weightOf[p.Key].Add(weightOf[p.Key], p.Weight)
			}
		}
		groups := make([]int, 0, len(weightOf))
		for g := range weightOf {
			groups = append(groups, g)
		}
		slices.SortFunc(groups, func(a, b int) int {
			if c := weightOf[b].Cmp(weightOf[a]); c != 0 {
				return c
			}
			return a - b
		})
		coloured := groups[:min(len(groups), MaxGroupColours)]
		slices.Sort(coloured) // legend in the snapshot's group order
		colourOf := map[int]int{}
		for slot, g := range coloured {
			label := snap.Groups[g].Label
			if strings.TrimSpace(label) == "" {
				label = snap.Groups[g].ID
			}
			colourOf[g] = addKey(Key{Kind: KeyGroup, Index: slot, Label: label})
		}
		overflow := len(groups) > len(coloured)
		hasNone := false
		for i := range f.Petals {
			p := &f.Petals[i]
			if p.Others {
				continue
			}
			if k, ok := colourOf[p.Key]; ok {
				p.Key = k
				continue
			}
			hasNone = hasNone || p.Key < 0
			p.Key = -1 // ungrouped, set below
		}
		label := "no group"
		switch {
		case overflow && hasNone:
			label = "other or no group"
		case overflow:
			label = "other groups"
		}
		for i := range f.Petals {
			if !f.Petals[i].Others && f.Petals[i].Key == -1 {
				if ungrouped < 0 {
					ungrouped = addKey(Key{Kind: KeyUngrouped, Label: label})
				}
				f.Petals[i].Key = ungrouped
			}
		}
	}
	for i := range f.Petals {
		if f.Petals[i].Others {
			if others < 0 {
				others = addKey(Key{Kind: KeyOthers, Label: "others: " + plural(f.Petals[i].Folded, "account") + " folded"})
			}
			f.Petals[i].Key = others
		}
	}
}

// bandOfWeight is the weight band of a share, exactly: ≥10%, ≥1%, ≥0.1%, less.
func bandOfWeight(v, total *big.Int) int {
	if total.Sign() == 0 {
		return len(bandColours) - 1
	}
	scaled := new(big.Int)
	for b, per := range []int64{10, 100, 1000} {
		if scaled.Mul(v, big.NewInt(per)).Cmp(total) >= 0 {
			return b
		}
	}
	return len(bandColours) - 1
}

// order sorts the petals as the spec says, keeping others last.
func (f *Flower) order() {
	byWeight := func(a, b Petal) int {
		if c := b.Weight.Cmp(a.Weight); c != 0 {
			return c
		}
		return strings.Compare(a.Account, b.Account)
	}
	slices.SortStableFunc(f.Petals, func(a, b Petal) int {
		if a.Others != b.Others {
			if a.Others {
				return 1
			}
			return -1
		}
		switch f.Spec.Order {
		case OrderGroup:
			if c := cmp.Compare(a.Key, b.Key); c != 0 {
				return c
			}
		case OrderName:
			if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
				return c
			}
			if c := strings.Compare(a.Name, b.Name); c != 0 {
				return c
			}
		}
		return byWeight(a, b)
	})
}

// largest is the k first of items by before (a strict order), in order,
// without sorting the rest: one comparison for most items.
func largest(items []int, k int, before func(a, b int) bool) []int {
	if k <= 0 {
		return nil
	}
	top := make([]int, 0, min(k, len(items)))
	for _, it := range items {
		if len(top) == k && !before(it, top[k-1]) {
			continue
		}
		pos, _ := slices.BinarySearchFunc(top, it, func(have, want int) int {
			if before(want, have) {
				return 1
			}
			return -1
		})
		if len(top) < k {
			top = append(top, 0)
		}
		copy(top[pos+1:], top[pos:len(top)-1])
		top[pos] = it
	}
	return top
}

// Nakamoto is the fewest of values that together hold more than half of
// total, or nil when total is zero. Quickselect by three-way partition:
// expected linear time, exact, and no full sort.
func Nakamoto(values []*big.Int, total *big.Int) *int {
	if total.Sign() == 0 {
		return nil
	}
	v := slices.Clone(values)
	acc, count := new(big.Int), 0
	twice := new(big.Int)
	over := func(x *big.Int) bool { return twice.Lsh(x, 1).Cmp(total) > 0 }
	for len(v) > 0 {
		pivot := medianOfThree(v[0], v[len(v)/2], v[len(v)-1])
		// Greater first, then equal, then less.
		var greater, equal, less []*big.Int
		for _, x := range v {
			switch x.Cmp(pivot) {
			case 1:
				greater = append(greater, x)
			case 0:
				equal = append(equal, x)
			default:
				less = append(less, x)
			}
		}
		sumG := new(big.Int).Set(acc)
		for _, x := range greater {
			sumG.Add(sumG, x)
		}
		if over(sumG) {
			v = greater // the answer lies among the greater ones
			continue
		}
		acc, count = sumG, count+len(greater)
		if pivot.Sign() > 0 {
			withAll := new(big.Int).Mul(pivot, big.NewInt(int64(len(equal))))
			withAll.Add(withAll, acc)
			if over(withAll) {
				// The fewest j with 2(acc + j·p) > total: j = ⌊(total − 2acc) / 2p⌋ + 1.
				j := new(big.Int).Sub(total, new(big.Int).Lsh(acc, 1))
				j.Quo(j, new(big.Int).Lsh(pivot, 1))
				k := count + int(j.Int64()) + 1
				return &k
			}
			acc = withAll
		}
		count += len(equal)
		v = less
	}
	return nil
}

func medianOfThree(a, b, c *big.Int) *big.Int {
	if a.Cmp(b) > 0 {
		a, b = b, a
	}
	if b.Cmp(c) > 0 {
		b = c
	}
	if a.Cmp(b) > 0 {
		return a
	}
	return b
}

// displayName is what a petal is called: the account's label, else the
// account part of its CAIP-10 id.
func displayName(a *snapshots.Account) string {
	if l := strings.TrimSpace(a.Label); l != "" {
		return l
	}
	id := a.ID
	if i := strings.LastIndexByte(id, ':'); i >= 0 && i+1 < len(id) {
		id = id[i+1:]
	}
	return id
}

// Percent writes a share as a percentage with one decimal, rounded half to
// even from the six-decimal fraction ("12.3%", "<0.1%" for a sliver, "0%").
func Percent(f snapshots.Fraction) string {
	if !f.Defined {
		return "–"
	}
	m := f.Millionths
	tenths, rem := m/1000, m%1000
	if rem > 500 || (rem == 500 && tenths%2 == 1) {
		tenths++
	}
	if tenths == 0 && m > 0 {
		return "<0.1%"
	}
	s := strconv.FormatInt(tenths/10, 10)
	if d := tenths % 10; d != 0 {
		s += "." + strconv.FormatInt(d, 10)
	}
	return s + "%"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return groupDigits(n) + " " + noun + "s"
}

// groupDigits writes n with thousands separators: 100,000.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
