package people

import (
	"bytes"
	"strings"
	"testing"
)

func TestIsTxHashTakesBase58Of32BytesOnly(t *testing.T) {
	hash := Base58Encode(bytes.Repeat([]byte{7}, 32))
	for s, want := range map[string]bool{
		hash:                    true,
		hash[:len(hash)-1]:      false, // 31-and-a-bit bytes
		hash + "1":              false, // 33 bytes
		"0" + hash[1:]:          false, // outside the alphabet
		"":                      false,
		strings.Repeat("1", 32): true, // 32 zero bytes
	} {
		if got := IsTxHash(s); got != want {
			t.Errorf("IsTxHash(%q) = %v, want %v", s, got, want)
		}
	}
}
