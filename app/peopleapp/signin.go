package peopleapp

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/internal/ids"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// SignInService is NEP-413 sign-in and the person's own view (/me).
//
// Challenge issues a 32-byte nonce (5 minutes, single use, kept in the
// database) for the site's recipient (PETAL_API's hostname). Verify checks
// the proof's message, recipient, nonce and ed25519 signature, then asks
// NEAR's RPC that the key is a full-access key of the account (or that an
// implicit account not yet on chain is the key's own); every refusal is
// unauthorised, and an RPC that does not answer is source_failed with nothing
// used up, so the same proof may be sent again. On success, one transaction
// finds or makes the person, binds the wallet, moves the anonymous session's
// runs and explorations, and replaces the session, keeping its invite.
type SignInService struct {
	cfg     config.Config
	store   ports.PeopleStore
	near    ports.NearAccounts
	keys    *WalletKeys
	ledger  ports.LedgerStore
	clock   ports.Clock
	random  ports.Random
	limiter ports.RateLimiter
}

// NewSignInService makes the sign-in service.
func NewSignInService(cfg config.Config, store ports.PeopleStore, near ports.NearAccounts, keys *WalletKeys, ledger ports.LedgerStore,
	clock ports.Clock, random ports.Random, limiter ports.RateLimiter) *SignInService {
	return &SignInService{cfg: cfg, store: store, near: near, keys: keys, ledger: ledger, clock: clock, random: random, limiter: limiter}
}

// AuthCallsPerMinute bounds challenges and verifications per address: each
// writes a row or asks NEAR's RPC, and nobody signs in sixty times a minute.
const AuthCallsPerMinute = 60

// Limit takes one sign-in call from address's allowance.
func (s *SignInService) Limit(ctx context.Context, address string) error {
	if s.limiter == nil {
		return nil
	}
	ok, wait, err := s.limiter.Allow(ctx, "auth:"+address, AuthCallsPerMinute, time.Minute)
	if err != nil {
		return errs.New(errs.Internal, "the rate limiter failed").WithCause(err)
	}
	if !ok {
		return toolkit.RateLimited(fmt.Sprintf("more than %d sign-in calls a minute from this address", AuthCallsPerMinute), wait)
	}
	return nil
}

