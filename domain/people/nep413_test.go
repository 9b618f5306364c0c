package people

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type vectorFile struct {
	SeedHex string `json:"seed_hex"`
	Vectors []struct {
		AccountID       string `json:"account_id"`
		PublicKey       string `json:"public_key"`
		Message         string `json:"message"`
		Recipient       string `json:"recipient"`
		NonceBase64     string `json:"nonce_base64"`
		SignatureBase64 string `json:"signature_base64"`
		SignatureBase58 string `json:"signature_base58"`
	} `json:"vectors"`
}

// TestIndependentVector checks petal's NEP-413 code against a signature made
// by @near-js/signers (testdata/make_vector.mjs).
func TestIndependentVector(t *testing.T) {
	b, err := os.ReadFile("testdata/nep413_vector.json")
	require.NoError(t, err)
	var f vectorFile
	require.NoError(t, json.Unmarshal(b, &f))
	seed, err := hex.DecodeString(f.SeedHex)
	require.NoError(t, err)
	priv := ed25519.NewKeyFromSeed(seed)
	for _, v := range f.Vectors {
		key, err := ParsePublicKey(v.PublicKey)
		require.NoError(t, err)
		assert.Equal(t, priv.Public(), key, "the key read from base58 is the seed's")
		assert.Equal(t, v.PublicKey, FormatPublicKey(key))
		nonce := [32]byte(mustB64(t, v.NonceBase64))
		for _, sig := range []string{v.SignatureBase64, v.SignatureBase58, "ed25519:" + v.SignatureBase58,
			base64.RawStdEncoding.EncodeToString(mustB64(t, v.SignatureBase64)), base64.URLEncoding.EncodeToString(mustB64(t, v.SignatureBase64))} {
			assert.True(t, VerifyNep413(key, sig, v.Message, nonce, v.Recipient), sig)
		}
		// Go signs the same bytes the same way (ed25519 is deterministic).
		h := Nep413Hash(Nep413Payload(v.Message, nonce, v.Recipient, nil))
		assert.Equal(t, v.SignatureBase64, base64.StdEncoding.EncodeToString(ed25519.Sign(priv, h[:])))

		assert.False(t, VerifyNep413(key, v.SignatureBase64, v.Message+" ", nonce, v.Recipient), "another message")
		assert.False(t, VerifyNep413(key, v.SignatureBase64, v.Message, nonce, "evil.example"), "another recipient")
		other := nonce
		other[0] ^= 1
		assert.False(t, VerifyNep413(key, v.SignatureBase64, v.Message, other, v.Recipient), "another nonce")
		if IsImplicitAccount(v.AccountID) {
			assert.Equal(t, v.AccountID, ImplicitAccountOf(key))
		}
	}
}

func mustB64(t *testing.T, s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	return b
}

func TestNep413PayloadIsBorsh(t *testing.T) {
	var nonce [32]byte
	for i := range nonce {
		nonce[i] = byte(i)
	}
	p := Nep413Payload("hi", nonce, "ab", nil)
	want := append([]byte{2, 0, 0, 0, 'h', 'i'}, nonce[:]...)
	want = append(want, 2, 0, 0, 0, 'a', 'b', 0) // None is one zero byte, never an empty string
	assert.Equal(t, want, p)
	cb := "x"
	p = Nep413Payload("hi", nonce, "ab", &cb)
	assert.Equal(t, append(want[:len(want)-1], 1, 1, 0, 0, 0, 'x'), p)

	// The signed bytes start with 2^31+413, little-endian: 9D 01 00 80.
	sum := sha256.Sum256(append([]byte{0x9D, 0x01, 0x00, 0x80}, p...))
	assert.Equal(t, sum, Nep413Hash(p))
}

func TestBase58(t *testing.T) {
	for _, b := range [][]byte{{0}, {0, 0, 1}, {1, 2, 3}, bytes.Repeat([]byte{255}, 64), {}} {
		if len(b) == 0 {
			continue
		}
		got, err := Base58Decode(Base58Encode(b))
		require.NoError(t, err)
		assert.Equal(t, b, got)
	}
	assert.Equal(t, "11", Base58Encode([]byte{0, 0}))
	// Bitcoin's well-known example.
	assert.Equal(t, "StV1DL6CwTryKyV", Base58Encode([]byte("hello world")))
	for _, bad := range []string{"", "0", "O", "I", "l", "abc+"} {
		_, err := Base58Decode(bad)
		assert.Error(t, err, bad)
	}
	for range 100 {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		got, err := Base58Decode(Base58Encode(b))
		require.NoError(t, err)
		assert.Equal(t, b, got)
	}
}

func TestSignatureFormats(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	var nonce [32]byte
	h := Nep413Hash(Nep413Payload("m", nonce, "r", nil))
	sig := ed25519.Sign(priv, h[:])
	for _, s := range []string{base64.StdEncoding.EncodeToString(sig), Base58Encode(sig), "ed25519:" + Base58Encode(sig)} {
		assert.True(t, VerifyNep413(pub, s, "m", nonce, "r"), s)
	}
	for _, s := range []string{"", "ed25519:", "ed25519:" + base64.StdEncoding.EncodeToString(sig), "secp256k1:" + Base58Encode(sig), base64.StdEncoding.EncodeToString(sig[:63])} {
		assert.False(t, VerifyNep413(pub, s, "m", nonce, "r"), s)
	}
	_, err := ParsePublicKey(Base58Encode(pub))
	assert.Error(t, err, "a key needs its ed25519: prefix")
}

