package main

// A NEAR wallet for the page tests, reached the way real ones are: through
// the wallet connector's manifest (PETAL_WALLET_MANIFEST), which names its
// script; the connector runs that script in its sandboxed frame, and the
// script asks its own server, on another loopback origin, to sign with a
// test key the fake chain knows, as a wallet's relay would.

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/petal-near/petal/domain/people"
)

type fakeWallet struct {
	URL string
	mu  sync.Mutex
	key ed25519.PrivateKey
	// account is who the wallet signs as; use switches it.
	account string
	signed  int
}

// use makes the wallet sign as account with key from now on.
func (w *fakeWallet) use(key ed25519.PrivateKey, account string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.key, w.account = key, account
}

func (w *fakeWallet) signatures() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.signed
}

// fakeWalletScript is the wallet's executor: the NearWallet the connector's
// frame expects (window.selector.ready), signing through its server.
const fakeWalletScript = `
const WALLET = "{{origin}}";
async function who() { return (await fetch(WALLET + "/account")).json(); }
async function sign(p) {
  const nonce = btoa(String.fromCharCode.apply(null, Array.from(p.nonce)));
  const res = await fetch(WALLET + "/sign", { method: "POST", body: JSON.stringify({
    message: p.message, recipient: p.recipient, nonce: nonce, callbackUrl: p.callbackUrl || null }) });
  if (!res.ok) throw new Error("the test wallet refused: " + res.status);
  return res.json();
}
class PetalTestWallet {
  async signIn() { const a = await who(); return [a]; }
  async getAccounts() { const a = await who(); return [a]; }
  async signOut() {}
  async signMessage(p) { return sign(p); }
  async signInAndSignMessage(d) { const s = await sign(d.messageParams); return [{ accountId: s.accountId, publicKey: s.publicKey, signedMessage: s }]; }
}
window.selector.ready(new PetalTestWallet());
`

func startFakeWallet(t *testing.T) *fakeWallet {
	t.Helper()
	w := &fakeWallet{}
	mux := http.NewServeMux()
	cors := func(h http.HandlerFunc) http.HandlerFunc {
		return func(rw http.ResponseWriter, r *http.Request) {
			// The wallet's frame has an opaque origin: it reads answers only
			// with an open CORS header, as a real wallet's relay sends.
			rw.Header().Set("Access-Control-Allow-Origin", "*")
			h(rw, r)
		}
	}
	mux.HandleFunc("GET /manifest.json", cors(func(rw http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(rw).Encode(map[string]any{"version": "1.0.0", "wallets": []any{map[string]any{
			"id": "petal-test-wallet", "name": "Petal test wallet", "version": "1.0.0", "type": "sandbox",
			"description": "signs with a test key", "website": w.URL,
			"icon":        "data:image/svg+xml,%3Csvg%20xmlns%3D%22http%3A%2F%2Fwww.w3.org%2F2000%2Fsvg%22%20viewBox%3D%220%200%201%201%22%3E%3Crect%20width%3D%221%22%20height%3D%221%22%20fill%3D%22%23c33%22%2F%3E%3C%2Fsvg%3E",
			"executor":    w.URL + "/executor.js",
			"features":    map[string]bool{"signMessage": true, "signInAndSignMessage": true, "testnet": true, "signInWithoutAddKey": true},
			"permissions": map[string]any{"storage": true},
		}}})
	}))
	mux.HandleFunc("GET /executor.js", cors(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/javascript")
		_, _ = io.WriteString(rw, strings.ReplaceAll(fakeWalletScript, "{{origin}}", w.URL))
	}))
	mux.HandleFunc("GET /account", cors(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		defer w.mu.Unlock()
		_ = json.NewEncoder(rw).Encode(map[string]string{"accountId": w.account,
			"publicKey": people.FormatPublicKey(w.key.Public().(ed25519.PublicKey))})
	}))
	mux.HandleFunc("POST /sign", cors(func(rw http.ResponseWriter, r *http.Request) {
		var req struct {
			Message, Recipient, Nonce string
			CallbackURL               *string `json:"callbackUrl"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		nonce, err := base64.StdEncoding.DecodeString(req.Nonce)
		if err != nil || len(nonce) != 32 {
			http.Error(rw, "the nonce is not 32 bytes", http.StatusBadRequest)
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		// NEP-413: a callbackUrl given is part of what is signed.
		h := people.Nep413Hash(people.Nep413Payload(req.Message, [32]byte(nonce), req.Recipient, req.CallbackURL))
		w.signed++
		_ = json.NewEncoder(rw).Encode(map[string]string{"accountId": w.account,
			"publicKey": people.FormatPublicKey(w.key.Public().(ed25519.PublicKey)),
			"signature": base64.StdEncoding.EncodeToString(ed25519.Sign(w.key, h[:]))})
	}))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	w.URL = srv.URL
	return w
}
