package moneyapp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/peopleapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// PayService is the person's money: the price, their tip, their usage, and
// adding credit with a NEAR transfer.
type PayService struct {
	cfg     config.Config
	ledger  ports.LedgerStore
	people  ports.PeopleStore
	signIn  *peopleapp.SignInService
	near    ports.NearAccounts
	price   ports.NearPrice
	billing ports.ModelBilling // nil when the model provider sends no bills (the recorded model)
	models  ports.ModelPrices  // nil when the model provider prices nothing (the recorded model)
	prices  *NearPrices
	claims  ports.BillingClaims
	limiter ports.RateLimiter
	log     *slog.Logger
	// asking makes concurrent usage requests of one person in this process
	// wait for one ask for their bills (other replicas are kept out by claims).
	asking singleflight.Group
}

// NewPayService makes the pay service.
func NewPayService(cfg config.Config, ledger ports.LedgerStore, people ports.PeopleStore, signIn *peopleapp.SignInService, near ports.NearAccounts,
	price ports.NearPrice, prices *NearPrices, billing ports.ModelBilling, models ports.ModelPrices, claims ports.BillingClaims, limiter ports.RateLimiter, log *slog.Logger) *PayService {
	return &PayService{cfg: cfg, ledger: ledger, people: people, signIn: signIn, near: near, price: price, prices: prices, billing: billing,
		models: models, claims: claims, limiter: limiter, log: log}
}

// UsageCallsPerMinute bounds GET /api/v1/me/usage per person: each reads the
// ledger, and may ask NEAR AI for bills.
const UsageCallsPerMinute = 30

// BillingAskEvery is how often, at most, GET /api/v1/me/usage asks NEAR AI
// for one person's bills, whatever the replica.
const BillingAskEvery = time.Minute

// pendingBatch bounds how many calls one reconciliation asks NEAR AI about.
const pendingBatch = 100

