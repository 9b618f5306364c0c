package published

import (
	"testing"

	"github.com/petal-near/petal/domain/specs"
)

// BenchmarkParse is reading one published record strictly (what a list of
// published flowers pays per flower for its view_url), beside its floor,
// naming the spec alone.
func BenchmarkParse(b *testing.B) {
	_, canonical, err := sample().Canonical()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, _, p := Parse(canonical); len(p) > 0 {
				b.Fatal(p)
			}
		}
	})
	b.Run("spec-name", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := SpecName(canonical); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("floor-spec-name", func(b *testing.B) {
		b.ReportAllocs()
		s := sample().Spec
		for b.Loop() {
			if _, _, err := specs.Name(s); err != nil {
				b.Fatal(err)
			}
		}
	})
}
