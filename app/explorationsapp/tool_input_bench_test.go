package explorationsapp

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/toolkit"
)

// BenchmarkToolInputCheck is the schema check Registry.Call adds to every
// call, beside its floor: the strict decode into the input struct that each
// tool did before and still does. The inline snapshot (100,000 accounts) is
// the largest input a tool takes; the check stands it in as an empty object
// and does not decode it.
func BenchmarkToolInputCheck(b *testing.B) {
	small := []byte(`{"sha256":"` + strings.Repeat("a", 64) + `","intent":"top 20, colour by band"}`)
	var accounts bytes.Buffer
	for i := range 100_000 {
		if i > 0 {
			accounts.WriteByte(',')
		}
		fmt.Fprintf(&accounts, `{"id":"account-%d.near","weight":"%d","group":"g%d"}`, i, 1000+i, i%7)
	}
	big := []byte(`{"snapshot":{"schema":"snapshot/v1","accounts":[` + accounts.String() + `]}}`)
	for _, c := range []struct {
		name, tool string
		input      []byte
		decode     func([]byte) error
	}{
		{"propose_spec", flowersapp.ToolProposeSpec, small, func(raw []byte) error { var in flowersapp.ProposeInput; return toolkit.DecodeInput(raw, &in) }},
		{"compute_figures_inline_100k", flowersapp.ToolComputeFigures, big, func(raw []byte) error { var in flowersapp.FiguresInput; return toolkit.DecodeInput(raw, &in) }},
	} {
		var schema []byte
		for _, t := range (&flowersapp.FlowerService{}).Tools() {
			if t.Name == c.tool {
				schema = t.Input
			}
		}
		v, err := toolkit.CompileInput(c.tool, schema)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/check", func(b *testing.B) {
			b.SetBytes(int64(len(c.input)))
			for b.Loop() {
				if err := v.Check(c.input); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/strict_decode_floor", func(b *testing.B) {
			b.SetBytes(int64(len(c.input)))
			for b.Loop() {
				if err := c.decode(c.input); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
