package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/peopleapp"
	"github.com/petal-near/petal/domain/people"
)

// nep413Vector is the test vector made by @near-js/signers
// (domain/people/testdata/make_vector.mjs).
type nep413Vector struct {
	AccountID       string `json:"account_id"`
	PublicKey       string `json:"public_key"`
	Message         string `json:"message"`
	Recipient       string `json:"recipient"`
	NonceBase64     string `json:"nonce_base64"`
	SignatureBase64 string `json:"signature_base64"`
	SignatureBase58 string `json:"signature_base58"`
}

func loadVectors(t testing.TB) []nep413Vector {
	t.Helper()
	b, err := os.ReadFile("../../domain/people/testdata/nep413_vector.json")
	require.NoError(t, err)
	var f struct {
		Vectors []nep413Vector `json:"vectors"`
	}
	require.NoError(t, json.Unmarshal(b, &f))
	require.Len(t, f.Vectors, 2)
	return f.Vectors
}

// signInPetal serves petal at https://petal.example with a fake NEAR RPC.
func signInPetal(t *testing.T, env map[string]string) (*testPetal, *nearrpctest.Server) {
	t.Helper()
	rpc := nearrpctest.New(t)
	e := map[string]string{
		"PETAL_API":              "https://petal.example",
		"PETAL_NEAR_RPC_MAINNET": rpc.URL,
		"PETAL_NEAR_RPC_TESTNET": rpc.URL,
		// No price feed unless a test brings one: nothing reaches outside.
		"PETAL_ONECLICK_URL": "http://127.0.0.1:1",
	}
	for k, v := range env {
		e[k] = v
	}
	return startPetal(t, e), rpc
}

// issue stores a challenge with a nonce of the test's choosing, as
// POST /api/v1/auth/challenge would have.
func issue(t testing.TB, p *testPetal, nonceB64, recipient string, expiresIn time.Duration) {
	t.Helper()
	nonce, err := base64.StdEncoding.DecodeString(nonceB64)
	require.NoError(t, err)
	now := time.Now().UTC()
	_, err = p.DB.Pool.Exec(t.Context(), `INSERT INTO auth_challenges (nonce, message, recipient, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (nonce) DO UPDATE SET used_at = NULL, expires_at = EXCLUDED.expires_at, created_at = EXCLUDED.created_at`,
		nonce, people.ChallengeMessage(recipient), recipient, now.Add(-time.Minute), now.Add(expiresIn))
	require.NoError(t, err)
}

func verifyBody(network string, proof map[string]string) string {
	b, _ := json.Marshal(map[string]any{"network": network, "proof": proof})
	return string(b)
}

func vectorProof(v nep413Vector, signature string) map[string]string {
	return map[string]string{"type": "nep413", "account_id": v.AccountID, "public_key": v.PublicKey, "signature": signature,
		"message": v.Message, "nonce": v.NonceBase64, "recipient": v.Recipient}
}

const siteOrigin = "https://petal.example"

