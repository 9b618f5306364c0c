package porttest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/invites"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// Stores is what the suites of people, sessions, invites and the ledger need
// of one adapter: its stores over one fresh, empty database. A suite uses
// the ones it needs (a sign-in moves runs; an invite opens a ledger account).
type Stores struct {
	People   ports.PeopleStore
	Sessions ports.SessionStore
	Invites  ports.InviteStore
	Ledger   ports.LedgerStore
	Runs     ports.RunStore
	Leases   ports.Leases
	Intents  ports.IntentTopUps
}

// hexID is a random id with prefix, as petal makes them (prs_…, wal_…).
func hexID(t *testing.T, prefix string, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

// suiteNow is the suites' fixed now (stores keep what they are told).
var suiteNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func newSession(t *testing.T, subject string) people.Session {
	return people.Session{ID: hexID(t, "", 32), Subject: subject, CreatedAt: suiteNow, ExpiresAt: suiteNow.Add(24 * time.Hour)}
}

func mintInvite(t *testing.T, s ports.InviteStore, budget credit.Micros) invites.Invite {
	t.Helper()
	_, inv, err := invites.Mint(rand.Reader, budget, 14, suiteNow)
	must(t, err)
	must(t, s.CreateInvite(t.Context(), inv))
	return inv
}

// SessionStoreContract runs the SessionStore contract.
func SessionStoreContract(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Run("create, read, hold an invite, replace, delete", func(t *testing.T) {
		h := newStores(t)
		s := h.Sessions
		ctx := t.Context()
		in := newSession(t, hexID(t, "anon_", 16))
		must(t, s.CreateSession(ctx, in))
		got, err := s.Session(ctx, in.ID)
		must(t, err)
		if got.ID != in.ID || got.Subject != in.Subject || got.InviteID != "" || got.WalletID != "" ||
			!got.CreatedAt.Equal(in.CreatedAt) || !got.ExpiresAt.Equal(in.ExpiresAt) {
			t.Fatalf("read back:\n got %+v\nwant %+v", got, in)
		}
		inv := mintInvite(t, h.Invites, credit.MicrosPerUSD)
		must(t, s.SetSessionInvite(ctx, in.ID, inv.ID))
		if got, _ := s.Session(ctx, in.ID); got.InviteID != inv.ID {
			t.Fatalf("the session holds %q", got.InviteID)
		}
		if err := s.SetSessionInvite(ctx, hexID(t, "", 32), inv.ID); !errs.Is(err, errs.NotFound) {
			t.Fatalf("an unknown session: %v", err)
		}
		next := newSession(t, in.Subject)
		next.InviteID = inv.ID
		must(t, s.ReplaceSession(ctx, in.ID, next))
		if _, err := s.Session(ctx, in.ID); !errs.Is(err, errs.NotFound) {
			t.Fatalf("the replaced session is gone: %v", err)
		}
		if got, err := s.Session(ctx, next.ID); err != nil || got.InviteID != inv.ID {
			t.Fatalf("the new session: %+v %v", got, err)
		}
		must(t, s.DeleteSession(ctx, next.ID))
		must(t, s.DeleteSession(ctx, next.ID)) // a missing one is not an error
		if _, err := s.Session(ctx, next.ID); !errs.Is(err, errs.NotFound) {
			t.Fatalf("deleted: %v", err)
		}
	})
}

// signIn signs a wallet in over a fresh challenge, from oldSession.
func signIn(t *testing.T, p ports.PeopleStore, addressHash []byte, oldSession string) (ports.SignedIn, error) {
	t.Helper()
	c := people.Challenge{Message: "sign in to petal", Recipient: "petal.test", CreatedAt: suiteNow, ExpiresAt: suiteNow.Add(5 * time.Minute)}
	_, _ = rand.Read(c.Nonce[:])
	must(t, p.CreateChallenge(t.Context(), c))
	return p.SignIn(t.Context(), ports.SignIn{
		Nonce: c.Nonce, Now: suiteNow.Add(time.Minute), NewPersonID: hexID(t, "prs_", 16),
		Wallet:       ports.SealedWallet{ID: hexID(t, "wal_", 16), Network: "mainnet", AddressHash: addressHash, Sealed: []byte("sealed"), ProvedAt: suiteNow},
		OldSessionID: oldSession, NewSession: newSession(t, ""),
	})
}

func addressHash(n byte) []byte { return bytes.Repeat([]byte{n}, 32) }

// PeopleStoreContract runs the PeopleStore contract.
func PeopleStoreContract(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Run("a challenge is used once, before it expires", func(t *testing.T) {
		p := newStores(t).People
		ctx := t.Context()
		c := people.Challenge{Message: "m", Recipient: "petal.test", CreatedAt: suiteNow, ExpiresAt: suiteNow.Add(5 * time.Minute)}
		_, _ = rand.Read(c.Nonce[:])
		must(t, p.CreateChallenge(ctx, c))
		got, err := p.Challenge(ctx, c.Nonce)
		if err != nil || got.Message != "m" || !got.ExpiresAt.Equal(c.ExpiresAt) || got.UsedAt != nil {
			t.Fatalf("challenge: %+v %v", got, err)
		}
		var unknown [32]byte
		if _, err := p.Challenge(ctx, unknown); !errs.Is(err, errs.NotFound) {
			t.Fatalf("unknown challenge: %v", err)
		}
		in := ports.SignIn{Nonce: c.Nonce, Now: suiteNow.Add(6 * time.Minute), NewPersonID: hexID(t, "prs_", 16),
			Wallet:     ports.SealedWallet{ID: hexID(t, "wal_", 16), Network: "mainnet", AddressHash: addressHash(1), Sealed: []byte("s"), ProvedAt: suiteNow},
			NewSession: newSession(t, "")}
		if _, err := p.SignIn(ctx, in); !errs.Is(err, errs.Unauthorised) {
			t.Fatalf("an expired nonce: %v", err)
		}
		in.Now = suiteNow.Add(time.Minute)
		if _, err := p.SignIn(ctx, in); err != nil {
			t.Fatalf("a live nonce: %v", err)
		}
		in.NewSession = newSession(t, "")
		if _, err := p.SignIn(ctx, in); !errs.Is(err, errs.Unauthorised) {
			t.Fatalf("a used nonce: %v", err)
		}
	})

	t.Run("a wallet binds one person; an anonymous session's work and invite move to them", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		anon := newSession(t, hexID(t, "anon_", 16))
		must(t, h.Sessions.CreateSession(ctx, anon))
		inv := mintInvite(t, h.Invites, credit.MicrosPerUSD)
		must(t, h.Sessions.SetSessionInvite(ctx, anon.ID, inv.ID))
		_, err := h.Runs.Create(ctx, runs.Run{ID: "run_anon", Owner: anon.Subject, Model: "recorded"})
		must(t, err)

		first, err := signIn(t, h.People, addressHash(2), anon.ID)
		must(t, err)
		if !people.IsPerson(first.PersonID) || first.Session.Subject != first.PersonID || first.Session.WalletID == "" {
			t.Fatalf("signed in: %+v", first)
		}
		if first.ClaimedRuns != 1 || first.Session.InviteID != inv.ID {
			t.Fatalf("the anonymous session's run and invite move: %+v", first)
		}
		if r, _ := h.Runs.Get(ctx, "run_anon"); r.Owner != first.PersonID {
			t.Fatalf("the run's owner is %q", r.Owner)
		}
		if _, err := h.Sessions.Session(ctx, anon.ID); !errs.Is(err, errs.NotFound) {
			t.Fatalf("the old session is replaced: %v", err)
		}
		if got, err := h.Sessions.Session(ctx, first.Session.ID); err != nil || got.Subject != first.PersonID {
			t.Fatalf("the new session: %+v %v", got, err)
		}

		again, err := signIn(t, h.People, addressHash(2), "")
		must(t, err)
		if again.PersonID != first.PersonID || again.Session.WalletID != first.Session.WalletID {
			t.Fatalf("the same wallet finds the same person: %+v vs %+v", again, first)
		}
		w, err := h.People.WalletByHash(ctx, addressHash(2))
		if err != nil || w.PersonID != first.PersonID || string(w.Sealed) != "sealed" {
			t.Fatalf("wallet by hash: %+v %v", w, err)
		}
		ws, err := h.People.Wallets(ctx, first.PersonID)
		if err != nil || len(ws) != 1 || ws[0].ID != w.ID {
			t.Fatalf("wallets: %+v %v", ws, err)
		}
		if _, err := h.People.WalletByHash(ctx, addressHash(3)); !errs.Is(err, errs.NotFound) {
			t.Fatalf("an unbound wallet: %v", err)
		}
	})

	t.Run("two first sign-ins of one wallet at once make one person", func(t *testing.T) {
		p := newStores(t).People
		var wg sync.WaitGroup
		persons := make([]string, 8)
		for i := range persons {
			wg.Go(func() {
				out, err := signIn(t, p, addressHash(4), "")
				if err != nil {
					t.Error(err)
					return
				}
				persons[i] = out.PersonID
			})
		}
		wg.Wait()
		for _, id := range persons {
			if id != persons[0] {
				t.Fatalf("one wallet, several persons: %v", persons)
			}
		}
	})

	t.Run("a second wallet reaches the same person; one bound elsewhere is refused and nothing moves", func(t *testing.T) {
		p := newStores(t).People
		ctx := t.Context()
		alice, err := signIn(t, p, addressHash(6), "")
		must(t, err)
		bob, err := signIn(t, p, addressHash(7), "")
		must(t, err)
		attach := func(person string, hash []byte) (ports.Attached, [32]byte, error) {
			c := people.Challenge{Message: "m", Recipient: "petal.test", CreatedAt: suiteNow, ExpiresAt: suiteNow.Add(5 * time.Minute)}
			_, _ = rand.Read(c.Nonce[:])
			must(t, p.CreateChallenge(ctx, c))
			out, err := p.AttachWallet(ctx, ports.AttachWallet{Nonce: c.Nonce, Now: suiteNow.Add(time.Minute), PersonID: person,
				Wallet: ports.SealedWallet{ID: hexID(t, "wal_", 16), Network: "testnet", AddressHash: hash, Sealed: []byte("second"), ProvedAt: suiteNow.Add(time.Minute)}})
			return out, c.Nonce, err
		}
		second, _, err := attach(alice.PersonID, addressHash(8))
		must(t, err)
		if second.Already || second.WalletID == "" {
			t.Fatalf("attached: %+v", second)
		}
		ws, err := p.Wallets(ctx, alice.PersonID)
		if err != nil || len(ws) != 2 || ws[1].ID != second.WalletID || ws[1].Network != "testnet" {
			t.Fatalf("alice's wallets: %+v %v", ws, err)
		}
		// Signing in with the second wallet is alice.
		viaSecond, err := signIn(t, p, addressHash(8), "")
		if err != nil || viaSecond.PersonID != alice.PersonID || viaSecond.Session.WalletID != second.WalletID {
			t.Fatalf("the second wallet signs in as alice: %+v %v", viaSecond, err)
		}
		again, _, err := attach(alice.PersonID, addressHash(8))
		if err != nil || !again.Already || again.WalletID != second.WalletID {
			t.Fatalf("attached again: %+v %v", again, err)
		}
		// Bob's wallet stays bob's; the refused proof's nonce is not used up.
		_, nonce, err := attach(alice.PersonID, addressHash(7))
		if !errs.Is(err, errs.Conflict) {
			t.Fatalf("a wallet bound to another person: %v", err)
		}
		if c, err := p.Challenge(ctx, nonce); err != nil || c.UsedAt != nil {
			t.Fatalf("the refused attach left its nonce used: %+v %v", c, err)
		}
		if w, err := p.WalletByHash(ctx, addressHash(7)); err != nil || w.PersonID != bob.PersonID || string(w.Sealed) != "sealed" {
			t.Fatalf("bob's wallet moved: %+v %v", w, err)
		}
		if ws, _ := p.Wallets(ctx, alice.PersonID); len(ws) != 2 {
			t.Fatalf("alice has %d wallets", len(ws))
		}
		// A used nonce attaches nothing.
		c := people.Challenge{Message: "m", Recipient: "petal.test", CreatedAt: suiteNow, ExpiresAt: suiteNow.Add(5 * time.Minute)}
		_, _ = rand.Read(c.Nonce[:])
		must(t, p.CreateChallenge(ctx, c))
		in := ports.AttachWallet{Nonce: c.Nonce, Now: suiteNow.Add(6 * time.Minute), PersonID: alice.PersonID,
			Wallet: ports.SealedWallet{ID: hexID(t, "wal_", 16), Network: "mainnet", AddressHash: addressHash(9), Sealed: []byte("x"), ProvedAt: suiteNow}}
		if _, err := p.AttachWallet(ctx, in); !errs.Is(err, errs.Unauthorised) {
			t.Fatalf("an expired nonce: %v", err)
		}
		if _, err := p.WalletByHash(ctx, addressHash(9)); !errs.Is(err, errs.NotFound) {
			t.Fatalf("an expired nonce bound a wallet: %v", err)
		}
	})

	t.Run("two people attaching one wallet at once: one has it", func(t *testing.T) {
		p := newStores(t).People
		ctx := t.Context()
		var persons [6]string
		for i := range persons {
			out, err := signIn(t, p, addressHash(byte(20+i)), "")
			must(t, err)
			persons[i] = out.PersonID
		}
		var wg sync.WaitGroup
		results := make([]error, len(persons))
		for i := range persons {
			c := people.Challenge{Message: "m", Recipient: "petal.test", CreatedAt: suiteNow, ExpiresAt: suiteNow.Add(5 * time.Minute)}
			_, _ = rand.Read(c.Nonce[:])
			must(t, p.CreateChallenge(ctx, c))
			w := ports.SealedWallet{ID: hexID(t, "wal_", 16), Network: "mainnet", AddressHash: addressHash(30), Sealed: []byte("s"), ProvedAt: suiteNow}
			wg.Go(func() {
				_, results[i] = p.AttachWallet(ctx, ports.AttachWallet{Nonce: c.Nonce, Now: suiteNow.Add(time.Minute), PersonID: persons[i], Wallet: w})
			})
		}
		wg.Wait()
		won := 0
		for i, err := range results {
			switch {
			case err == nil:
				won++
			case !errs.Is(err, errs.Conflict):
				t.Fatalf("attach %d: %v", i, err)
			}
		}
		if won != 1 {
			t.Fatalf("%d people have the wallet", won)
		}
	})

	t.Run("a person's tip is set and cleared", func(t *testing.T) {
		p := newStores(t).People
		ctx := t.Context()
		out, err := signIn(t, p, addressHash(5), "")
		must(t, err)
		if tip, err := p.TipPercent(ctx, out.PersonID); err != nil || tip != nil {
			t.Fatalf("no tip set: %v %v", tip, err)
		}
		ten := 10
		must(t, p.SetTipPercent(ctx, out.PersonID, &ten))
		if tip, err := p.TipPercent(ctx, out.PersonID); err != nil || tip == nil || *tip != 10 {
			t.Fatalf("tip: %v %v", tip, err)
		}
		must(t, p.SetTipPercent(ctx, out.PersonID, nil))
		if tip, err := p.TipPercent(ctx, out.PersonID); err != nil || tip != nil {
			t.Fatalf("cleared: %v %v", tip, err)
		}
	})
}

