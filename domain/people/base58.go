package people

import (
	"errors"
	"math/big"
)

// Base58 in Bitcoin's alphabet, as NEAR writes keys and signatures. Small
// enough to own rather than take a dependency for.
const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

var base58Index = func() [256]int8 {
	var idx [256]int8
	for i := range idx {
		idx[i] = -1
	}
	for i := 0; i < len(base58Alphabet); i++ {
		idx[base58Alphabet[i]] = int8(i)
	}
	return idx
}()

// Base58Encode writes b in base58; each leading zero byte is a leading '1'.
func Base58Encode(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	n := new(big.Int).SetBytes(b)
	radix := big.NewInt(58)
	mod := new(big.Int)
	var out []byte
	for n.Sign() > 0 {
		n.DivMod(n, radix, mod)
		out = append(out, base58Alphabet[mod.Int64()])
	}
	for range zeros {
		out = append(out, '1')
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out)
}

// Base58Decode reads base58 text; anything outside the alphabet is an error.
func Base58Decode(s string) ([]byte, error) {
	if s == "" {
		return nil, errors.New("base58: empty")
	}
	if len(s) > 256 {
		return nil, errors.New("base58: too long")
	}
	n := new(big.Int)
	radix := big.NewInt(58)
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	for i := 0; i < len(s); i++ {
		v := base58Index[s[i]]
		if v < 0 {
			return nil, errors.New("base58: invalid character")
		}
		n.Mul(n, radix)
		n.Add(n, big.NewInt(int64(v)))
	}
	body := n.Bytes()
	out := make([]byte, zeros+len(body))
	copy(out[zeros:], body)
	return out, nil
}

// IsTxHash says whether s is a NEAR transaction hash: base58 of 32 bytes. Top-ups
// and publishing both take one a person's wallet sent, and check it this one way.
func IsTxHash(s string) bool {
	if len(s) < 32 || len(s) > 44 {
		return false
	}
	b, err := Base58Decode(s)
	return err == nil && len(b) == 32
}
