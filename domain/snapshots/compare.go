package snapshots

import (
	"cmp"
	"encoding/json"
	"hash/maphash"
	"math/big"
	"math/bits"
	"slices"
	"strings"

	"github.com/petal-near/petal/domain/errs"
)

// compare_figures: two readings side by side (docs/figures.md, "Comparing
// two readings"). Every figure of each side, each figure's change, the
// accounts that entered and left, the largest movers by share and each
// group's share before and after.

// Bounds on a comparison's lists.
const (
	DefaultCompareLimit = 10
	MaxCompareLimit     = 100
	// MaxCompareOffset is past the end of any list: two readings hold at most
	// 2·MaxAccounts accounts between them.
	MaxCompareOffset = 2 * MaxAccounts
)

// ComparePage is which slice of each list a comparison answers: the same
// offset and limit for entered, left and both directions of movers.
type ComparePage struct {
	Offset int
	Limit  int // 0: DefaultCompareLimit
}

// Comparison is what compare_figures answers about readings a (before) and
// b (after).
type Comparison struct {
	A FigureSet `json:"a"`
	B FigureSet `json:"b"`
	// Change is each figure of b less the same figure of a.
	Change FiguresChange `json:"change"`
	// Groups are every group of either reading, a's order first.
	Groups []GroupChange `json:"groups"`
	// Entered are the accounts in b and not in a, the largest in b first;
	// Left the accounts in a and not in b, the largest in a first.
	Entered AccountMoves `json:"entered"`
	Left    AccountMoves `json:"left"`
	// MoversUp are the accounts whose share grew, the most first;
	// MoversDown those whose share fell, the most first. An account that
	// entered or left moves from or to nothing. Empty when either reading
	// holds nothing (a share of nothing is undefined).
	MoversUp   AccountMoves `json:"movers_up"`
	MoversDown AccountMoves `json:"movers_down"`
}

// FiguresChange is b's figures less a's. A fraction's change is the
// difference of the two published six-decimal values, so it reads as the
// two numbers shown subtracted, exactly; null when either is null.
type FiguresChange struct {
	Count        int      `json:"count"`
	TotalWeight  string   `json:"total_weight"` // exact signed decimal
	Top1Share    Fraction `json:"top1_share"`
	Top10Share   Fraction `json:"top10_share"`
	Top1PctShare Fraction `json:"top1pct_share"`
	Top1PctCount int      `json:"top1pct_count"`
	Gini         Fraction `json:"gini"`
	Nakamoto     *int     `json:"nakamoto"`
	HHI          Fraction `json:"hhi"`
}

// GroupChange is one group's share of its reading before and after. A group
// one reading doesn't have holds nothing there (share 0 when that reading
// holds anything).
type GroupChange struct {
	ID          string   `json:"id"`
	Label       string   `json:"label"`
	In          string   `json:"in"` // "both", "a" or "b": which readings have it
	ShareBefore Fraction `json:"share_before"`
	ShareAfter  Fraction `json:"share_after"`
	Change      Fraction `json:"change"`
	CountBefore int      `json:"count_before"`
	CountAfter  int      `json:"count_after"`
}

// AccountMoves is one page of a list of accounts, with how many the whole
// list holds.
type AccountMoves struct {
	Total    int           `json:"total"`
	Accounts []AccountMove `json:"accounts"`
}

// AccountMove is one account in both readings' terms. An account absent
// from a reading weighs "0" there.
type AccountMove struct {
	ID           string   `json:"id"`
	Label        string   `json:"label"`
	WeightBefore string   `json:"weight_before"`
	WeightAfter  string   `json:"weight_after"`
	ShareBefore  Fraction `json:"share_before"`
	ShareAfter   Fraction `json:"share_after"`
	Change       Fraction `json:"change"` // share_after − share_before, as published
}