// InviteStoreContract runs the InviteStore contract.
func InviteStoreContract(t *testing.T, newStores func(t *testing.T) Stores) {
	t.Run("an invite is found by id and by its token's hash, with its account", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		inv := mintInvite(t, h.Invites, 2*credit.MicrosPerUSD)
		got, err := h.Invites.Invite(ctx, inv.ID)
		if err != nil || got.ID != inv.ID || got.Budget != inv.Budget || got.Spent != 0 || got.Held != 0 ||
			!got.ExpiresAt.Equal(inv.ExpiresAt) || !got.CreatedAt.Equal(inv.CreatedAt) || got.RevokedAt != nil {
			t.Fatalf("by id: %+v %v", got, err)
		}
		if got, err := h.Invites.InviteByTokenHash(ctx, inv.TokenHash); err != nil || got.ID != inv.ID {
			t.Fatalf("by token hash: %+v %v", got, err)
		}
		if _, err := h.Invites.Invite(ctx, hexID(t, "inv_", 16)); !errs.Is(err, errs.NotFound) {
			t.Fatalf("unknown id: %v", err)
		}
		if _, err := h.Invites.InviteByTokenHash(ctx, hexID(t, "", 32)); !errs.Is(err, errs.NotFound) {
			t.Fatalf("unknown token: %v", err)
		}
		a, err := h.Ledger.Account(ctx, credit.InviteAccount(inv.ID))
		if err != nil || a.Kind != credit.KindInvite || a.Limit != inv.Budget || a.ExpiresAt == nil || !a.ExpiresAt.Equal(inv.ExpiresAt) {
			t.Fatalf("the invite's account opens at its budget: %+v %v", a, err)
		}
	})

	t.Run("revoking keeps the first time", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		inv := mintInvite(t, h.Invites, credit.MicrosPerUSD)
		first, err := h.Invites.RevokeInvite(ctx, inv.ID, suiteNow.Add(time.Hour))
		if err != nil || first.RevokedAt == nil || !first.RevokedAt.Equal(suiteNow.Add(time.Hour)) {
			t.Fatalf("revoke: %+v %v", first, err)
		}
		second, err := h.Invites.RevokeInvite(ctx, inv.ID, suiteNow.Add(2*time.Hour))
		if err != nil || !second.RevokedAt.Equal(suiteNow.Add(time.Hour)) {
			t.Fatalf("a second revoke keeps the first time: %+v %v", second, err)
		}
		if second.StatusAt(suiteNow.Add(3*time.Hour)) != invites.Revoked {
			t.Fatalf("status: %s", second.StatusAt(suiteNow.Add(3*time.Hour)))
		}
	})

	t.Run("the list is newest first", func(t *testing.T) {
		h := newStores(t)
		var ids []string
		for i := range 3 {
			_, inv, err := invites.Mint(rand.Reader, credit.MicrosPerUSD, 14, suiteNow.Add(time.Duration(i)*time.Minute))
			must(t, err)
			must(t, h.Invites.CreateInvite(t.Context(), inv))
			ids = append(ids, inv.ID)
		}
		list, err := h.Invites.Invites(t.Context())
		must(t, err)
		if len(list) != 3 || list[0].ID != ids[2] || list[2].ID != ids[0] {
			t.Fatalf("list: %v", fmt.Sprint(list))
		}
	})
}
