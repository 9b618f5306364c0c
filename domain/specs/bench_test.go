package specs

import (
	"fmt"
	"testing"
)

// BenchmarkRender lays out and draws a proposed spec (tail folded) on 1,000
// and 100,000 accounts: what render_flower does once the snapshot is loaded.
// It reports the SVG's size as svg-bytes.
func BenchmarkRender(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		snap := holdersSnapshot(n)
		spec, err := Propose(snap, holdersSHA, "")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("accounts=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				f, err := Layout(spec, snap)
				if err != nil {
					b.Fatal(err)
				}
				size = len(Render(f, DefaultView()).SVG)
			}
			b.ReportMetric(float64(size), "svg-bytes")
		})
	}
}
