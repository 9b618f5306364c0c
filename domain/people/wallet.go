package people

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"time"
)

// Wallet is a binding of a NEAR account on one network to a person.
type Wallet struct {
	ID        string // wal_<hex>
	PersonID  string
	Network   string
	AccountID string // open only with the wallet key
	ProvedAt  time.Time
}

// WalletView is a wallet as the contract shows it.
type WalletView struct {
	CAIP10    string    `json:"caip10"`
	Network   string    `json:"network"`
	AccountID string    `json:"account_id"`
	ProvedAt  time.Time `json:"proved_at"`
}

// View is w as the contract shows it.
func (w Wallet) View() WalletView {
	return WalletView{CAIP10: Binding(w.Network, w.AccountID), Network: w.Network, AccountID: w.AccountID, ProvedAt: w.ProvedAt.UTC()}
}

// WalletKey seals wallet addresses (AES-256-GCM) and makes the keyed hash
// they are found by (HMAC-SHA256). Two subkeys are derived from it so the
// cipher key is never the MAC key.
type WalletKey struct {
	seal  [32]byte
	index [32]byte
}

// ParseWalletKey reads PETAL_WALLET_KEY: 32 bytes as hex or base64.
func ParseWalletKey(s string) (WalletKey, error) {
	s = strings.TrimSpace(s)
	var raw []byte
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		raw = b
	} else {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
				raw = b
				break
			}
		}
	}
	if raw == nil {
		return WalletKey{}, errors.New("PETAL_WALLET_KEY must be 32 bytes as hex (64 characters) or base64")
	}
	return NewWalletKey([32]byte(raw)), nil
}

// NewWalletKey derives the sealing and index keys from 32 secret bytes.
func NewWalletKey(secret [32]byte) WalletKey {
	derive := func(label string) [32]byte {
		m := hmac.New(sha256.New, secret[:])
		m.Write([]byte(label))
		return [32]byte(m.Sum(nil))
	}
	return WalletKey{seal: derive("petal wallet seal v1"), index: derive("petal wallet index v1")}
}

// AddressHash is the keyed hash a binding is found by.
func (k WalletKey) AddressHash(network, account string) []byte {
	m := hmac.New(sha256.New, k.index[:])
	m.Write([]byte(Binding(network, account)))
	return m.Sum(nil)
}

// Seal encrypts an account id: nonce ‖ ciphertext, bound to its network.
func (k WalletKey) Seal(random io.Reader, network, account string) ([]byte, error) {
	aead, err := k.aead()
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := io.ReadFull(random, nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, []byte(account), []byte(network)), nil
}

// Open decrypts a sealed account id; a wrong key (a throwaway key after a
// restart) fails.
func (k WalletKey) Open(network string, sealed []byte) (string, error) {
	aead, err := k.aead()
	if err != nil {
		return "", err
	}
	if len(sealed) < aead.NonceSize() {
		return "", errors.New("wallet: sealed address too short")
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], []byte(network))
	if err != nil {
		return "", errors.New("wallet: the address can't be opened with this key")
	}
	return string(plain), nil
}

func (k WalletKey) aead() (cipher.AEAD, error) {
	block, err := aes.NewCipher(k.seal[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