func TestAccountIDs(t *testing.T) {
	for _, ok := range []string{"alice.near", "a-b_c.testnet", "79b5562e8fe654f94078b112e8a98ba7901f853ae695bed7e0e3910bad049664", "ab"} {
		assert.True(t, ValidAccountID(ok), ok)
	}
	for _, bad := range []string{"", "a", "Alice.near", "alice..near", ".alice", "alice.", "a b", string(bytes.Repeat([]byte{'a'}, 65))} {
		assert.False(t, ValidAccountID(bad), bad)
	}
}

func TestWalletKey(t *testing.T) {
	_, err := ParseWalletKey("short")
	assert.Error(t, err)
	secret := bytes.Repeat([]byte{7}, 32)
	k1, err := ParseWalletKey(hex.EncodeToString(secret))
	require.NoError(t, err)
	k2, err := ParseWalletKey(base64.StdEncoding.EncodeToString(secret))
	require.NoError(t, err)
	assert.Equal(t, k1, k2, "hex and base64 of one key are one key")

	sealed, err := k1.Seal(rand.Reader, "testnet", "alice.testnet")
	require.NoError(t, err)
	assert.NotContains(t, string(sealed), "alice")
	again, _ := k1.Seal(rand.Reader, "testnet", "alice.testnet")
	assert.NotEqual(t, sealed, again, "a fresh nonce each time")
	got, err := k1.Open("testnet", sealed)
	require.NoError(t, err)
	assert.Equal(t, "alice.testnet", got)
	_, err = k1.Open("mainnet", sealed)
	assert.Error(t, err, "bound to its network")
	other := NewWalletKey([32]byte{1})
	_, err = other.Open("testnet", sealed)
	assert.Error(t, err, "another key can't open it")

	assert.Equal(t, k1.AddressHash("testnet", "alice.testnet"), k2.AddressHash("testnet", "alice.testnet"))
	assert.NotEqual(t, k1.AddressHash("testnet", "alice.testnet"), k1.AddressHash("mainnet", "alice.testnet"))
	assert.NotEqual(t, k1.AddressHash("testnet", "alice.testnet"), other.AddressHash("testnet", "alice.testnet"))
}

func FuzzBase58RoundTrip(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2})
	f.Add([]byte("hello world"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || len(b) > 128 {
			return
		}
		got, err := Base58Decode(Base58Encode(b))
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%x: %x, %v", b, got, err)
		}
	})
}

// FuzzVerifyNep413 feeds any text as a signature: it never panics and never
// verifies against a key that did not sign.
func FuzzVerifyNep413(f *testing.F) {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	f.Add("ed25519:3KNiU88KLiwv15z1GoWo8HvNCainAQtwtE6YaLwkhEpWhajNcZ3koddAjqtjRC9gjquA6k7K2BU6KkS9rjToPs2r")
	f.Add("c+Ee70ZUb7kr5d2EewfLzAb7vshbMPDc0TQpgYz6YA1B+l6buprYPpY43quoPlDzPqznU11jWw03MlVp5J4DAw==")
	f.Fuzz(func(t *testing.T, sig string) {
		if VerifyNep413(pub, sig, "m", [32]byte{}, "r") {
			t.Fatalf("%q verified for a key that signed nothing", sig)
		}
	})
}

// A wallet that signs by redirect signs the callbackUrl too: the proof holds
// only with that same callback, and with none it is another payload.
func TestNep413WithACallback(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	var nonce [32]byte
	nonce[3] = 7
	back := "https://petal.example/signin"
	h := Nep413Hash(Nep413Payload("Sign in", nonce, "petal.example", &back))
	sig := base64.StdEncoding.EncodeToString(ed25519.Sign(priv, h[:]))
	assert.True(t, VerifyNep413Callback(pub, sig, "Sign in", nonce, "petal.example", &back))
	assert.False(t, VerifyNep413(pub, sig, "Sign in", nonce, "petal.example"), "signed with a callback, checked without")
	other := "https://evil.example/signin"
	assert.False(t, VerifyNep413Callback(pub, sig, "Sign in", nonce, "petal.example", &other), "another callback")
	// The payload's borsh: Some(string) is 1 and the string after the recipient.
	payload := Nep413Payload("m", nonce, "r", &back)
	assert.Equal(t, append([]byte{1, byte(len(back)), 0, 0, 0}, back...), payload[len(payload)-len(back)-5:])
}

func TestCallbackIsSignInPage(t *testing.T) {
	cases := []struct {
		callback, site string
		local, ok      bool
	}{
		{"https://petal.example/signin", "https://petal.example", false, true},
		{"https://Petal.Example/signin", "https://petal.example", false, true},
		{"https://petal.example/signin?x=1", "https://petal.example", false, false},
		{"https://petal.example/signin#a", "https://petal.example", false, false},
		{"https://petal.example/signin/", "https://petal.example", false, false},
		{"https://petal.example/make", "https://petal.example", false, false},
		{"http://petal.example/signin", "https://petal.example", false, false},
		{"https://petal.example.evil.example/signin", "https://petal.example", false, false},
		{"https://user@petal.example/signin", "https://petal.example", false, false},
		{"https://evil.example/signin", "https://petal.example", false, false},
		{"http://127.0.0.1:8787/signin", "https://petal.example", false, false},
		{"http://127.0.0.1:8787/signin", "", true, true},
		{"http://localhost:8787/signin", "http://localhost:8787", true, true},
		{"http://[::1]:8787/signin", "", true, true},
		{"https://evil.example/signin", "", true, false},
		{"javascript:alert(1)//signin", "", true, false},
		{"", "", true, false},
		{"http://localhost/signin%2F", "", true, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.ok, CallbackIsSignInPage(c.callback, c.site, c.local), c.callback)
	}
}