func TestSignInWithAnIndependentNEP413Signature(t *testing.T) {
	t.Parallel()
	p, _ := signInPetal(t, nil)
	v := loadVectors(t)[0]
	require.Equal(t, "alice.testnet", v.AccountID)
	issue(t, p, v.NonceBase64, v.Recipient, 5*time.Minute)

	res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", vectorProof(v, v.SignatureBase64)), "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var out struct {
		PersonID string `json:"person_id"`
		Network  string `json:"network"`
		Wallets  []struct {
			CAIP10    string `json:"caip10"`
			Network   string `json:"network"`
			AccountID string `json:"account_id"`
			ProvedAt  string `json:"proved_at"`
		} `json:"wallets"`
		ClaimedRuns         int `json:"claimed_runs"`
		ClaimedExplorations int `json:"claimed_explorations"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out))
	assert.True(t, people.IsPerson(out.PersonID))
	assert.Equal(t, "testnet", out.Network)
	require.Len(t, out.Wallets, 1)
	assert.Equal(t, "near:testnet:alice.testnet", out.Wallets[0].CAIP10)
	assert.Equal(t, "alice.testnet", out.Wallets[0].AccountID)
	assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))
	ck := cookieOf(res, "__Host-petal_session")
	require.NotNil(t, ck)
	assert.True(t, ck.Secure && ck.HttpOnly)

	res, body = p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", "__Host-petal_session="+ck.Value)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","person_id":"`+out.PersonID+`","network":"testnet","account":"alice.testnet",
		"wallets":[{"caip10":"near:testnet:alice.testnet","network":"testnet","account_id":"alice.testnet","proved_at":"`+out.Wallets[0].ProvedAt+`"}],
		"credit":null}`, body)

	// The same proof again: the nonce is used.
	res, body = p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", vectorProof(v, v.SignatureBase64)), "Origin", siteOrigin)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)

	// The address is stored sealed, found by its keyed hash.
	var sealed, hash []byte
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT address_sealed, address_hash FROM wallets`).Scan(&sealed, &hash))
	assert.NotContains(t, string(sealed), "alice")
	assert.Len(t, hash, 32)

	// A returning sign-in, with the signature in base58 and as ed25519:base58:
	// the same person, one wallet.
	for _, sig := range []string{v.SignatureBase58, "ed25519:" + v.SignatureBase58} {
		issue(t, p, v.NonceBase64, v.Recipient, 5*time.Minute)
		res, body = p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", vectorProof(v, sig)))
		require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", sig, body)
		assert.Contains(t, body, out.PersonID)
	}
	var wallets, persons int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM wallets), (SELECT count(*) FROM people)`).Scan(&wallets, &persons))
	assert.Equal(t, 1, wallets)
	assert.Equal(t, 1, persons)

	// mainnet is another wallet, so another person.
	issue(t, p, v.NonceBase64, v.Recipient, 5*time.Minute)
	res, body = p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("mainnet", vectorProof(v, v.SignatureBase64)))
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.NotContains(t, body, out.PersonID)

	// Logout ends it.
	res, _ = p.do(t, http.MethodPost, "/api/v1/auth/logout", "", "Cookie", "__Host-petal_session="+ck.Value, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode)
	res, _ = p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", "__Host-petal_session="+ck.Value)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
}

func TestSignInWithAnImplicitAccountNotYetOnChain(t *testing.T) {
	t.Parallel()
	p, rpc := signInPetal(t, nil)
	v := loadVectors(t)[1]
	require.True(t, people.IsImplicitAccount(v.AccountID))
	issue(t, p, v.NonceBase64, v.Recipient, 5*time.Minute)
	res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", vectorProof(v, v.SignatureBase64)))
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"caip10":"near:testnet:`+v.AccountID+`"`)
	assert.Equal(t, 1, rpc.CountCalls("query")-1, "view_access_key, then view_account")
}

// goKey is a key made in Go, with its recordings added to the fake RPC.
func goKey(t *testing.T, rpc *nearrpctest.Server, account, permission string) (ed25519.PrivateKey, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	pk := people.FormatPublicKey(pub)
	if account == "" {
		account = people.ImplicitAccountOf(pub)
	}
	params, _ := json.Marshal(map[string]string{"request_type": "view_access_key", "finality": "final", "account_id": account, "public_key": pk})
	var response string
	switch permission {
	case "full":
		response = `{"jsonrpc":"2.0","id":"dontcare","result":{"nonce":1,"permission":"FullAccess","block_height":1,"block_hash":"11111111111111111111111111111111"}}`
	case "unknown":
		response = `{"jsonrpc":"2.0","id":"dontcare","result":{"error":"access key ` + pk + ` does not exist while viewing","logs":[],"block_height":1,"block_hash":"11111111111111111111111111111111"}}`
	}
	rpc.Add(nearrpctest.Recording{Name: "go key", Method: "query", Params: params, Response: json.RawMessage(response)})
	return priv, account
}

// signChallenge asks the site for a challenge and signs it with priv.
func signChallenge(t *testing.T, p *testPetal, priv ed25519.PrivateKey, account string) map[string]string {
	t.Helper()
	res, body := p.do(t, http.MethodPost, "/api/v1/auth/challenge", "", "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var ch struct {
		Nonce, Message, Recipient string
		ExpiresAt                 time.Time `json:"expires_at"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &ch))
	nonce, err := base64.StdEncoding.DecodeString(ch.Nonce)
	require.NoError(t, err)
	require.Len(t, nonce, 32)
	assert.Equal(t, "petal.example", ch.Recipient, "PETAL_API's hostname")
	assert.Contains(t, ch.Message, "petal.example")
	assert.WithinDuration(t, time.Now().Add(5*time.Minute), ch.ExpiresAt, time.Minute)
	h := people.Nep413Hash(people.Nep413Payload(ch.Message, [32]byte(nonce), ch.Recipient, nil))
	sig := ed25519.Sign(priv, h[:])
	return map[string]string{"type": "nep413", "account_id": account, "public_key": people.FormatPublicKey(priv.Public().(ed25519.PublicKey)),
		"signature": base64.StdEncoding.EncodeToString(sig), "message": ch.Message, "nonce": ch.Nonce, "recipient": ch.Recipient}
}