// ChallengeBody is POST /api/v1/auth/challenge's answer.
type ChallengeBody struct {
	Nonce     string    `json:"nonce"`
	Message   string    `json:"message"`
	Recipient string    `json:"recipient"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Challenge issues a sign-in challenge.
func (s *SignInService) Challenge(ctx context.Context) (ChallengeBody, error) {
	c, err := people.NewChallenge(s.random, s.cfg.Recipient(), s.clock.Now())
	if err != nil {
		return ChallengeBody{}, err
	}
	if err := s.store.CreateChallenge(ctx, c); err != nil {
		return ChallengeBody{}, err
	}
	return ChallengeBody{Nonce: base64.StdEncoding.EncodeToString(c.Nonce[:]), Message: c.Message, Recipient: c.Recipient, ExpiresAt: c.ExpiresAt}, nil
}

// VerifyInput is POST /api/v1/auth/verify's body.
type VerifyInput struct {
	Network string       `json:"network"`
	Proof   people.Proof `json:"proof"`
}

// VerifyBody is the sign-in's answer.
type VerifyBody struct {
	PersonID            string              `json:"person_id"`
	Network             string              `json:"network"`
	Wallets             []people.WalletView `json:"wallets"`
	ClaimedRuns         int                 `json:"claimed_runs"`
	ClaimedExplorations int                 `json:"claimed_explorations"`
}

func refused(message string) *errs.Error {
	return errs.New(errs.Unauthorised, message, "ask for a new challenge and sign it with a full-access key")
}

// checkProof checks a wallet's proof (network, message, recipient, nonce
// unused and live, callback, signature, and the key with NEAR's RPC) and
// returns its nonce, to be used up in the store's transaction.
func (s *SignInService) checkProof(ctx context.Context, in VerifyInput) ([32]byte, error) {
	if !people.ValidNetwork(in.Network) {
		return [32]byte{}, errs.New(errs.BadInput, "network must be mainnet or testnet")
	}
	p := in.Proof
	if p.Type != "" && p.Type != "nep413" {
		return [32]byte{}, errs.New(errs.BadInput, "proof.type must be nep413")
	}
	if !people.ValidAccountID(p.AccountID) {
		return [32]byte{}, refused("proof.account_id is not a NEAR account id")
	}
	key, err := people.ParsePublicKey(p.PublicKey)
	if err != nil {
		return [32]byte{}, refused("proof.public_key is not an ed25519 key")
	}
	rawNonce, err := base64.StdEncoding.DecodeString(p.Nonce)
	if err != nil || len(rawNonce) != 32 {
		return [32]byte{}, refused("the nonce is not one this site issued")
	}
	nonce := [32]byte(rawNonce)
	now := s.clock.Now()
	ch, err := s.store.Challenge(ctx, nonce)
	if errs.Is(err, errs.NotFound) {
		return [32]byte{}, refused("the nonce is not one this site issued")
	}
	if err != nil {
		return [32]byte{}, err
	}
	switch {
	case ch.UsedAt != nil:
		return [32]byte{}, refused("this nonce was already used")
	case !now.Before(ch.ExpiresAt):
		return [32]byte{}, refused("this nonce has expired")
	case p.Recipient != s.cfg.Recipient() || p.Recipient != ch.Recipient:
		return [32]byte{}, refused("the proof names another recipient than this site")
	case p.Message != ch.Message:
		return [32]byte{}, refused("the proof signs another message than the one issued")
	}
	if err := s.checkSignature(key, p, nonce); err != nil {
		return [32]byte{}, err
	}
	if err := s.checkKey(ctx, "near:"+in.Network, p.AccountID, p.PublicKey, people.ImplicitAccountOf(key)); err != nil {
		return [32]byte{}, err
	}
	return nonce, nil
}

// Verify signs in. old is the request's session (zero for none). It returns
// the new session's token, shown once, and the answer.
func (s *SignInService) Verify(ctx context.Context, old people.Session, in VerifyInput) (string, VerifyBody, error) {
	nonce, err := s.checkProof(ctx, in)
	if err != nil {
		return "", VerifyBody{}, err
	}
	p := in.Proof
	now := s.clock.Now()

	wk, err := s.keys.Key(ctx)
	if err != nil {
		return "", VerifyBody{}, err
	}
	sealed, err := wk.Seal(s.random, in.Network, p.AccountID)
	if err != nil {
		return "", VerifyBody{}, err
	}
	personID, err := people.NewPersonID(s.random)
	if err != nil {
		return "", VerifyBody{}, err
	}
	walletID, err := ids.NewID(s.random, "wal_")
	if err != nil {
		return "", VerifyBody{}, err
	}
	token, session, err := people.NewSession(s.random, personID, now)
	if err != nil {
		return "", VerifyBody{}, err
	}
	done, err := s.store.SignIn(ctx, ports.SignIn{
		Nonce:        nonce,
		Now:          now,
		NewPersonID:  personID,
		Wallet:       ports.SealedWallet{ID: walletID, Network: in.Network, AddressHash: wk.AddressHash(in.Network, p.AccountID), Sealed: sealed, ProvedAt: now},
		OldSessionID: old.ID,
		NewSession:   session,
	})
	if err != nil {
		return "", VerifyBody{}, err
	}
	wallets, err := s.wallets(ctx, done.PersonID)
	if err != nil {
		return "", VerifyBody{}, err
	}
	return token, VerifyBody{PersonID: done.PersonID, Network: in.Network, Wallets: wallets,
		ClaimedRuns: done.ClaimedRuns, ClaimedExplorations: done.ClaimedExplorations}, nil
}

// checkSignature checks the proof's NEP-413 signature. A proof that names a
// callback_url (a wallet that signs by redirect signed it too) is accepted
// only when that is this site's own sign-in page; its signature may cover
// the callback or not (a wallet that answers in the page signs none).
func (s *SignInService) checkSignature(key ed25519.PublicKey, p people.Proof, nonce [32]byte) error {
	if p.CallbackURL != nil && !people.CallbackIsSignInPage(*p.CallbackURL, s.cfg.SiteOrigin(), s.cfg.LocalSite()) {
		return refused("the proof's callback_url is not this site's sign-in page")
	}
	if people.VerifyNep413(key, p.Signature, p.Message, nonce, p.Recipient) ||
		p.CallbackURL != nil && people.VerifyNep413Callback(key, p.Signature, p.Message, nonce, p.Recipient, p.CallbackURL) {
		return nil
	}
	return refused("the signature does not match")
}

// checkKey asks NEAR that publicKey is a full-access key of account. An
// implicit account that does not exist yet passes when its id is the hex of
// the key, and only while view_account says it does not exist.
func (s *SignInService) checkKey(ctx context.Context, chain, account, publicKey, implicitOfKey string) error {
	ak, err := s.near.ViewAccessKey(ctx, chain, account, publicKey)
	switch {
	case err == nil && ak.FullAccess:
		return nil
	case err == nil:
		return refused("this key is not a full-access key of the account")
	case errs.Is(err, errs.NotFound):
		if !people.IsImplicitAccount(account) || account != implicitOfKey {
			return refused("this key is not a key of the account")
		}
		_, verr := s.near.ViewAccount(ctx, chain, account)
		switch {
		case errs.Is(verr, errs.NotFound):
			return nil
		case verr == nil:
			return refused("this key is not a key of the account")
		}
		return rpcFailed(verr)
	}
	return rpcFailed(err)
}

func rpcFailed(err error) error {
	return errs.New(errs.SourceFailed, "NEAR's RPC did not answer, so the key could not be checked", "send the same proof again in a moment").WithCause(err)
}

func (s *SignInService) wallets(ctx context.Context, personID string) ([]people.WalletView, error) {
	sealed, err := s.store.Wallets(ctx, personID)
	if err != nil {
		return nil, err
	}
	wk, err := s.keys.Key(ctx)
	if err != nil {
		return nil, err
	}
	out := []people.WalletView{}
	for _, w := range sealed {
		account, err := wk.Open(w.Network, w.Sealed)
		if err != nil {
			continue // sealed under a key this process no longer has
		}
		out = append(out, people.Wallet{ID: w.ID, PersonID: w.PersonID, Network: w.Network, AccountID: account, ProvedAt: w.ProvedAt}.View())
	}
	return out, nil
}

// WalletsOf are a person's wallets, opened.
func (s *SignInService) WalletsOf(ctx context.Context, personID string) ([]people.Wallet, error) {
	sealed, err := s.store.Wallets(ctx, personID)
	if err != nil {
		return nil, err
	}
	wk, err := s.keys.Key(ctx)
	if err != nil {
		return nil, err
	}
	var out []people.Wallet
	for _, w := range sealed {
		if account, err := wk.Open(w.Network, w.Sealed); err == nil {
			out = append(out, people.Wallet{ID: w.ID, PersonID: w.PersonID, Network: w.Network, AccountID: account, ProvedAt: w.ProvedAt})
		}
	}
	return out, nil
}

// CreditView is a person's own credit as the contract shows it.
type CreditView struct {
	FundedUSD  credit.USDNumber `json:"funded_usd"`
	SpentUSD   credit.USDNumber `json:"spent_usd"`
	LeftUSD    credit.USDNumber `json:"left_usd"`
	USDPerChat credit.USDNumber `json:"usd_per_chat"`
}

// Credit is a person's credit, nil for one with none of their own.
func (s *SignInService) Credit(ctx context.Context, personID string) (*CreditView, error) {
	a, err := s.ledger.Account(ctx, credit.PersonAccount(personID))
	if errs.Is(err, errs.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &CreditView{FundedUSD: a.Limit.USD(), SpentUSD: a.Spent.USD(), LeftUSD: max(a.Limit-a.Spent, 0).USD(), USDPerChat: s.cfg.PersonPerChat.USD()}, nil
}

// MeBody is GET /api/v1/me.
type MeBody struct {
	PersonID string              `json:"person_id"`
	Network  *string             `json:"network"`
	Account  *string             `json:"account"`
	Wallets  []people.WalletView `json:"wallets"`
	Credit   *CreditView         `json:"credit"`
}

// Me is the signed-in person's own view. network and account are the wallet
// this session came in with.
func (s *SignInService) Me(ctx context.Context, sess people.Session) (MeBody, error) {
	if !sess.Signed() {
		return MeBody{}, errs.New(errs.Unauthorised, "sign in first")
	}
	wallets, err := s.WalletsOf(ctx, sess.Subject)
	if err != nil {
		return MeBody{}, err
	}
	out := MeBody{PersonID: sess.Subject, Wallets: []people.WalletView{}}
	for _, w := range wallets {
		out.Wallets = append(out.Wallets, w.View())
		if w.ID == sess.WalletID {
			network, account := w.Network, w.AccountID
			out.Network, out.Account = &network, &account
		}
	}
	if out.Credit, err = s.Credit(ctx, sess.Subject); err != nil {
		return MeBody{}, err
	}
	return out, nil
}

// AttachBody is POST /api/v1/me/wallets' answer: the person's wallets now.
type AttachBody struct {
	PersonID string              `json:"person_id"`
	Attached people.WalletView   `json:"attached"`
	Already  bool                `json:"already"`
	Wallets  []people.WalletView `json:"wallets"`
}

// Attach binds a second wallet to the signed-in person of sess (SYS-023),
// checked as a sign-in is. Both wallets then sign in as that one person,
// with one credit. A wallet bound to someone else is conflict and nothing
// changes: people are never merged. The session stays as it is.
func (s *SignInService) Attach(ctx context.Context, sess people.Session, in VerifyInput) (AttachBody, error) {
	if !sess.Signed() {
		return AttachBody{}, errs.New(errs.Unauthorised, "sign in first", "attach another wallet once signed in with one")
	}
	nonce, err := s.checkProof(ctx, in)
	if err != nil {
		return AttachBody{}, err
	}
	wk, err := s.keys.Key(ctx)
	if err != nil {
		return AttachBody{}, err
	}
	account := in.Proof.AccountID
	sealed, err := wk.Seal(s.random, in.Network, account)
	if err != nil {
		return AttachBody{}, err
	}
	walletID, err := ids.NewID(s.random, "wal_")
	if err != nil {
		return AttachBody{}, err
	}
	now := s.clock.Now()
	done, err := s.store.AttachWallet(ctx, ports.AttachWallet{Nonce: nonce, Now: now, PersonID: sess.Subject,
		Wallet: ports.SealedWallet{ID: walletID, Network: in.Network, AddressHash: wk.AddressHash(in.Network, account), Sealed: sealed, ProvedAt: now}})
	if err != nil {
		return AttachBody{}, err
	}
	wallets, err := s.wallets(ctx, sess.Subject)
	if err != nil {
		return AttachBody{}, err
	}
	return AttachBody{PersonID: sess.Subject, Already: done.Already, Wallets: wallets,
		Attached: people.Wallet{ID: done.WalletID, PersonID: sess.Subject, Network: in.Network, AccountID: account, ProvedAt: now}.View()}, nil
}
