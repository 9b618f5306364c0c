package publishapp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/petal-near/petal/app/annotationsapp"
	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/internal/bytecache"
	"github.com/petal-near/petal/app/internal/hiddenmaps"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/app/viewsapp"
	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/domain/specs"
	"github.com/petal-near/petal/ports"
)

// The publishing tools' contract names.
const (
	ToolQuotePayment   = "quote_payment"
	ToolPreparePublish = "prepare_publish"
	ToolPublishFlower  = "publish_flower"
	ToolListFlowers    = "list_flowers"
	ToolGetFlower      = "get_flower"
)

// Publishing's numbers (docs/publishing.md).
const (
	// QuoteFor is how long a quote holds.
	QuoteFor = 10 * time.Minute
	// PreparedFor is how long a prepared record waits for its wallet.
	PreparedFor = 24 * time.Hour
	// PublishGas is the gas attached to the set: SocialDB's set of one small
	// value uses a fraction of it, and what is unused comes back.
	PublishGas = 100_000_000_000_000 // 100 Tgas
	// gasPriceCeiling is the most NEAR charges a unit of gas today (its
	// minimum gas price, 10^8 yocto): the gas line of a quote is at most
	// PublishGas at this price.
	gasPriceCeiling = 100_000_000
	// storageMargin is bytes deposited beyond the record and its key, for
	// SocialDB's own records of the new key: an estimate, since each key it
	// adds is several trie records (the key in its node's map and vectors,
	// about 40 bytes of NEAR's own per record), and a first flower also adds
	// the petal and flower nodes. What is not used stays the account's
	// storage balance in SocialDB.
	storageMargin = 1000
	// flowerSVGCacheBytes bounds the published flowers' pictures a process
	// keeps drawn.
	flowerSVGCacheBytes = 16 << 20
	// chainReadDeadline bounds reading a record back from SocialDB.
	chainReadDeadline = 20 * time.Second
	// placeholderAccount stands for the maker in a quote for someone not
	// signed in: the longest account id NEAR allows, so the quote is never
	// below what a signed-in person pays.
	placeholderAccount = "0000000000000000000000000000000000000000000000000000000000000000"
)

// yoctoPerByte is what NEAR charges for storing a byte: 10^19 yoctoNEAR.
var yoctoPerByte = new(big.Int).Exp(big.NewInt(10), big.NewInt(19), nil)

// PublishService is publishing flowers to NEAR and reading what was
// published: it prepares a SocialDB set for a person's own wallet, reads
// the record back from the chain and keeps it; the server holds no key.
type PublishService struct {
	flowers *flowersapp.FlowerService
	store   ports.PublishedFlowers
	// corrections are people's corrections of the flowers (correct.go).
	corrections ports.FlowerCorrections
	social      ports.SocialDB
	sessions    ports.SessionStore
	wallets     annotationsapp.WalletReader // nil where no door has sessions (stdio MCP): nobody is signed in
	near        ports.NearAccounts          // reads a transaction publish_flower is given by hash
	price       ports.NearPrice
	views       viewsapp.PersonViews
	clock       ports.Clock
	random      ports.Random
	log         *slog.Logger
	kept        ports.Counter
	refused     ports.Counter

	correctionsKept, correctionsRefused ports.Counter
	// svgs are published flowers' pictures by (id, view name): both name
	// content that never changes, so nothing expires.
	svgs      *bytecache.ByteCache[flowerSVGKey, flowersapp.Rendered]
	svgLookup ports.Counter
	// hidden are the maps in no list (app/hidden-maps.json): their flowers
	// still open by id, but list_flowers leaves them out.
	hidden []string
}

var _ toolkit.ToolSet = (*PublishService)(nil)

// NewPublishService makes the publishing service.
func NewPublishService(flowers *flowersapp.FlowerService, store ports.PublishedFlowers, corrections ports.FlowerCorrections, social ports.SocialDB, sessions ports.SessionStore,
	wallets annotationsapp.WalletReader, near ports.NearAccounts, price ports.NearPrice, views viewsapp.PersonViews, clock ports.Clock, random ports.Random, log *slog.Logger, m ports.Metrics) (*PublishService, error) {
	mm := ports.MetricsOrNone(m)
	hidden, err := hiddenmaps.Load()
	if err != nil {
		return nil, err
	}
	s := &PublishService{flowers: flowers, store: store, corrections: corrections, social: social, sessions: sessions, wallets: wallets, near: near, price: price,
		views: views, clock: clock, random: random, log: log,
		kept:    mm.Counter("petal_flowers_published_total", "Published flowers this site newly kept through publish_flower, by how they came (prepared here, or a record prepared elsewhere).", "came"),
		refused: mm.Counter("petal_publish_refused_total", "publish_flower calls refused, by reason: unauthorised, not_found (nothing under the key yet), invalid (not the record prepared, or not a valid flower), chain (SocialDB could not be read).", "reason"),
	}
	s.correctionsKept = mm.Counter("petal_corrections_kept_total", "Corrections of published flowers this site newly kept through submit_correction.", "came")
	s.correctionsRefused = mm.Counter("petal_corrections_refused_total", "submit_correction calls refused, by reason: unauthorised (not signed in, or not the signer's wallet), transaction (not a final, successful SocialDB set of a correction by that wallet), not_found (nothing under the key yet), invalid (not a valid correction of a flower kept here), chain (SocialDB could not be read).", "reason")
	s.svgs = bytecache.NewByteCache[flowerSVGKey](flowerSVGCacheBytes, flowerSVGCacheBytes/8, func(r flowersapp.Rendered) int { return len(r.SVG) + 256 })
	s.svgLookup = mm.Counter("petal_flower_svg_cache_lookups_total", "Lookups of published flowers' pictures in this process's cache, by result (hit, miss).", "result")
	for id := range hidden {
		s.hidden = append(s.hidden, id)
	}
	slices.Sort(s.hidden)
	return s, nil
}