// CheckComparable refuses two readings whose weights mean different things:
// another chain, another reader (what a weight counts), or another token
// (its units). The message names the field of b that differs.
func CheckComparable(a, b *Snapshot) error {
	if a.Chain != b.Chain {
		return errs.Newf(errs.BadInput, "b: a reading of %s, and a is of %s: their weights are not comparable", truncate(b.Chain, 40), truncate(a.Chain, 40)).
			WithHint("compare two readings of one chain, usually two readings of one map")
	}
	if a.Network != b.Network {
		return errs.Newf(errs.BadInput, "b: read by %s, and a by %s: their weights count different things", truncate(b.Network, 60), truncate(a.Network, 60)).
			WithHint("compare two readings by one reader, usually two readings of one map")
	}
	if ua, ub := unitOf(a.Params), unitOf(b.Params); ua != ub {
		return errs.Newf(errs.BadInput, "b: weighs in %s, and a in %s: their units differ", truncate(orNone(ub), 80), truncate(orNone(ua), 80)).
			WithHint("compare two readings of one token")
	}
	return nil
}

// unitOf is the token a reading's weights are counted in, when its params
// name one (a token's holders, an EVM token's contract); "" when the
// reader's own unit is the only one (members, NEAR staked).
func unitOf(params json.RawMessage) string {
	var p struct {
		Token    string `json:"token"`
		Contract string `json:"contract"`
	}
	_ = json.Unmarshal(params, &p) // a reading's params were checked when it was read
	return strings.ToLower(cmp.Or(p.Token, p.Contract))
}

func orNone(s string) string { return cmp.Or(s, "the reader's own unit") }

// Compare compares readings a and b, whose weights ra and rb rank
// (RankWeights of each one's accounts). Accounts are matched by id.
func Compare(a *Snapshot, ra *RankedWeights, b *Snapshot, rb *RankedWeights, page ComparePage) (Comparison, error) {
	if err := CheckComparable(a, b); err != nil {
		return Comparison{}, err
	}
	if page.Limit == 0 {
		page.Limit = DefaultCompareLimit
	}
	if page.Limit < 1 || page.Limit > MaxCompareLimit {
		return Comparison{}, errs.Newf(errs.BadInput, "limit: %d; from 1 to %d", page.Limit, MaxCompareLimit)
	}
	if page.Offset < 0 || page.Offset > MaxCompareOffset {
		return Comparison{}, errs.Newf(errs.BadInput, "offset: %d; from 0 to %d", page.Offset, MaxCompareOffset)
	}
	fa, err := ra.Figures(a, "")
	if err != nil {
		return Comparison{}, err
	}
	fb, err := rb.Figures(b, "")
	if err != nil {
		return Comparison{}, err
	}
	out := Comparison{A: fa, B: fb, Change: changeOf(fa.Figures, fb.Figures), Groups: groupChanges(fa, fb)}
	sa, sb := sideOf(a, ra), sideOf(b, rb)
	out.joinAccounts(a, sa, b, sb, page)
	return out, nil
}

// side is one reading's weights by account index, fixed-width or math/big.
type side struct {
	narrow []u128     // nil on the math/big path
	wide   []*big.Int // nil on the fixed-width path
	total  u128
	totalB *big.Int
	scale  int
}

func sideOf(s *Snapshot, r *RankedWeights) side {
	if r.wide {
		w, _ := ParseWeights(s.Accounts) // RankWeights has checked every weight's form
		return side{wide: w.Values, totalB: sum(w.Values), scale: w.Scale}
	}
	narrow := make([]u128, len(r.desc))
	for _, w := range r.desc {
		narrow[w.idx] = w.v
	}
	return side{narrow: narrow, total: r.total, totalB: r.total.big(), scale: r.scale}
}

func (s side) big(i int) *big.Int {
	if i < 0 {
		return new(big.Int)
	}
	if s.wide != nil {
		return s.wide[i]
	}
	return s.narrow[i].big()
}

// move is one account of either reading: its index in a and in b (−1 when
// absent) and the numerator of its share's change over the common
// denominator T_a·T_b, w_b·T_a − w_a·T_b, signed.
type move struct {
	ia, ib int32
	neg    bool
	mag    u256
	wide   *big.Int // the signed numerator on the math/big path
}

func (m *move) sign() int {
	if m.wide != nil {
		return m.wide.Sign()
	}
	if m.mag == (u256{}) {
		return 0
	}
	if m.neg {
		return -1
	}
	return 1
}

