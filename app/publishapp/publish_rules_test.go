package publishapp_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"log/slog"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/publishapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/ports"
)

const alice = "prs_00000000000000000000000000000001"

// wallets is the sign-in service as publishing reads it: alice holds one
// wallet, on testnet.
type wallets struct{}

func (wallets) WalletsOf(_ context.Context, person string) ([]people.Wallet, error) {
	if person != alice {
		return nil, nil
	}
	return []people.Wallet{{ID: "wal_1", PersonID: alice, Network: "testnet", AccountID: "alice.testnet"}}, nil
}

// preparedOnly records what prepare_publish keeps. Only Prepare is
// PostgreSQL's business in these tests; any other call panics.
type preparedOnly struct {
	ports.PublishedFlowers
	mu   sync.Mutex
	kept []published.Prepared
}

func (p *preparedOnly) Prepare(_ context.Context, x published.Prepared) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.kept = append(p.kept, x)
	return nil
}

type fixture struct {
	s        *publishapp.PublishService
	flowers  *flowersapp.FlowerService
	prepared *preparedOnly
	spec     json.RawMessage // a valid spec of the stored snapshot
	specSHA  string
}

// publishing is the publishing service over the in-memory snapshot and spec
// stores holding one shipped snapshot, NEAR at $5.
func publishing(t *testing.T) fixture {
	t.Helper()
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	store := memory.NewSnapshotStore()
	sh := snapshotsapp.ShippedSnapshots()[0]
	_, err = snapshotsapp.StoreCanonical(t.Context(), store, sh.Snapshot, sh.SHA256, sh.Canonical, snapshotsapp.OriginThisSite)
	require.NoError(t, err)
	library := snapshotsapp.NewSnapshotLibrary(cfg, store, ports.NoMetrics{})
	flowers := flowersapp.NewFlowerService(library, memory.NewSpecStore(), nil, nil)
	prepared := &preparedOnly{}
	s, err := publishapp.NewPublishService(flowers, prepared, nil, nil, nil, wallets{}, nil,
		memory.FixedNearPrice{Price: 5 * credit.MicrosPerUSD}, nil, memory.SystemClock{}, rand.Reader,
		slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	require.NoError(t, err)
	// Proposed by a service of its own, so this one has kept no spec yet.
	proposer := flowersapp.NewFlowerService(library, memory.NewSpecStore(), nil, nil)
	p, err := proposer.Propose(t.Context(), "", sh.SHA256, "")
	require.NoError(t, err)
	spec, err := json.Marshal(p.Spec)
	require.NoError(t, err)
	return fixture{s: s, flowers: flowers, prepared: prepared, spec: spec, specSHA: p.SpecSHA256}
}

func yocto(t *testing.T, s string) *big.Int {
	t.Helper()
	n, ok := new(big.Int).SetString(s, 10)
	require.True(t, ok, "%q is no integer", s)
	return n
}

// A quote asked without a wallet prices the record for the longest account
// on mainnet's SocialDB: its line items add up to the deposit, storage at
// 10^19 yoctoNEAR a byte, and it keeps nothing (the inline spec is no draft
// afterwards).
func TestAQuoteAddsUpAndKeepsNothing(t *testing.T) {
	f := publishing(t)
	q, err := f.s.Quote(t.Context(), toolkit.Caller{}, publishapp.PublishRequest{Spec: f.spec, Name: "The council"})
	require.NoError(t, err)
	got := q.Quote
	assert.Equal(t, "near:mainnet", got.Network)
	assert.Equal(t, "social.near", got.Receiver)
	assert.Equal(t, "100000000000000", got.Gas)
	require.Len(t, got.LineItems, 4, "record, key, SocialDB's margin, gas")

	storage := new(big.Int)
	for _, l := range got.LineItems[:3] {
		storage.Add(storage, yocto(t, l.Yocto))
	}
	assert.Equal(t, got.DepositYocto, storage.String(), "the deposit is the three storage lines")
	perByte := new(big.Int).Exp(big.NewInt(10), big.NewInt(19), nil)
	assert.Equal(t, new(big.Int).Mul(big.NewInt(int64(got.Bytes)), perByte).String(), got.DepositYocto)
	assert.Equal(t, "10000000000000000000000", got.LineItems[3].Yocto, "100 Tgas at 10^8 yocto a unit")
	require.NotNil(t, got.USD, "NEAR's price is known, so is the quote's")
	assert.Positive(t, credit.Micros(*got.USD))
	assert.Regexp(t, `^[0-9a-f]{32}$`, got.Nonce)

	again, err := f.s.Quote(t.Context(), toolkit.Caller{}, publishapp.PublishRequest{Spec: f.spec, Name: "The council"})
	require.NoError(t, err)
	assert.Equal(t, got.DepositYocto, again.Quote.DepositYocto, "the same record costs the same")
	assert.NotEqual(t, got.Nonce, again.Quote.Nonce)

	_, err = f.flowers.Draft(t.Context(), f.specSHA)
	assert.True(t, errs.Is(err, errs.NotFound), "a quote keeps no spec: %v", err)
	assert.Empty(t, f.prepared.kept)
}

// A quote's refusals: each is bad input (or not found) with nothing kept.
func TestAQuoteRefusesWhatCantBePublished(t *testing.T) {
	f := publishing(t)
	unknownSpec := strings.Repeat("0", 64)
	var invalid map[string]any
	require.NoError(t, json.Unmarshal(f.spec, &invalid))
	invalid["snapshot"] = strings.Repeat("0", 64)
	invalidSpec, err := json.Marshal(invalid)
	require.NoError(t, err)

	for _, c := range []struct {
		name string
		in   publishapp.PublishRequest
		code errs.Code
	}{
		{"both spec and its name", publishapp.PublishRequest{Spec: f.spec, SpecSHA256: f.specSHA}, errs.BadInput},
		{"neither", publishapp.PublishRequest{Spec: json.RawMessage(" null ")}, errs.BadInput},
		{"a spec name not kept", publishapp.PublishRequest{SpecSHA256: unknownSpec}, errs.NotFound},
		{"another network", publishapp.PublishRequest{Spec: f.spec, Network: "near:betanet"}, errs.BadInput},
		{"a name with a control character", publishapp.PublishRequest{Spec: f.spec, Name: "bad\u0007name"}, errs.BadInput},
		{"a name too long", publishapp.PublishRequest{Spec: f.spec, Name: strings.Repeat("n", published.MaxName+1)}, errs.BadInput},
		{"a spec of a snapshot not here", publishapp.PublishRequest{Spec: invalidSpec}, errs.InvalidSpec},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.s.Quote(t.Context(), toolkit.Caller{}, c.in)
			require.Error(t, err)
			var e *errs.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, c.code, e.Code, "%v", err)
		})
	}
	_, err = f.flowers.Draft(t.Context(), f.specSHA)
	assert.True(t, errs.Is(err, errs.NotFound), "no refusal kept the spec: %v", err)
	assert.Empty(t, f.prepared.kept)
}

