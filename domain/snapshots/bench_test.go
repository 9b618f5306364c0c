package snapshots

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

// The measure of naming: canonical-JSON hashing (RFC 8785 + SHA-256) of a
// 100,000-account snapshot in MB/s, against encoding/json.Marshal of the
// same value in the same run. Both report MB/s over the canonical size.
//
//	go test ./domain/snapshots -run '^$' -bench 'BenchmarkName|BenchmarkEncodingJSON' -count 3
func benchSnapshot(n int) Snapshot {
	s := sample()
	s.Accounts = make([]Account, 0, n)
	x := uint64(88172645463325252)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	for i := range n {
		id := fmt.Sprintf("d%x%d.near", next()%0xffffff, i)
		s.Accounts = append(s.Accounts, Account{
			ID: "near:mainnet:" + id, Label: id, Weight: fmt.Sprintf("%d.%d", next()%100000, next()%1_000_000_000_000),
			Groups: []string{"council"}, Attrs: RawAttrs(map[string]any{"staked_yocto": fmt.Sprint(next()), "can_withdraw": true}),
		})
	}
	return s
}

func BenchmarkName(b *testing.B) {
	s := benchSnapshot(MaxAccounts)
	_, canonical, err := Name(s)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(canonical)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Name(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodingJSONMarshal(b *testing.B) {
	s := benchSnapshot(MaxAccounts)
	_, canonical, _ := Name(s)
	b.SetBytes(int64(len(canonical)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNameVersusMarshal alternates the two on the same value, round by
// round, and reports the median of (Marshal time / Name time): above 1, naming
// (canonical form and SHA-256) is faster than encoding/json.Marshal alone. The
// machine is shared, so pairs measured back to back are the fairer figure.
func BenchmarkNameVersusMarshal(b *testing.B) {
	s := benchSnapshot(MaxAccounts)
	_, canonical, _ := Name(s)
	var ratios, nameMBs, marshalMBs []float64
	mb := float64(len(canonical)) / 1e6
	for i := range max(b.N, 5) {
		name := func() float64 {
			start := time.Now()
			if _, _, err := Name(s); err != nil {
				b.Fatal(err)
			}
			return time.Since(start).Seconds()
		}
		marshal := func() float64 {
			start := time.Now()
			if _, err := json.Marshal(s); err != nil {
				b.Fatal(err)
			}
			return time.Since(start).Seconds()
		}
		var n, m float64
		if i%2 == 0 {
			n, m = name(), marshal()
		} else {
			m, n = marshal(), name()
		}
		ratios = append(ratios, m/n)
		nameMBs = append(nameMBs, mb/n)
		marshalMBs = append(marshalMBs, mb/m)
	}
	med := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
	b.ReportMetric(med(nameMBs), "name-MB/s")
	b.ReportMetric(med(marshalMBs), "marshal-MB/s")
	b.ReportMetric(med(ratios), "marshal/name")
}

// figuresSnapshot is n stakers with yoctoNEAR weights (up to 30 digits, as
// the readers write them); every tenth is in "council", everyone in "all".
func figuresSnapshot(n int) *Snapshot {
	s := &Snapshot{Groups: []Group{{ID: "council", Label: "Council"}, {ID: "all", Label: "All"}}}
	s.Accounts = make([]Account, n)
	x := uint64(88172645463325252)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	council, all := []string{"council", "all"}, []string{"all"}
	for i := range s.Accounts {
		groups := all
		if i%10 == 0 {
			groups = council
		}
		s.Accounts[i] = Account{ID: fmt.Sprintf("near:mainnet:s%d.near", i), Weight: fmt.Sprintf("%d%012d", next()%1_000_000_000_000_000_000, next()%1_000_000_000_000), Groups: groups}
	}
	return s
}

// The measure of compute_figures: the fixed-width path (parse, one sort,
// every figure of the snapshot and its two groups) beside the math/big
// reference it replaced, in the same run, on 1,000 to 1,000,000 accounts.
//
//	go test ./domain/snapshots -run '^$' -bench BenchmarkFigures -benchmem -benchtime 3x
func BenchmarkFigures(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		s := figuresSnapshot(n)
		for _, path := range []struct {
			name    string
			compute func(*Snapshot, string) (FigureSet, error)
		}{{"fixed-width", ComputeFigures}, {"math-big", computeFiguresBig}} {
			b.Run(fmt.Sprintf("%s/accounts=%d", path.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := path.compute(s, ""); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// The figures on weights already ranked: what a call costs once the decoded
// snapshot's ranked weights are kept beside it.
func BenchmarkFiguresRanked(b *testing.B) {
	for _, n := range []int{1_000, 100_000, 1_000_000} {
		s := figuresSnapshot(n)
		r, err := RankWeights(s.Accounts)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("accounts=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Figures(s, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFiguresVersusBig alternates the two paths on the same 100,000
// accounts, round by round, and reports the median of (math/big time /
// fixed-width time): the machine is shared, so pairs measured back to back
// are the fairer ratio than two separate runs.
//
//	go test ./domain/snapshots -run '^$' -bench BenchmarkFiguresVersusBig -benchtime 5x
func BenchmarkFiguresVersusBig(b *testing.B) {
	s := figuresSnapshot(MaxAccounts)
	timed := func(compute func(*Snapshot, string) (FigureSet, error)) float64 {
		start := time.Now()
		if _, err := compute(s, ""); err != nil {
			b.Fatal(err)
		}
		return time.Since(start).Seconds()
	}
	var ratios []float64
	for i := range max(b.N, 5) {
		var fast, slow float64
		if i%2 == 0 {
			fast, slow = timed(ComputeFigures), timed(computeFiguresBig)
		} else {
			slow, fast = timed(computeFiguresBig), timed(ComputeFigures)
		}
		ratios = append(ratios, slow/fast)
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "big/fixed-width")
}

// comparedPair is two 100,000-account readings of one pool a little apart
// (a tenth of the accounts change weight, 1% leave and as many enter), the
// second also listed in reverse order, each with its ranked weights.
func comparedPair(b *testing.B) (a, after, reordered *Snapshot, ra, rb, rr *RankedWeights) {
	a = figuresSnapshot(MaxAccounts)
	next := *a
	next.Accounts = slices.Clone(a.Accounts)
	for i := range next.Accounts {
		switch {
		case i%100 == 7: // left, and someone else entered
			next.Accounts[i].ID = fmt.Sprintf("near:mainnet:new%d.near", i)
		case i%10 == 3:
			next.Accounts[i].Weight += "0"
		}
	}
	rev := next
	rev.Accounts = slices.Clone(next.Accounts)
	slices.Reverse(rev.Accounts)
	var err error
	for _, p := range []struct {
		s *Snapshot
		r **RankedWeights
	}{{a, &ra}, {&next, &rb}, {&rev, &rr}} {
		if *p.r, err = RankWeights(p.s.Accounts); err != nil {
			b.Fatal(err)
		}
	}
	return a, &next, &rev, ra, rb, rr
}

// The measure of compare_figures: two 100,000-account readings compared on
// their ranked weights (as the snapshot cache keeps them; "reordered": the
// second listed in another order, so every account is matched through the
// map), and from their accounts, beside compute_figures of one of them from
// its accounts (parse, sort, figures) and from its ranked weights.
//
//	go test ./domain/snapshots -run '^$' -bench 'BenchmarkCompare$' -benchmem -benchtime 5x
func BenchmarkCompare(b *testing.B) {
	a, after, reordered, ra, rb, rr := comparedPair(b)
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"compare-ranked", func() error { _, err := Compare(a, ra, after, rb, ComparePage{}); return err }},
		{"compare-ranked-reordered", func() error { _, err := Compare(a, ra, reordered, rr, ComparePage{}); return err }},
		{"compare-from-accounts", func() error {
			ra, _ := RankWeights(a.Accounts)
			rb, _ := RankWeights(after.Accounts)
			_, err := Compare(a, ra, after, rb, ComparePage{})
			return err
		}},
		{"figures-from-accounts", func() error { _, err := ComputeFigures(a, ""); return err }},
		{"figures-ranked", func() error { _, err := ra.Figures(a, ""); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCompareVersusFigures alternates, round by round, a comparison on
// ranked weights with compute_figures of one reading, and reports the median
// ratios (the machine is shared, so pairs measured back to back are the fair
// figure): compare/figures against figures from the accounts (the issue's
// goal: at most 2), and against figures from ranked weights.
//
//	go test ./domain/snapshots -run '^$' -bench BenchmarkCompareVersusFigures -benchtime 9x
func BenchmarkCompareVersusFigures(b *testing.B) {
	a, after, reordered, ra, rb, rr := comparedPair(b)
	timed := func(f func() error) float64 {
		start := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		return time.Since(start).Seconds()
	}
	compare := func() error { _, err := Compare(a, ra, after, rb, ComparePage{}); return err }
	compareReordered := func() error { _, err := Compare(a, ra, reordered, rr, ComparePage{}); return err }
	figures := func() error { _, err := ComputeFigures(a, ""); return err }
	figuresRanked := func() error { _, err := ra.Figures(a, ""); return err }
	var vsFigures, reorderedVsFigures, vsRanked []float64
	for range max(b.N, 5) {
		c, cr, f, fr := timed(compare), timed(compareReordered), timed(figures), timed(figuresRanked)
		vsFigures = append(vsFigures, c/f)
		reorderedVsFigures = append(reorderedVsFigures, cr/f)
		vsRanked = append(vsRanked, c/fr)
	}
	med := func(xs []float64) float64 { slices.Sort(xs); return xs[len(xs)/2] }
	b.ReportMetric(med(vsFigures), "compare/figures")
	b.ReportMetric(med(reorderedVsFigures), "reordered/figures")
	b.ReportMetric(med(vsRanked), "compare/figures-ranked")
}