// cmpChange orders two moves by their change, signed.
func cmpChange(x, y *move) int {
	if x.wide != nil || y.wide != nil {
		return x.wide.Cmp(y.wide)
	}
	switch {
	case x.neg != y.neg:
		if x.neg {
			return -1
		}
		return 1
	case x.neg:
		return cmp256(y.mag, x.mag)
	}
	return cmp256(x.mag, y.mag)
}

func (out *Comparison) joinAccounts(a *Snapshot, sa side, b *Snapshot, sb side, page ComparePage) {
	// Matched by id. Readers mostly list a target's accounts in a stable
	// order, so an account is first looked for at its own position; the
	// rest go through a map of a's unmatched ids.
	matchedA := make([]uint64, (len(a.Accounts)+63)/64)
	inA := make([]int32, len(b.Accounts))
	unmatchedB := 0
	for j := range b.Accounts {
		inA[j] = -1
		if j < len(a.Accounts) && a.Accounts[j].ID == b.Accounts[j].ID {
			inA[j] = int32(j)
			matchedA[j/64] |= 1 << (j % 64)
		} else {
			unmatchedB++
		}
	}
	if unmatchedB > 0 {
		index := newIDIndex(len(a.Accounts) - (len(b.Accounts) - unmatchedB)) // a's accounts not matched by position
		for i := range a.Accounts {
			if matchedA[i/64]&(1<<(i%64)) == 0 {
				index.put(a.Accounts[i].ID, int32(i))
			}
		}
		for j := range b.Accounts {
			if inA[j] < 0 {
				if i := index.get(a.Accounts, b.Accounts[j].ID); i >= 0 {
					inA[j] = i
					matchedA[i/64] |= 1 << (i % 64)
				}
			}
		}
	}
	moves := make([]move, 0, len(b.Accounts)+len(a.Accounts)/8)
	for j := range b.Accounts {
		moves = append(moves, move{ia: inA[j], ib: int32(j)})
	}
	for i := range a.Accounts {
		if matchedA[i/64]&(1<<(i%64)) == 0 {
			moves = append(moves, move{ia: int32(i), ib: -1})
		}
	}
	bothHold := sa.totalB.Sign() > 0 && sb.totalB.Sign() > 0
	wide := sa.wide != nil || sb.wide != nil
	if bothHold {
		for k := range moves {
			m := &moves[k]
			if wide {
				p := new(big.Int).Mul(sb.big(int(m.ib)), sa.totalB)
				m.wide = p.Sub(p, new(big.Int).Mul(sa.big(int(m.ia)), sb.totalB))
				continue
			}
			var wa, wb u128
			if m.ia >= 0 {
				wa = sa.narrow[m.ia]
			}
			if m.ib >= 0 {
				wb = sb.narrow[m.ib]
			}
			p, q := mul128(wb, sa.total), mul128(wa, sb.total)
			if cmp256(p, q) >= 0 {
				m.mag = sub256(p, q)
			} else {
				m.neg, m.mag = true, sub256(q, p)
			}
		}
	}

	idOf := func(m *move) string {
		if m.ib >= 0 {
			return b.Accounts[m.ib].ID
		}
		return a.Accounts[m.ia].ID
	}
	byID := func(x, y *move) int { return strings.Compare(idOf(x), idOf(y)) }
	weightCmp := func(s side, i, j int32) int {
		if s.wide != nil {
			return s.wide[i].Cmp(s.wide[j])
		}
		return cmpU128(s.narrow[i], s.narrow[j])
	}
	// Ties go by id; cmp.Or would compare the ids on every call.
	thenByID := func(c int, x, y *move) int {
		if c != 0 {
			return c
		}
		return byID(x, y)
	}
	entered := topMoves(moves, page, func(m *move) bool { return m.ia < 0 }, func(x, y *move) int {
		return thenByID(weightCmp(sb, y.ib, x.ib), x, y)
	})
	left := topMoves(moves, page, func(m *move) bool { return m.ib < 0 }, func(x, y *move) int {
		return thenByID(weightCmp(sa, y.ia, x.ia), x, y)
	})
	up := topMoves(moves, page, func(m *move) bool { return m.sign() > 0 }, func(x, y *move) int {
		return thenByID(cmpChange(y, x), x, y)
	})
	down := topMoves(moves, page, func(m *move) bool { return m.sign() < 0 }, func(x, y *move) int {
		return thenByID(cmpChange(x, y), x, y)
	})
	describe := func(l listPage) AccountMoves {
		am := AccountMoves{Total: l.total, Accounts: make([]AccountMove, 0, len(l.moves))}
		for _, m := range l.moves {
			am.Accounts = append(am.Accounts, describeMove(a, sa, b, sb, m))
		}
		return am
	}
	out.Entered, out.Left, out.MoversUp, out.MoversDown = describe(entered), describe(left), describe(up), describe(down)
}

