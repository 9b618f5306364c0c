package people

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// NEP-413: signing a message with a NEAR wallet. The wallet signs
// sha256(u32_le(2^31+413) ‖ borsh(payload)), payload being message, nonce,
// recipient and an optional callback URL, with an ed25519 key of the account.

// nep413Prefix is 2^31 + 413: it makes the signed bytes an impossible
// transaction, so a sign-in signature can never be replayed as one.
const nep413Prefix uint32 = 1<<31 + 413

// ChallengeLifetime is how long a sign-in nonce may be used.
const ChallengeLifetime = 5 * time.Minute

// Challenge is what the site asks a wallet to sign.
type Challenge struct {
	Nonce     [32]byte
	Message   string
	Recipient string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// NewChallenge makes a challenge for recipient (the site's hostname) at now.
func NewChallenge(random interface{ Read([]byte) (int, error) }, recipient string, now time.Time) (Challenge, error) {
	var c Challenge
	if _, err := readFull(random, c.Nonce[:]); err != nil {
		return Challenge{}, err
	}
	now = now.UTC()
	c.Recipient = recipient
	c.Message = ChallengeMessage(recipient)
	c.CreatedAt, c.ExpiresAt = now, now.Add(ChallengeLifetime)
	return c, nil
}

func readFull(r interface{ Read([]byte) (int, error) }, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// ChallengeMessage is the plain sentence a wallet shows, naming the site.
func ChallengeMessage(recipient string) string { return "Sign in to Petal at " + recipient + "." }

// Proof is a wallet's NEP-413 answer as the contract's verify body carries it.
type Proof struct {
	Type      string `json:"type"`
	AccountID string `json:"account_id"`
	PublicKey string `json:"public_key"`
	Signature string `json:"signature"`
	Message   string `json:"message"`
	Nonce     string `json:"nonce"`
	Recipient string `json:"recipient"`
	// CallbackURL is NEP-413's optional callbackUrl, which the wallet signed
	// with the rest: a wallet that signs by redirect sends the person back
	// there. Absent (nil) for a wallet that answers in the page.
	CallbackURL *string `json:"callback_url,omitempty"`
}

// Nep413Payload is the borsh encoding of the signed payload. A None callback
// is the single byte 0 (never an empty string).
func Nep413Payload(message string, nonce [32]byte, recipient string, callbackURL *string) []byte {
	var b []byte
	putString := func(s string) {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	putString(message)
	b = append(b, nonce[:]...)
	putString(recipient)
	if callbackURL == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		putString(*callbackURL)
	}
	return b
}

// Nep413Hash is the 32 bytes a wallet signs.
func Nep413Hash(payload []byte) [32]byte {
	var prefix [4]byte
	binary.LittleEndian.PutUint32(prefix[:], nep413Prefix)
	return sha256.Sum256(append(prefix[:], payload...))
}

// ParsePublicKey reads "ed25519:<base58 of 32 bytes>".
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	rest, ok := strings.CutPrefix(s, "ed25519:")
	if !ok {
		return nil, errors.New("the public key must be ed25519:<base58>")
	}
	b, err := Base58Decode(rest)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, errors.New("the public key is not 32 bytes of base58")
	}
	return ed25519.PublicKey(b), nil
}

// FormatPublicKey writes a key as NEAR does.
func FormatPublicKey(k ed25519.PublicKey) string { return "ed25519:" + Base58Encode(k) }

// signatureCandidates reads a signature written as base64 (padded or not,
// standard or URL alphabet), base58, or ed25519:<base58>. Some texts read
// both as base64 and as base58; every 64-byte reading is a candidate, and the
// signature is good when one of them verifies.
func signatureCandidates(s string) [][]byte {
	if rest, ok := strings.CutPrefix(s, "ed25519:"); ok {
		if b, err := Base58Decode(rest); err == nil && len(b) == ed25519.SignatureSize {
			return [][]byte{b}
		}
		return nil
	}
	var out [][]byte
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.Strict().DecodeString(s); err == nil && len(b) == ed25519.SignatureSize {
			out = append(out, b)
			break
		}
	}
	if b, err := Base58Decode(s); err == nil && len(b) == ed25519.SignatureSize {
		out = append(out, b)
	}
	return out
}