// Transaction is what the person's wallet signs and sends: one SocialDB set.
type Transaction struct {
	ReceiverID string     `json:"receiver_id"`
	SignerID   string     `json:"signer_id"` // additive: the wallet that must sign it
	Actions    []TxAction `json:"actions"`
}

// TxAction is one FunctionCall action, as wallets take it.
type TxAction struct {
	Type       string          `json:"type"`
	MethodName string          `json:"method_name"`
	Args       json.RawMessage `json:"args"`
	Gas        string          `json:"gas"`
	Deposit    string          `json:"deposit"`
}

// PreparedAnswer is prepare_publish's answer.
type PreparedAnswer struct {
	Flower      json.RawMessage `json:"flower"`
	ID          string          `json:"id"`
	Transaction Transaction     `json:"transaction"`
	Quote       Quote           `json:"quote"`
}

// PublishRequest is a quote's or a prepare's input: a spec, inline or by
// name, a name, and the network.
type PublishRequest struct {
	Spec       json.RawMessage
	SpecSHA256 string
	Name       string
	Network    string
}

// publishNetwork reads a network as the tools take it (mainnet, testnet, or their
// CAIP-2 ids) into its CAIP-2 id and its short name.
func publishNetwork(network string) (chain, short string, err error) {
	short = strings.TrimPrefix(network, "near:")
	if !people.ValidNetwork(short) {
		return "", "", errs.Newf(errs.BadInput, "network must be mainnet or testnet, not %q", toolkit.CutForMessage(network))
	}
	return "near:" + short, short, nil
}

// record builds the flower/v1 a person would publish: the spec checked
// against its stored snapshot, the map and about from the snapshot.
func (s *PublishService) record(ctx context.Context, in PublishRequest, account string) (published.Flower, string, []byte, error) {
	raw := in.Spec
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		raw = nil
	}
	switch {
	case raw != nil && in.SpecSHA256 != "":
		return published.Flower{}, "", nil, errs.New(errs.BadInput, "give spec or spec_sha256, not both")
	case raw == nil && in.SpecSHA256 == "":
		return published.Flower{}, "", nil, errs.New(errs.BadInput, "spec or spec_sha256 is required", "send the flower-spec/v1 to publish, or the name of one kept here")
	case raw == nil:
		body, err := s.flowers.Draft(ctx, in.SpecSHA256)
		if errs.Is(err, errs.NotFound) {
			return published.Flower{}, "", nil, errs.Newf(errs.NotFound, "no spec %s is kept here", in.SpecSHA256).WithHint("send the spec itself as spec")
		}
		if err != nil {
			return published.Flower{}, "", nil, err
		}
		raw = body
	}
	if in.Name != "" {
		if why := published.PlainText(in.Name, published.MaxName); why != "" {
			return published.Flower{}, "", nil, errs.New(errs.BadInput, "name "+why)
		}
	}
	// Checked only: a quote stores nothing; prepare keeps the spec once the
	// record is made.
	c, problems, err := s.flowers.CheckSpec(ctx, raw)
	if err != nil {
		return published.Flower{}, "", nil, err
	}
	if len(problems) > 0 {
		return published.Flower{}, "", nil, flowersapp.InvalidSpec(problems)
	}
	if c.Demo {
		return published.Flower{}, "", nil, errs.New(errs.BadInput, "this flower draws the made-up demo reading, which can't be published",
			"read a real network with get_snapshot, then draw and publish that")
	}
	f := published.Flower{
		Schema: published.Schema, Spec: c.Spec, Snapshot: c.Spec.Snapshot, Name: in.Name,
		About: aboutOf(c.Snapshot), Map: published.MapOf(c.Snapshot.Chain, c.Snapshot.Params),
		MadeBy: account, MadeAt: s.clock.Now().UTC().Truncate(time.Second).Format(time.RFC3339),
	}
	if problems := published.Check(f); len(problems) > 0 && account != placeholderAccount {
		return published.Flower{}, "", nil, errs.New(errs.Internal, "the record petal made is not a valid flower").
			WithCause(fmt.Errorf("%s: %s", problems[0].Path, problems[0].Message))
	}
	id, canonical, err := f.Canonical()
	if err != nil {
		return published.Flower{}, "", nil, errs.New(errs.Internal, "the record could not be named").WithCause(err)
	}
	return f, id, canonical, nil
}