func TestSignInMovesTheAnonymousSessionsWorkAndKeepsItsInvite(t *testing.T) {
	p, rpc := signInPetal(t, nil)
	ctx := t.Context()
	m := mintInvite(t, p, "1")
	res, body := p.do(t, http.MethodPost, "/api/v1/auth/invite", `{"token":"`+m.Token+`"}`, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	anonCookie := cookieOf(res, "__Host-petal_session")
	require.NotNil(t, anonCookie)
	var anon string
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT subject FROM sessions`).Scan(&anon))
	_, err := p.DB.Pool.Exec(ctx, `INSERT INTO runs (id, owner, status, model) VALUES ('run_a', $1, 'done', 'recorded'), ('run_b', $1, 'done', 'recorded'), ('run_other', 'anon_ffffffffffffffffffffffffffffffff', 'done', 'recorded')`, anon)
	require.NoError(t, err)
	_, err = p.DB.Pool.Exec(ctx, `INSERT INTO explorations (id, owner, question, created_at, updated_at) VALUES ('exp_a', $1, 'q', now(), now())`, anon)
	require.NoError(t, err)

	priv, account := goKey(t, rpc, "erin.testnet", "full")
	proof := signChallenge(t, p, priv, account)
	res, body = p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", proof), "Cookie", "__Host-petal_session="+anonCookie.Value, "Origin", siteOrigin)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"claimed_runs":2`)
	assert.Contains(t, body, `"claimed_explorations":1`)
	var person string
	require.NoError(t, json.Unmarshal([]byte(body), &struct {
		PersonID *string `json:"person_id"`
	}{&person}))
	var owned int
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT count(*) FROM runs WHERE owner = $1`, person).Scan(&owned))
	assert.Equal(t, 2, owned)
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT count(*) FROM runs WHERE owner = 'anon_ffffffffffffffffffffffffffffffff'`).Scan(&owned))
	assert.Equal(t, 1, owned, "another session's runs stay where they are")
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT count(*) FROM explorations WHERE owner = $1`, person).Scan(&owned))
	assert.Equal(t, 1, owned)

	newCookie := cookieOf(res, "__Host-petal_session")
	require.NotNil(t, newCookie)
	assert.NotEqual(t, anonCookie.Value, newCookie.Value, "the session is replaced")
	res, body = p.do(t, http.MethodGet, "/api/v1/auth/invite", "", "Cookie", "__Host-petal_session="+newCookie.Value)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `"status":"active"`, "the new session keeps the invite")
	res, body = p.do(t, http.MethodGet, "/api/v1/auth/invite", "", "Cookie", "__Host-petal_session="+anonCookie.Value)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","invite":null}`, body, "the old session is gone")
	res, body = p.do(t, http.MethodGet, "/api/v1/me", "", "Cookie", "__Host-petal_session="+newCookie.Value)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"account":"erin.testnet"`)
}

func TestSignInRefusals(t *testing.T) {
	t.Parallel()
	p, rpc := signInPetal(t, nil)
	v := loadVectors(t)[0]
	fresh := func() { issue(t, p, v.NonceBase64, v.Recipient, 5*time.Minute) }
	alter := func(f func(map[string]string)) map[string]string {
		pr := vectorProof(v, v.SignatureBase64)
		f(pr)
		return pr
	}
	otherNonce := base64.StdEncoding.EncodeToString(make([]byte, 32))
	goodKey, _ := goKey(t, rpc, "frank.testnet", "full")
	cases := []struct {
		name  string
		setup func()
		proof map[string]string
	}{
		{"another message", fresh, alter(func(p map[string]string) { p["message"] = "Sign in to Evil at petal.example." })},
		{"another recipient", func() { issue(t, p, v.NonceBase64, "evil.example", 5*time.Minute) },
			alter(func(p map[string]string) {
				p["recipient"] = "evil.example"
				p["message"] = people.ChallengeMessage("evil.example")
			})},
		{"another recipient than the challenge's", fresh, alter(func(p map[string]string) { p["recipient"] = "evil.example" })},
		{"a bad signature", fresh, alter(func(p map[string]string) {
			b, _ := base64.StdEncoding.DecodeString(v.SignatureBase64)
			b[10] ^= 1
			p["signature"] = base64.StdEncoding.EncodeToString(b)
		})},
		{"a signature that is not one", fresh, alter(func(p map[string]string) { p["signature"] = "not-a-signature" })},
		{"another key's signature", fresh, alter(func(p map[string]string) {
			h := people.Nep413Hash(people.Nep413Payload(v.Message, [32]byte(mustB64(v.NonceBase64)), v.Recipient, nil))
			p["signature"] = base64.StdEncoding.EncodeToString(ed25519.Sign(goodKey, h[:]))
		})},
		{"a nonce unknown", nil, alter(func(p map[string]string) { p["nonce"] = otherNonce })},
		{"a nonce that is not 32 bytes", nil, alter(func(p map[string]string) { p["nonce"] = "AAAA" })},
		{"a nonce expired", func() { issue(t, p, v.NonceBase64, v.Recipient, -time.Second) }, vectorProof(v, v.SignatureBase64)},
		{"a function-call key", fresh, alter(func(p map[string]string) { p["account_id"] = "bob.testnet" })},
		{"a key that is not on the account", fresh, alter(func(p map[string]string) { p["account_id"] = "carol.testnet" })},
		{"a key that is not on the account (structured error)", fresh, alter(func(p map[string]string) { p["account_id"] = "dave.testnet" })},
		{"a malformed public key", fresh, alter(func(p map[string]string) { p["public_key"] = "ed25519:xyz" })},
		{"an invalid account id", fresh, alter(func(p map[string]string) { p["account_id"] = "Not An Account" })},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup()
			}
			res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", tc.proof))
			assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
			assert.Contains(t, body, `"code":"unauthorised"`)
			assert.Nil(t, cookieOf(res, "__Host-petal_session"))
		})
	}

	t.Run("a nonce used", func(t *testing.T) {
		fresh()
		res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", vectorProof(v, v.SignatureBase64)))
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		res, body = p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", vectorProof(v, v.SignatureBase64)))
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	})
	t.Run("an implicit account id that is not the key's", func(t *testing.T) {
		priv, _ := goKey(t, rpc, "", "unknown")
		other := make([]byte, 32)
		_, _ = rand.Read(other)
		proof := signChallenge(t, p, priv, people.ImplicitAccountOf(other))
		params, _ := json.Marshal(map[string]string{"request_type": "view_access_key", "finality": "final", "account_id": proof["account_id"], "public_key": proof["public_key"]})
		rpc.Add(nearrpctest.Recording{Method: "query", Params: params, Response: json.RawMessage(`{"jsonrpc":"2.0","id":"x","error":{"name":"HANDLER_ERROR","cause":{"name":"UNKNOWN_ACCOUNT","info":{}},"code":-32000,"message":"Server error","data":"no account"}}`)})
		res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", proof))
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	})
	t.Run("an implicit account that exists without the key", func(t *testing.T) {
		priv, account := goKey(t, rpc, "", "unknown")
		params, _ := json.Marshal(map[string]string{"request_type": "view_account", "finality": "final", "account_id": account})
		rpc.Add(nearrpctest.Recording{Method: "query", Params: params, Response: json.RawMessage(`{"jsonrpc":"2.0","id":"x","result":{"amount":"1","locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":1,"storage_paid_at":0,"block_height":1,"block_hash":"11111111111111111111111111111111"}}`)})
		res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", signChallenge(t, p, priv, account)))
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	})
	t.Run("from another site", func(t *testing.T) {
		fresh()
		res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", vectorProof(v, v.SignatureBase64)), "Origin", "https://evil.example")
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
		res, body = p.do(t, http.MethodPost, "/api/v1/auth/challenge", "", "Origin", "https://evil.example")
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	})
	t.Run("bad input", func(t *testing.T) {
		fresh()
		res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("betanet", vectorProof(v, v.SignatureBase64)))
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
		res, body = p.do(t, http.MethodPost, "/api/v1/auth/verify", `{"network":"testnet","proof":{},"extra":1}`)
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	})
	var persons int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM people`).Scan(&persons))
	assert.Equal(t, 1, persons, "only the one good sign-in made a person")
}

