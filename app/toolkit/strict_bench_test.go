package toolkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkCheckJSONText is what strict decoding's check for names given
// twice and control characters costs on a large tool input (an inline
// snapshot of 100,000 accounts, 5.8 MB), beside its floor: encoding/json
// reading the same bytes into json.RawMessage (a validity scan).
func BenchmarkCheckJSONText(b *testing.B) {
	var accounts bytes.Buffer
	for i := range 100_000 {
		if i > 0 {
			accounts.WriteByte(',')
		}
		fmt.Fprintf(&accounts, `{"id":"account-%d.near","weight":"%d","group":"g%d"}`, i, 1000+i, i%7)
	}
	big := []byte(`{"snapshot":{"schema":"snapshot/v1","accounts":[` + accounts.String() + `]}}`)
	b.Run("check", func(b *testing.B) {
		b.SetBytes(int64(len(big)))
		b.ReportAllocs()
		for b.Loop() {
			if err := CheckJSONText(big); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json_valid_floor", func(b *testing.B) {
		b.SetBytes(int64(len(big)))
		b.ReportAllocs()
		for b.Loop() {
			if !json.Valid(big) {
				b.Fatal("invalid")
			}
		}
	})
}