// prepare_publish is for a signed-in person's wallet: anyone else, or a
// person with no wallet on the network asked, is unauthorised and nothing
// is prepared or kept.
func TestPrepareNeedsTheSignedInPersonsWalletOnThatNetwork(t *testing.T) {
	f := publishing(t)
	for _, c := range []struct {
		name   string
		caller toolkit.Caller
		net    string
	}{
		{"no session", toolkit.Caller{}, ""},
		{"an anonymous visitor", toolkit.Caller{Subject: "anon_00000000000000000000000000000001"}, ""},
		{"a person without wallets", toolkit.Caller{Subject: "prs_00000000000000000000000000000002"}, ""},
		{"alice on mainnet, where she has none", toolkit.Caller{Subject: alice}, "mainnet"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.s.Prepare(t.Context(), c.caller, publishapp.PublishRequest{Spec: f.spec, Network: c.net})
			assert.True(t, errs.Is(err, errs.Unauthorised), "%v", err)
		})
	}
	_, err := f.s.Prepare(t.Context(), toolkit.Caller{Subject: alice}, publishapp.PublishRequest{Spec: f.spec, Network: "near:nowhere"})
	assert.True(t, errs.Is(err, errs.BadInput), "%v", err)
	_, err = f.s.Prepare(t.Context(), toolkit.Caller{Subject: alice}, publishapp.PublishRequest{SpecSHA256: strings.Repeat("0", 64)})
	assert.True(t, errs.Is(err, errs.NotFound), "%v", err)

	assert.Empty(t, f.prepared.kept, "a refused prepare prepares nothing")
	_, err = f.flowers.Draft(t.Context(), f.specSHA)
	assert.True(t, errs.Is(err, errs.NotFound), "and keeps no spec: %v", err)
}

// A prepared record is the one the transaction writes, byte for byte, at
// <account>/petal/flower/<id> of the network's SocialDB, with the quote's
// deposit; it is kept for publish_flower to compare, and its spec is kept
// so the flower's view opens.
func TestPrepareWritesTheRecordItKeeps(t *testing.T) {
	f := publishing(t)
	p, err := f.s.Prepare(t.Context(), toolkit.Caller{Subject: alice}, publishapp.PublishRequest{Spec: f.spec, Name: "The council"})
	require.NoError(t, err)

	assert.Equal(t, "v1.social08.testnet", p.Transaction.ReceiverID)
	assert.Equal(t, "alice.testnet", p.Transaction.SignerID)
	require.Len(t, p.Transaction.Actions, 1)
	a := p.Transaction.Actions[0]
	assert.Equal(t, "set", a.MethodName)
	assert.Equal(t, p.Quote.DepositYocto, a.Deposit)
	var args struct {
		Data map[string]struct {
			Petal struct {
				Flower map[string]string `json:"flower"`
			} `json:"petal"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(a.Args, &args))
	assert.Equal(t, string(p.Flower), args.Data["alice.testnet"].Petal.Flower[p.ID], "the transaction writes the record answered")

	id, canonical, err := func() (string, []byte, error) {
		var rec published.Flower
		if err := json.Unmarshal(p.Flower, &rec); err != nil {
			return "", nil, err
		}
		assert.Equal(t, "alice.testnet", rec.MadeBy)
		assert.Equal(t, "The council", rec.Name)
		return rec.Canonical()
	}()
	require.NoError(t, err)
	assert.Equal(t, p.ID, id, "the id names the record")
	assert.Equal(t, string(canonical), string(p.Flower))

	require.Len(t, f.prepared.kept, 1)
	k := f.prepared.kept[0]
	assert.Equal(t, p.ID, k.ID)
	assert.Equal(t, "alice.testnet", k.Account)
	assert.Equal(t, "near:testnet", k.Network)
	assert.Equal(t, string(p.Flower), string(k.Record))
	assert.WithinDuration(t, memory.SystemClock{}.Now().Add(publishapp.PreparedFor), k.ExpiresAt, time.Minute)

	_, err = f.flowers.Draft(t.Context(), f.specSHA)
	assert.NoError(t, err, "the record's spec is kept")
}

// get_flower of an id that isn't one is not_found without a read.
func TestGetOfNoIDIsNotFound(t *testing.T) {
	f := publishing(t)
	_, err := f.s.Get(t.Context(), "../../etc")
	assert.True(t, errs.Is(err, errs.NotFound), "%v", err)
}
