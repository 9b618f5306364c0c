// Package evm is what petal makes of an EVM chain's tokens, without I/O:
// addresses and chain ids in CAIP form, balances kept from Transfer logs and
// voting power from DelegateVotesChanged logs, the checks that say whether
// those logs add up, and the tallies that make them a reading.
//
// A token with 100,000 holders is read from millions of logs, so a holder
// costs a 20-byte key and a 32-byte balance in one map, never a string or a
// math/big number; math/big appears only for the accounts a reading keeps,
// when their weights are written.
package evm

import (
	"encoding/binary"
	"math/big"
	"math/bits"
)

// Amount is a uint256, as the EVM counts: limbs least significant first.
type Amount [4]uint64

// AmountFromWord reads a 32-byte big-endian EVM word.
func AmountFromWord(w []byte) Amount {
	var a Amount
	if len(w) != 32 {
		return a
	}
	for i := range 4 {
		a[3-i] = binary.BigEndian.Uint64(w[8*i : 8*i+8])
	}
	return a
}

// AmountFromUint64 is a small amount, for tests and counts.
func AmountFromUint64(v uint64) Amount { return Amount{v} }

// AmountFromBig reads a non-negative big.Int of at most 256 bits; ok is false otherwise.
func AmountFromBig(b *big.Int) (Amount, bool) {
	if b == nil || b.Sign() < 0 || b.BitLen() > 256 {
		return Amount{}, false
	}
	var w [32]byte
	b.FillBytes(w[:])
	return AmountFromWord(w[:]), true
}

// IsZero reports whether a is 0.
func (a Amount) IsZero() bool { return a[0]|a[1]|a[2]|a[3] == 0 }

// Add returns a+b and whether it overflowed 256 bits.
func (a Amount) Add(b Amount) (Amount, bool) {
	var z Amount
	var c uint64
	z[0], c = bits.Add64(a[0], b[0], 0)
	z[1], c = bits.Add64(a[1], b[1], c)
	z[2], c = bits.Add64(a[2], b[2], c)
	z[3], c = bits.Add64(a[3], b[3], c)
	return z, c != 0
}

// Sub returns a−b and whether b was more than a (then z is meaningless).
func (a Amount) Sub(b Amount) (Amount, bool) {
	var z Amount
	var c uint64
	z[0], c = bits.Sub64(a[0], b[0], 0)
	z[1], c = bits.Sub64(a[1], b[1], c)
	z[2], c = bits.Sub64(a[2], b[2], c)
	z[3], c = bits.Sub64(a[3], b[3], c)
	return z, c != 0
}

// Cmp is −1, 0 or 1 as a is less than, equal to or more than b.
func (a Amount) Cmp(b Amount) int {
	for i := 3; i >= 0; i-- {
		switch {
		case a[i] < b[i]:
			return -1
		case a[i] > b[i]:
			return 1
		}
	}
	return 0
}

// Big is a as a big.Int, for writing it out.
func (a Amount) Big() *big.Int {
	var w [32]byte
	for i := range 4 {
		binary.BigEndian.PutUint64(w[8*i:], a[3-i])
	}
	return new(big.Int).SetBytes(w[:])
}

// String is a in decimal, in the token's smallest units.
func (a Amount) String() string { return a.Big().String() }