func mustB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func TestSignInWhenNEARDoesNotAnswer(t *testing.T) {
	t.Parallel()
	p, rpc := signInPetal(t, nil)
	v := loadVectors(t)[0]
	issue(t, p, v.NonceBase64, v.Recipient, 5*time.Minute)
	rpc.Inject(nearrpctest.Fault{Method: "query", Status: http.StatusBadGateway, Times: 3})
	res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", vectorProof(v, v.SignatureBase64)))
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode, body)
	assert.Contains(t, body, `"code":"source_failed"`)
	// Nothing was used up: the same proof goes through once NEAR answers.
	res, body = p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", vectorProof(v, v.SignatureBase64)))
	assert.Equal(t, http.StatusOK, res.StatusCode, body)
}

func TestAGatedServerWithAModelKeyNeedsAWalletKey(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	cfg, err := config.LoadConfig(func(k string) string { return map[string]string{"NEAR_AI_API_KEY": "sk-test"}[k] })
	require.NoError(t, err)
	_, _, err = buildService(t.Context(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), lentPool{db.DB})
	require.ErrorIs(t, err, peopleapp.ErrWalletKeyRequired)

	cfg.WalletKey = strings.Repeat("0f", 32)
	_, cleanup, err := buildService(t.Context(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), lentPool{db.DB})
	require.NoError(t, err)
	cleanup()
}

func TestSignInCallsAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	// The test's client is the trusted proxy, so its cf-connecting-ip counts.
	p, _ := signInPetal(t, map[string]string{"PETAL_TRUSTED_PROXIES": "127.0.0.1"})
	for i := range peopleapp.AuthCallsPerMinute {
		res, body := p.do(t, http.MethodPost, "/api/v1/auth/challenge", "")
		require.Equal(t, http.StatusOK, res.StatusCode, "call %d: %s", i, body)
	}
	res, body := p.do(t, http.MethodPost, "/api/v1/auth/challenge", "")
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, body)
	assert.Contains(t, body, `"code":"rate_limited"`)
	assert.NotEmpty(t, res.Header.Get("Retry-After"))
	res, _ = p.do(t, http.MethodPost, "/api/v1/auth/challenge", "", "Cf-Connecting-Ip", "203.0.113.9")
	assert.Equal(t, http.StatusOK, res.StatusCode, "another address has its own allowance")
}

// TestConcurrentFirstSignInsBindOneWallet: two first sign-ins of one wallet
// at once make one person and one binding.
func TestConcurrentFirstSignInsBindOneWallet(t *testing.T) {
	t.Parallel()
	p, rpc := signInPetal(t, nil)
	priv, account := goKey(t, rpc, "gina.testnet", "full")
	proofs := make([]map[string]string, 8)
	for i := range proofs {
		proofs[i] = signChallenge(t, p, priv, account)
	}
	persons := make([]string, len(proofs))
	var wg sync.WaitGroup
	for i, proof := range proofs {
		wg.Go(func() {
			res, body := p.do(t, http.MethodPost, "/api/v1/auth/verify", verifyBody("testnet", proof))
			if assert.Equal(t, http.StatusOK, res.StatusCode, body) {
				var out struct {
					PersonID string `json:"person_id"`
				}
				assert.NoError(t, json.Unmarshal([]byte(body), &out))
				persons[i] = out.PersonID
			}
		})
	}
	wg.Wait()
	for _, id := range persons {
		assert.Equal(t, persons[0], id, "one person")
	}
	var people, wallets int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM people), (SELECT count(*) FROM wallets)`).Scan(&people, &wallets))
	assert.Equal(t, 1, people)
	assert.Equal(t, 1, wallets)
}
