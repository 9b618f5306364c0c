package ids

import (
	"encoding/hex"
	"fmt"
	"io"
)

// newID is a fresh id: prefix and 16 random bytes in hex.
func NewID(random io.Reader, prefix string) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return prefix + hex.EncodeToString(b[:]), nil
}

// randomHex is n random bytes in hex.
func RandomHex(random io.Reader, n int) (string, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(random, b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return hex.EncodeToString(b), nil
}