func describeMove(a *Snapshot, sa side, b *Snapshot, sb side, m *move) AccountMove {
	acct := func() Account {
		if m.ib >= 0 {
			return b.Accounts[m.ib]
		}
		return a.Accounts[m.ia]
	}()
	wa, wb := sa.big(int(m.ia)), sb.big(int(m.ib))
	before, after := NewFraction(wa, sa.totalB), NewFraction(wb, sb.totalB)
	return AccountMove{
		ID: acct.ID, Label: acct.Label,
		WeightBefore: FormatScaled(wa, sa.scale), WeightAfter: FormatScaled(wb, sb.scale),
		ShareBefore: before, ShareAfter: after, Change: fractionChange(before, after),
	}
}

type listPage struct {
	total int
	moves []*move
}

// topMoves is the page [offset, offset+limit) of the moves that keep
// passes, in order: a bounded heap when the page is near the top (the usual
// ask), a whole sort beyond.
func topMoves(moves []move, page ComparePage, keep func(*move) bool, order func(x, y *move) int) listPage {
	k := page.Offset + page.Limit
	var lp listPage
	var heap []*move // the k first so far, its root the last of them
	siftDown := func(i int) {
		for {
			l, r, top := 2*i+1, 2*i+2, i
			if l < len(heap) && order(heap[l], heap[top]) > 0 {
				top = l
			}
			if r < len(heap) && order(heap[r], heap[top]) > 0 {
				top = r
			}
			if top == i {
				return
			}
			heap[i], heap[top] = heap[top], heap[i]
			i = top
		}
	}
	for i := range moves {
		m := &moves[i]
		if !keep(m) {
			continue
		}
		lp.total++
		switch {
		case len(heap) < k:
			heap = append(heap, m)
			for c := len(heap) - 1; c > 0; {
				p := (c - 1) / 2
				if order(heap[c], heap[p]) <= 0 {
					break
				}
				heap[c], heap[p] = heap[p], heap[c]
				c = p
			}
		case order(m, heap[0]) < 0:
			heap[0] = m
			siftDown(0)
		}
	}
	slices.SortFunc(heap, order)
	if page.Offset < len(heap) {
		lp.moves = heap[page.Offset:]
	}
	return lp
}

func changeOf(a, b Figures) FiguresChange {
	c := FiguresChange{
		Count:        b.Count - a.Count,
		TotalWeight:  totalChange(a.TotalWeight, b.TotalWeight),
		Top1Share:    fractionChange(a.Top1Share, b.Top1Share),
		Top10Share:   fractionChange(a.Top10Share, b.Top10Share),
		Top1PctShare: fractionChange(a.Top1PctShare, b.Top1PctShare),
		Top1PctCount: b.Top1PctCount - a.Top1PctCount,
		Gini:         fractionChange(a.Gini, b.Gini),
		HHI:          fractionChange(a.HHI, b.HHI),
	}
	if a.Nakamoto != nil && b.Nakamoto != nil {
		d := *b.Nakamoto - *a.Nakamoto
		c.Nakamoto = &d
	}
	return c
}

// fractionChange is after − before of two published fractions; undefined
// when either is.
func fractionChange(before, after Fraction) Fraction {
	if !before.Defined || !after.Defined {
		return Fraction{}
	}
	return Fraction{Millionths: after.Millionths - before.Millionths, Defined: true}
}

// totalChange is b − a of two exact decimals, as an exact signed decimal.
func totalChange(a, b string) string {
	va, sca, _ := parseDecimal(a)
	vb, scb, _ := parseDecimal(b)
	scale := max(sca, scb)
	va.Mul(va, pow10(scale-sca))
	vb.Mul(vb, pow10(scale-scb))
	d := vb.Sub(vb, va)
	if d.Sign() < 0 {
		return "-" + FormatScaled(d.Neg(d), scale)
	}
	return FormatScaled(d, scale)
}