// aboutOf says what a reading read and where, in people's words: its
// reader's title (or the snapshot's own) and its chain, as plain text.
func aboutOf(snap *snapshots.Snapshot) string {
	title := snap.Title
	if r, ok := snapshotsapp.ReaderByID(snap.Network); ok {
		title = r.Title
	}
	where := snap.Chain
	switch snap.Chain {
	case snapshots.Mainnet:
		where = "NEAR"
	case snapshots.Testnet:
		where = "NEAR testnet"
	}
	about := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || (r >= 0x2028 && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return ' '
		}
		return r
	}, title+" on "+where)
	if r := []rune(about); len(r) > published.MaxAbout {
		about = string(r[:published.MaxAbout])
	}
	return about
}

// wallet is the signed-in caller's wallet to publish from: on network when
// it names one (the session's own wallet if it is there), else the
// session's. A caller who isn't signed in, or has no wallet there, is
// unauthorised.
func (s *PublishService) wallet(ctx context.Context, caller toolkit.Caller, network string) (people.Wallet, error) {
	if !people.IsPerson(caller.Subject) || s.wallets == nil {
		return people.Wallet{}, errs.New(errs.Unauthorised, "sign in with your NEAR wallet first", "sign in with your NEAR wallet: ask for a challenge, then verify it signed (NEP-413)")
	}
	wallets, err := s.wallets.WalletsOf(ctx, caller.Subject)
	if err != nil {
		return people.Wallet{}, err
	}
	sessionWallet := ""
	if caller.Session != "" {
		if sess, err := s.sessions.Session(ctx, caller.Session); err == nil {
			sessionWallet = sess.WalletID
		}
	}
	var pick *people.Wallet
	for i, w := range wallets {
		if network != "" && w.Network != network {
			continue
		}
		if pick == nil || w.ID == sessionWallet {
			pick = &wallets[i]
		}
	}
	if pick == nil && network == "" {
		return people.Wallet{}, errs.New(errs.Unauthorised, "you have no wallet here", "sign in with your NEAR wallet")
	}
	if pick == nil {
		return people.Wallet{}, errs.Newf(errs.Unauthorised, "you have no wallet on %s", network).WithHint("sign in with a wallet on that network")
	}
	return *pick, nil
}

// Prepare is prepare_publish: the record for the signed-in person's wallet,
// and the SocialDB set their wallet signs and sends. The record is kept
// until PreparedFor, so publish_flower can compare it byte for byte.
func (s *PublishService) Prepare(ctx context.Context, caller toolkit.Caller, in PublishRequest) (PreparedAnswer, error) {
	short := ""
	if in.Network != "" {
		_, sh, err := publishNetwork(in.Network)
		if err != nil {
			return PreparedAnswer{}, err
		}
		short = sh
	}
	w, err := s.wallet(ctx, caller, short)
	if err != nil {
		return PreparedAnswer{}, err
	}
	chain := "near:" + w.Network
	f, id, canonical, err := s.record(ctx, in, w.AccountID)
	if err != nil {
		return PreparedAnswer{}, err
	}
	// Its spec is kept, so the flower's view_url (/d/<spec>) opens it.
	if err := s.keepSpec(ctx, caller.Subject, f); err != nil {
		return PreparedAnswer{}, err
	}
	key := published.KeyPath(w.AccountID, id)
	q, err := s.quote(ctx, chain, key, canonical)
	if err != nil {
		return PreparedAnswer{}, err
	}
	// SocialDB's tree: { "<account>": { "petal": { "flower": { "<id>": "<record>" } } } }.
	args, err := canon.Marshal(map[string]any{"data": map[string]any{w.AccountID: map[string]any{"petal": map[string]any{"flower": map[string]string{id: string(canonical)}}}}})
	if err != nil {
		return PreparedAnswer{}, errs.New(errs.Internal, "the transaction could not be written").WithCause(err)
	}
	if err := s.store.Prepare(ctx, published.Prepared{ID: id, Account: w.AccountID, Network: chain, Record: canonical,
		ExpiresAt: s.clock.Now().Add(PreparedFor)}); err != nil {
		return PreparedAnswer{}, errs.New(errs.Internal, "the prepared record could not be kept").WithCause(err)
	}
	return PreparedAnswer{Flower: canonical, ID: id, Quote: q, Transaction: Transaction{
		ReceiverID: q.Receiver, SignerID: w.AccountID,
		Actions: []TxAction{{Type: "FunctionCall", MethodName: "set", Args: args, Gas: q.Gas, Deposit: q.DepositYocto}},
	}}, nil
}

// keepSpec keeps a record's spec by its name, as validate_spec does.
func (s *PublishService) keepSpec(ctx context.Context, owner string, f published.Flower) error {
	name, canonical, err := specs.Name(f.Spec)
	if err != nil {
		return errs.New(errs.Internal, "the spec could not be named").WithCause(err)
	}
	return s.flowers.KeepSpec(ctx, owner, name, f.Snapshot, canonical)
}
