package evm

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Address is a 20-byte EVM account or contract address.
type Address [20]byte

// ParseAddress reads 0x and 40 hex digits, in any case. The EIP-55 checksum
// of a mixed-case address is not checked: petal writes addresses in lower
// case and compares bytes.
func ParseAddress(s string) (Address, error) {
	var a Address
	h, ok := strings.CutPrefix(strings.TrimSpace(s), "0x")
	if !ok {
		h, ok = strings.CutPrefix(strings.TrimSpace(s), "0X")
	}
	if !ok || len(h) != 40 {
		return a, fmt.Errorf("%q is not an EVM address (0x and 40 hex digits)", s)
	}
	if _, err := hex.Decode(a[:], []byte(h)); err != nil {
		return a, fmt.Errorf("%q is not an EVM address (0x and 40 hex digits)", s)
	}
	return a, nil
}

// Hex is the address as 0x and 40 lower-case hex digits.
func (a Address) Hex() string { return "0x" + hex.EncodeToString(a[:]) }

// IsZero reports whether a is the zero address, which Transfer logs name as
// the sender of a mint and the receiver of a burn.
func (a Address) IsZero() bool { return a == Address{} }

// AddressFromTopic reads an address from an indexed log topic (32 bytes,
// the address right-aligned); ok is false when the 12 bytes before it are not
// zero, which no Solidity address topic has.
func AddressFromTopic(topic []byte) (Address, bool) {
	var a Address
	if len(topic) != 32 {
		return a, false
	}
	for _, b := range topic[:12] {
		if b != 0 {
			return a, false
		}
	}
	copy(a[:], topic[12:])
	return a, true
}

// ChainPrefix starts every EVM chain's CAIP-2 id.
const ChainPrefix = "eip155:"

// ChainID reads a CAIP-2 eip155 id (eip155:100) as its chain id; ok is false
// for anything else, a NEAR chain among them.
func ChainID(chain string) (id uint64, ok bool) {
	rest, found := strings.CutPrefix(chain, ChainPrefix)
	if !found || rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return 0, false
	}
	id, err := strconv.ParseUint(rest, 10, 64)
	return id, err == nil && id > 0
}

// Chain is the CAIP-2 id of an EVM chain: eip155:100.
func Chain(id uint64) string { return ChainPrefix + strconv.FormatUint(id, 10) }

// AccountID is an address's CAIP-10 id on chain, in lower case:
// eip155:100:0x…
func AccountID(chain string, a Address) string { return chain + ":" + a.Hex() }

// KnownChain is an EVM chain petal's docs name.
type KnownChain struct {
	ID   uint64
	Name string
}

// KnownChains are the chains the docs name; any chain with an RPC setting is
// readable.
var KnownChains = []KnownChain{
	{1, "Ethereum"}, {10, "Optimism"}, {100, "Gnosis"}, {8453, "Base"}, {42161, "Arbitrum One"},
}

// ChainName is a chain's name, or its CAIP-2 id when the docs name none.
func ChainName(id uint64) string {
	for _, k := range KnownChains {
		if k.ID == id {
			return k.Name
		}
	}
	return Chain(id)
}