func groupChanges(a, b FigureSet) []GroupChange {
	nothing := func(f Figures) Fraction {
		if f.TotalWeight == "0" {
			return Fraction{}
		}
		return Fraction{Defined: true}
	}
	out := []GroupChange{}
	seen := map[string]bool{}
	for _, ga := range a.Groups {
		if seen[ga.ID] {
			continue
		}
		seen[ga.ID] = true
		gc := GroupChange{ID: ga.ID, Label: ga.Label, In: "a", ShareBefore: ga.Share, ShareAfter: nothing(b.Figures), CountBefore: ga.Count}
		if i := slices.IndexFunc(b.Groups, func(g GroupFigures) bool { return g.ID == ga.ID }); i >= 0 {
			gb := b.Groups[i]
			gc.In, gc.ShareAfter, gc.CountAfter = "both", gb.Share, gb.Count
		}
		gc.Change = fractionChange(gc.ShareBefore, gc.ShareAfter)
		out = append(out, gc)
	}
	for _, gb := range b.Groups {
		if seen[gb.ID] {
			continue
		}
		seen[gb.ID] = true
		gc := GroupChange{ID: gb.ID, Label: gb.Label, In: "b", ShareBefore: nothing(a.Figures), ShareAfter: gb.Share, CountAfter: gb.Count}
		gc.Change = fractionChange(gc.ShareBefore, gc.ShareAfter)
		out = append(out, gc)
	}
	return out
}

// mul128 is a·b in 256 bits.
func mul128(a, b u128) u256 {
	var z u256
	h, l := bits.Mul64(a.lo, b.lo)
	z.addShifted(0, u128{h, l})
	h, l = bits.Mul64(a.lo, b.hi)
	z.addShifted(1, u128{h, l})
	h, l = bits.Mul64(a.hi, b.lo)
	z.addShifted(1, u128{h, l})
	h, l = bits.Mul64(a.hi, b.hi)
	z.addShifted(2, u128{h, l})
	return z
}

// sub256 is a − b for a ≥ b.
func sub256(a, b u256) u256 {
	var z u256
	var borrow uint64
	for i := range 4 {
		z[i], borrow = bits.Sub64(a[i], b[i], borrow)
	}
	return z
}

func cmp256(a, b u256) int {
	for i := 3; i >= 0; i-- {
		if a[i] != b[i] {
			return cmp.Compare(a[i], b[i])
		}
	}
	return 0
}

func cmpU128(a, b u128) int {
	if a.hi != b.hi {
		return cmp.Compare(a.hi, b.hi)
	}
	return cmp.Compare(a.lo, b.lo)
}

// idIndex finds an account of a reading by id: open addressing on the ids'
// hashes, each slot the hash and the account's index, the id itself compared
// only when the hashes agree. About three times faster than a Go map of
// strings on 100,000 ids, whose probes and string compares were most of a
// comparison of readings listed in different orders.
type idIndex struct {
	seed  maphash.Seed
	slots []idSlot // a power of two, at most half full
	mask  uint64
}

type idSlot struct {
	hash uint64
	at   int32 // the account's index + 1; 0 is an empty slot
}

func newIDIndex(n int) *idIndex {
	size := 16
	for size < 2*n {
		size <<= 1
	}
	return &idIndex{seed: maphash.MakeSeed(), slots: make([]idSlot, size), mask: uint64(size - 1)}
}

// put adds an id; ids within one reading are unique (validated when kept).
func (x *idIndex) put(id string, i int32) {
	h := maphash.String(x.seed, id)
	for k := h & x.mask; ; k = (k + 1) & x.mask {
		if x.slots[k].at == 0 {
			x.slots[k] = idSlot{hash: h, at: i + 1}
			return
		}
	}
}

// get is the index in accounts of id, or −1.
func (x *idIndex) get(accounts []Account, id string) int32 {
	h := maphash.String(x.seed, id)
	for k := h & x.mask; ; k = (k + 1) & x.mask {
		sl := x.slots[k]
		if sl.at == 0 {
			return -1
		}
		if sl.hash == h && accounts[sl.at-1].ID == id {
			return sl.at - 1
		}
	}
}