// ReconcilePending asks the model provider for the bills of a person's calls
// that have none yet and charges the person the bill: each difference from
// the list price goes back, or is charged, as its own entry. A provider that
// does not answer leaves them for next time. GET /api/v1/me/usage does it
// first, and so does every chat paid from the person's credit before its first
// model call.
func (s *PayService) ReconcilePending(ctx context.Context, personID string) error {
	if s.billing == nil {
		return nil
	}
	pending, err := s.ledger.PendingBills(ctx, credit.PersonAccount(personID), pendingBatch)
	if err != nil || len(pending) == 0 {
		return err
	}
	ids := make([]string, 0, len(pending))
	for _, r := range pending {
		ids = append(ids, r.InferenceID)
	}
	bills, err := s.billing.Billed(ctx, ids)
	if err != nil {
		if s.log != nil {
			s.log.WarnContext(ctx, "reading NEAR AI's bills", "err", err)
		}
		return nil
	}
	for _, r := range pending {
		if b, ok := bills[r.InferenceID]; ok {
			if err := s.ledger.Reconcile(ctx, r.ReservationID, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReconcileSpaced is ReconcilePending at most once every BillingAskEvery
// per person, one at a time (within reconcileTimeout): the usage route's
// and each chat's, sharing one turn.
func (s *PayService) ReconcileSpaced(ctx context.Context, personID string) error {
	if s.billing == nil {
		return nil
	}
	_, err, _ := s.asking.Do(personID, func() (any, error) {
		// Not cut by the first asker leaving: the others wait on it.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reconcileTimeout)
		defer cancel()
		pending, err := s.ledger.PendingBills(ctx, credit.PersonAccount(personID), 1)
		if err != nil || len(pending) == 0 {
			return nil, err // nothing to ask about: no turn taken
		}
		if s.claims != nil {
			claimed, err := s.claims.ClaimBilling(ctx, personID, BillingAskEvery)
			if err != nil || !claimed {
				return nil, err
			}
		}
		return nil, s.ReconcilePending(ctx, personID)
	})
	return err
}

// PriceBody is GET /api/v1/price: the price and the SHA-256 of its
// canonical JSON, and the models' list prices the bill is counted at, each
// with where it came from and when (NEAR AI's model list, or the table
// petal ships when the list can't be read).
type PriceBody struct {
	Price  credit.PriceDoc  `json:"price"`
	Hash   string           `json:"hash"`
	Models []ModelPriceView `json:"models"`
}

// ModelPriceView is one model's list prices, in dollars per million tokens.
type ModelPriceView struct {
	Model            string           `json:"model"`
	USDPerMTokIn     credit.USDNumber `json:"usd_per_mtok_in"`
	USDPerMTokCached credit.USDNumber `json:"usd_per_mtok_cached"`
	USDPerMTokOut    credit.USDNumber `json:"usd_per_mtok_out"`
	Source           string           `json:"source"`
	ReadAt           *time.Time       `json:"read_at"`
}

// Price is what a person pays, to anyone.
func (s *PayService) Price() (PriceBody, error) {
	doc := s.cfg.Price().Doc()
	raw, err := json.Marshal(doc)
	if err != nil {
		return PriceBody{}, err
	}
	c, err := canon.Transform(raw)
	if err != nil {
		return PriceBody{}, err
	}
	out := PriceBody{Price: doc, Hash: canon.Sum(c), Models: []ModelPriceView{}}
	if s.models != nil {
		for _, m := range s.models.ModelPrices() {
			out.Models = append(out.Models, ModelPriceView{Model: m.Model, USDPerMTokIn: m.InputPerMTok.USD(), USDPerMTokCached: m.CachedPerMTok.USD(),
				USDPerMTokOut: m.OutputPerMTok.USD(), Source: m.Source, ReadAt: m.ReadAt})
		}
	}
	return out, nil
}

// TipBody is GET/PUT /api/v1/me/tip.
type TipBody struct {
	TipPercent  int `json:"tip_percent"`
	MinPercent  int `json:"min_percent"`
	MaxPercent  int `json:"max_percent"`
	StepPercent int `json:"step_percent"`
}

// Tip is a person's tip, 0 until they set one.
func (s *PayService) Tip(ctx context.Context, personID string) (TipBody, error) {
	p, err := s.people.TipPercent(ctx, personID)
	if err != nil {
		return TipBody{}, err
	}
	out := TipBody{MinPercent: credit.TipMinPercent, MaxPercent: credit.TipMaxPercent, StepPercent: credit.TipStepPercent}
	if p != nil {
		out.TipPercent = *p
	}
	return out, nil
}

// TipInput is PUT /api/v1/me/tip's body: a percent, or null to put it back.
type TipInput struct {
	TipPercent json.RawMessage `json:"tip_percent"`
}

// SetTip sets a person's tip; off the scale is bad_input and changes nothing.
func (s *PayService) SetTip(ctx context.Context, personID string, in TipInput) (TipBody, error) {
	var p *int
	raw := strings.TrimSpace(string(in.TipPercent))
	if raw == "" {
		return TipBody{}, errs.New(errs.BadInput, "tip_percent is required (a number, or null to put it back)")
	}
	if raw != "null" {
		n, err := strconv.Atoi(raw)
		if err != nil || !credit.ValidTip(n) {
			return TipBody{}, errs.Newf(errs.BadInput, "tip_percent must be a whole number from %d to %d in steps of %d, or null",
				credit.TipMinPercent, credit.TipMaxPercent, credit.TipStepPercent)
		}
		p = &n
	}
	if err := s.people.SetTipPercent(ctx, personID, p); err != nil {
		return TipBody{}, err
	}
	return s.Tip(ctx, personID)
}

// UsageBody is GET /api/v1/me/usage.
type UsageBody struct {
	Usage  []credit.UsageView `json:"usage"`
	Totals UsageTotals        `json:"totals"`
}

// UsageTotals sums the records shown.
type UsageTotals struct {
	Calls      int              `json:"calls"`
	ChargedUSD credit.USDNumber `json:"charged_usd"`
	Reconciled int              `json:"reconciled"` // calls whose bill is known
	BilledUSD  credit.USDNumber `json:"billed_usd"`
}

// usageLimit bounds one answer.
const usageLimit = 1000

// Usage is every model call charged to the person's credit, newest first,
// after asking NEAR AI for the bills it hasn't got yet: at most once every
// BillingAskEvery per person, and one ask at a time however many ask (in
// this process they wait for it; on other replicas they answer with what is
// known). The route takes UsageCallsPerMinute a minute per person.
func (s *PayService) Usage(ctx context.Context, personID string) (UsageBody, error) {
	if s.limiter != nil {
		ok, wait, err := s.limiter.Allow(ctx, "usage:"+personID, UsageCallsPerMinute, time.Minute)
		if err != nil {
			return UsageBody{}, errs.New(errs.Internal, "the rate limiter failed").WithCause(err)
		}
		if !ok {
			return UsageBody{}, toolkit.RateLimited(fmt.Sprintf("more than %d usage reads a minute", UsageCallsPerMinute), wait)
		}
	}
	if err := s.ReconcileSpaced(ctx, personID); err != nil {
		return UsageBody{}, err
	}
	recs, err := s.ledger.Usage(ctx, credit.PersonAccount(personID), usageLimit)
	if err != nil {
		return UsageBody{}, err
	}
	out := UsageBody{Usage: []credit.UsageView{}}
	var charged, billed credit.Micros
	for _, r := range recs {
		out.Usage = append(out.Usage, r.View())
		charged += r.Charged
		if r.Billed != nil {
			billed += *r.Billed
			out.Totals.Reconciled++
		}
	}
	out.Totals.Calls = len(recs)
	out.Totals.ChargedUSD, out.Totals.BilledUSD = charged.USD(), billed.USD()
	return out, nil
}

// PayInfoBody is GET /api/v1/pay.
type PayInfoBody struct {
	Network  string            `json:"network"`
	Receiver string            `json:"receiver"`
	NearUSD  *credit.USDNumber `json:"near_usd"`
}

// payNetwork is the network a session pays on: the one it signed in on,
// mainnet for anyone else (and always where testnet doesn't count).
func (s *PayService) payNetwork(ctx context.Context, sess people.Session) string {
	if !s.cfg.TestnetCounts() || !sess.Signed() || sess.WalletID == "" {
		return "mainnet"
	}
	ws, err := s.signIn.WalletsOf(ctx, sess.Subject)
	if err != nil {
		return "mainnet"
	}
	for _, w := range ws {
		if w.ID == sess.WalletID {
			return w.Network
		}
	}
	return "mainnet"
}

// Info says where to send NEAR and at what price.
func (s *PayService) Info(ctx context.Context, sess people.Session) (PayInfoBody, error) {
	network := s.payNetwork(ctx, sess)
	out := PayInfoBody{Network: network, Receiver: s.cfg.Receiver(network)}
	if p, ok, err := s.price.NearUSD(ctx); err == nil && ok {
		v := p.USD()
		out.NearUSD = &v
	}
	return out, nil
}

// reconcileTimeout bounds how long a chat waits on NEAR AI's bills.
const reconcileTimeout = 10 * time.Second
