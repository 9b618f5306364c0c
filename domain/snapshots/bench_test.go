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
			Groups: []string{"council"}, Attrs: map[string]any{"staked_yocto": fmt.Sprint(next()), "can_withdraw": true},
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
