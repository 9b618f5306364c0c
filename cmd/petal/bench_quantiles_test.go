package main

import (
	"math"
	"slices"
	"time"
)

// quantile is the nearest-rank q-quantile of ds (the smallest value with at
// least q of ds at or below it); ds is left as it was.
func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// p50p99 are ds's median and 99th percentile (nearest rank) in
// milliseconds, as the benchmarks report them; NaN for no samples.
func p50p99(ds []time.Duration) (p50, p99 float64) {
	if len(ds) == 0 {
		return math.NaN(), math.NaN()
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return ms(quantile(ds, 0.5)), ms(quantile(ds, 0.99))
}