// VerifyNep413 checks that signature is key's ed25519 signature of the
// NEP-413 payload (message, nonce, recipient, no callback).
func VerifyNep413(key ed25519.PublicKey, signature, message string, nonce [32]byte, recipient string) bool {
	return VerifyNep413Callback(key, signature, message, nonce, recipient, nil)
}

// VerifyNep413Callback is VerifyNep413 for a payload that carries
// callbackURL (nil: none). Whether that callback may be accepted at all is
// the caller's question (CallbackIsSignInPage).
func VerifyNep413Callback(key ed25519.PublicKey, signature, message string, nonce [32]byte, recipient string, callbackURL *string) bool {
	h := Nep413Hash(Nep413Payload(message, nonce, recipient, callbackURL))
	for _, sig := range signatureCandidates(signature) {
		if ed25519.Verify(key, h[:], sig) {
			return true
		}
	}
	return false
}

// SignInPath is the site's own sign-in page, the one callbackUrl a proof
// may carry: a wallet that signs by redirect brings the person back there.
const SignInPath = "/signin"

// MaxCallbackURL bounds a proof's callback_url (a URL is never this long).
const MaxCallbackURL = 2048

// CallbackIsSignInPage reports whether callback is this site's own sign-in
// page: siteOrigin + SignInPath exactly (no query, fragment or user), or, on
// a local site (siteOrigin "" or a loopback one), a loopback address's
// SignInPath over http or https. Any other callback is refused, so a proof
// made for another site's page cannot sign in here.
func CallbackIsSignInPage(callback, siteOrigin string, localSite bool) bool {
	if callback == "" || len(callback) > MaxCallbackURL {
		return false
	}
	u, err := url.Parse(callback)
	if err != nil || u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" ||
		u.Path != SignInPath || u.RawPath != "" || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	origin := strings.ToLower(u.Scheme + "://" + u.Host)
	if siteOrigin != "" && origin == strings.ToLower(siteOrigin) {
		return true
	}
	return localSite && isLoopback(u.Hostname())
}

// isLoopback is localhost, 127.0.0.1 or ::1.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap() == netip.MustParseAddr("127.0.0.1") || err == nil && ip == netip.IPv6Loopback()
}

var (
	implicitAccount = regexp.MustCompile(`^[0-9a-f]{64}$`)
	namedAccount    = regexp.MustCompile(`^(([a-z\d]+[-_])*[a-z\d]+\.)*([a-z\d]+[-_])*[a-z\d]+$`)
)

// ValidAccountID reports whether id is a NEAR account id: 2 to 64
// characters of lower-case letters, digits and separators as NEAR allows.
func ValidAccountID(id string) bool {
	return len(id) >= 2 && len(id) <= 64 && namedAccount.MatchString(id)
}

// IsImplicitAccount reports whether id is an implicit account (64 hex).
func IsImplicitAccount(id string) bool { return implicitAccount.MatchString(id) }

// ImplicitAccountOf is the implicit account id of key: the hex of its bytes.
func ImplicitAccountOf(key ed25519.PublicKey) string { return hex.EncodeToString(key) }

// Networks are the NEAR networks a wallet may sign in on.
var Networks = []string{"mainnet", "testnet"}

// ValidNetwork reports whether n is mainnet or testnet.
func ValidNetwork(n string) bool { return n == "mainnet" || n == "testnet" }

// Binding is a wallet's name: near:<network>:<account>. testnet and mainnet
// are different wallets, so different people, even for one implicit account.
// It is also the wallet's CAIP-10 id.
func Binding(network, account string) string { return "near:" + network + ":" + account }
