package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/people"
)

// signWithCallback re-signs a challenge's proof with NEP-413's callbackUrl,
// as a wallet that signs by redirect does, and names it in the proof.
func signWithCallback(t *testing.T, priv ed25519.PrivateKey, proof map[string]string, callback string) map[string]string {
	t.Helper()
	nonce, err := base64.StdEncoding.DecodeString(proof["nonce"])
	require.NoError(t, err)
	h := people.Nep413Hash(people.Nep413Payload(proof["message"], [32]byte(nonce), proof["recipient"], &callback))
	out := map[string]string{}
	for k, v := range proof {
		out[k] = v
	}
	out["signature"] = base64.StdEncoding.EncodeToString(ed25519.Sign(priv, h[:]))
	out["callback_url"] = callback
	return out
}

// A wallet that signs by redirect signs the callbackUrl too: a proof whose
// callback is this site's /signin verifies; another site's is 401, even
// signed correctly, and leaves its nonce unused.
func TestARedirectWalletsProofVerifiesOnlyWithThisSitesSignInPage(t *testing.T) {
	t.Parallel()
	p, rpc := signInPetal(t, nil)
	priv, account := goKey(t, rpc, "erin.testnet", "full")

	elsewhere := signWithCallback(t, priv, signChallenge(t, p, priv, account), "https://evil.example/signin")
	res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", elsewhere), "Origin", siteOrigin)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	assert.Contains(t, body, "callback_url is not this site's sign-in page")
	assert.Nil(t, cookieOf(res, "__Host-petal_session"))

	page := signWithCallback(t, priv, signChallenge(t, p, priv, account), siteOrigin+"/signin")
	lied := map[string]string{}
	for k, v := range page {
		lied[k] = v
	}
	lied["callback_url"] = siteOrigin + "/signin?next=/me" // not what was signed, nor the page
	res, body = p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", lied), "Origin", siteOrigin)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)

	res, body = p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", page), "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.NotNil(t, cookieOf(res, "__Host-petal_session"))

	// Signed without the callback but naming it: the page's own wallets
	// answer in the page, and their payload has none.
	plain := signChallenge(t, p, priv, account)
	plain["callback_url"] = siteOrigin + "/signin"
	res, body = p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", plain), "Origin", siteOrigin)
	assert.Equal(t, http.StatusOK, res.StatusCode, body)
}

// A second wallet attached by signing with it reaches the same person and
// credit; a wallet bound to someone else is 409 and nothing moves.
func TestASecondWalletIsAttachedAndOneBoundElsewhereIsRefused(t *testing.T) {
	t.Parallel()
	p, rpc := signInPetal(t, nil)
	erinKey, erin := goKey(t, rpc, "erin.testnet", "full")
	frankKey, frank := goKey(t, rpc, "frank.near", "full")
	gretaKey, greta := goKey(t, rpc, "greta.near", "full")
	signIn := func(key ed25519.PrivateKey, account, network string) (string, string) {
		res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody(network, signChallenge(t, p, key, account)), "Origin", siteOrigin)
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		var out struct {
			PersonID string `json:"person_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &out))
		return "__Host-petal_session=" + cookieOf(res, "__Host-petal_session").Value, out.PersonID
	}
	erinCookie, erinPerson := signIn(erinKey, erin, "testnet")
	_, gretaPerson := signIn(gretaKey, greta, "mainnet")

	res, body := p.do(t, http.MethodPost, "/api/v1/me/wallets", verifyBody("mainnet", signChallenge(t, p, frankKey, frank)), "Origin", siteOrigin)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "a visitor attaches nothing: %s", body)

	res, body = p.do(t, http.MethodPost, "/api/v1/me/wallets", verifyBody("mainnet", signChallenge(t, p, frankKey, frank)),
		"Origin", siteOrigin, "Cookie", erinCookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"caip10":"near:mainnet:frank.near"`)
	assert.Contains(t, body, `"already":false`)
	_, frankPerson := signIn(frankKey, frank, "mainnet")
	assert.Equal(t, erinPerson, frankPerson, "the second wallet signs in as the same person")

	res, body = p.do(t, http.MethodPost, "/api/v1/me/wallets", verifyBody("mainnet", signChallenge(t, p, gretaKey, greta)),
		"Origin", siteOrigin, "Cookie", erinCookie)
	assert.Equal(t, http.StatusConflict, res.StatusCode, body)
	assert.Contains(t, body, "already bound to another person")
	_, again := signIn(gretaKey, greta, "mainnet")
	assert.Equal(t, gretaPerson, again, "greta's wallet is still greta's: nothing merged")
	res, body = p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", erinCookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var me struct {
		Wallets []struct {
			CAIP10 string `json:"caip10"`
		} `json:"wallets"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &me))
	assert.Equal(t, 2, len(me.Wallets), body)

	res, body = p.do(t, http.MethodPost, "/api/v1/me/wallets", verifyBody("mainnet", signChallenge(t, p, frankKey, frank)),
		"Origin", "https://evil.example", "Cookie", erinCookie)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "another site's page: %s", body)
}
