package moneyapp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/peopleapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// USDCOnNEAR is the asset a top-up through NEAR Intents delivers: USDC on
// NEAR, whose smallest unit is a micro-dollar.
const USDCOnNEAR = "nep141:17208628f84f5d6ad33f0da3bbbeb27ffcb398eac501a31bd6ad2011e36133a1"

// Top-ups through NEAR Intents: how long a quote's deposit stays open, how
// often the follow job runs and how much one run does, and how often a
// person may ask.
const (
	IntentDepositWindow  = time.Hour
	FollowTopUpsEvery    = 30 * time.Second
	followTopUpsDeadline = time.Minute
	followTopUpsBatch    = 50
	TopUpsPerHour        = 30
	TopUpChecksPerMinute = 60
)

// TopUpService is paying with anything through NEAR Intents' 1Click: the
// tokens a person can pay from, a quote to pay into, and following the swap
// until it is credited, refunded or failed (docs/money.md).
type TopUpService struct {
	cfg     config.Config
	store   ports.IntentTopUps
	swaps   ports.Swaps
	signIn  *peopleapp.SignInService
	limiter ports.RateLimiter
	clock   ports.Clock
	log     *slog.Logger

	events   ports.Counter
	credited ports.Counter
}

// NewTopUpService makes the service.
func NewTopUpService(cfg config.Config, store ports.IntentTopUps, swaps ports.Swaps, signIn *peopleapp.SignInService, limiter ports.RateLimiter,
	clock ports.Clock, log *slog.Logger, m ports.Metrics) *TopUpService {
	m = ports.MetricsOrNone(m)
	return &TopUpService{cfg: cfg, store: store, swaps: swaps, signIn: signIn, limiter: limiter, clock: clock, log: log,
		events: m.Counter("petal_intent_topups_total", "Top-ups through NEAR Intents, by what happened: quoted, credited, refunded, failed.", "event"),
		credited: m.Counter("petal_intent_topups_credited_micros_total",
			"Micro-dollars top-ups through NEAR Intents added to people's credit (before switch B's fee).")}
}

// TokensBody is GET /api/v1/pay/tokens.
type TokensBody struct {
	Tokens []TokenView `json:"tokens"`
}

// TokenView is one token a person can pay from.
type TokenView struct {
	Asset    string      `json:"asset"`
	Chain    string      `json:"chain"`
	Symbol   string      `json:"symbol"`
	Decimals int         `json:"decimals"`
	USD      json.Number `json:"usd"` // 1Click's decimal text, as it wrote it
}

// Tokens is what a person can pay from, as 1Click lists it.
func (s *TopUpService) Tokens(ctx context.Context) (TokensBody, error) {
	list, err := s.swaps.SwapTokens(ctx)
	if err != nil {
		return TokensBody{}, err
	}
	out := TokensBody{Tokens: make([]TokenView, 0, len(list))}
	for _, t := range list {
		out.Tokens = append(out.Tokens, TokenView{Asset: t.Asset, Chain: t.Chain, Symbol: t.Symbol, Decimals: t.Decimals, USD: json.Number(t.USD)})
	}
	return out, nil
}

// TopUpInput is POST /api/v1/pay/intents' body.
type TopUpInput struct {
	USD         json.Number `json:"usd"`
	OriginAsset string      `json:"origin_asset"`
	RefundTo    string      `json:"refund_to"`
}

// TopUpBody is POST /api/v1/pay/intents' answer.
type TopUpBody struct {
	TopUp TopUpQuoteView `json:"top_up"`
}

// TopUpQuoteView is a new top-up: where to send what, by when.
type TopUpQuoteView struct {
	DepositAddress    string           `json:"deposit_address"`
	DepositMemo       *string          `json:"deposit_memo"`
	OriginAsset       string           `json:"origin_asset"`
	AmountIn          string           `json:"amount_in"`
	AmountInFormatted string           `json:"amount_in_formatted"`
	AmountInUSD       json.Number      `json:"amount_in_usd"`
	AmountOut         string           `json:"amount_out"`
	AmountOutUSD      json.Number      `json:"amount_out_usd"`
	Deadline          time.Time        `json:"deadline"`
	USD               credit.USDNumber `json:"usd"`
	Status            string           `json:"status"`
}

var refundToPattern = regexp.MustCompile(`^[\x21-\x7e]{1,128}$`)

// CreateTopUp asks 1Click for a quote of in.USD dollars of USDC delivered
// into NEAR Intents under the site's mainnet receiver, paid from
// in.OriginAsset, and keeps it. Refusals: unauthorised (not signed in),
// bad_input naming the field (an amount over $1,000, not more than $0 or
// past micro-dollars; a token 1Click doesn't list; a refund address that
// can't be one), rate_limited, source_failed (1Click can't quote it; nothing
// kept).
func (s *TopUpService) CreateTopUp(ctx context.Context, sess people.Session, in TopUpInput) (TopUpBody, error) {
	if !sess.Signed() {
		return TopUpBody{}, errs.New(errs.Unauthorised, "sign in first", "sign in with your NEAR wallet: ask for a challenge, then verify it signed (NEP-413)")
	}
	usd, err := credit.ParseUSD(string(in.USD))
	switch {
	case in.USD == "":
		return TopUpBody{}, errs.New(errs.BadInput, "usd is required: the dollars to add")
	case err != nil:
		return TopUpBody{}, errs.New(errs.BadInput, "usd must be a dollar amount with at most six decimal places")
	case usd <= 0:
		return TopUpBody{}, errs.New(errs.BadInput, "usd must be more than $0")
	case usd > credit.MaxIntentTopUp:
		return TopUpBody{}, errs.Newf(errs.BadInput, "usd must be at most $%s a top-up", trimDollars(credit.MaxIntentTopUp))
	case !refundToPattern.MatchString(in.RefundTo):
		return TopUpBody{}, errs.New(errs.BadInput, "refund_to must be an address on the origin asset's chain (1 to 128 printable characters)")
	case in.OriginAsset == "" || len(in.OriginAsset) > 256:
		return TopUpBody{}, errs.New(errs.BadInput, "origin_asset must be an asset from the tokens 1Click lists (pay tokens)")
	}
	if err := s.limit(ctx, "topups:"+sess.Subject, TopUpsPerHour, time.Hour, "top-ups an hour"); err != nil {
		return TopUpBody{}, err
	}
	tokens, err := s.swaps.SwapTokens(ctx)
	if err != nil {
		return TopUpBody{}, err
	}
	listed := false
	for _, t := range tokens {
		listed = listed || t.Asset == in.OriginAsset
	}
	if !listed {
		return TopUpBody{}, errs.New(errs.BadInput, "origin_asset is not a token 1Click lists", "pick one from the tokens 1Click lists (pay tokens)")
	}
	now := s.clock.Now()
	q, err := s.swaps.QuoteSwap(ctx, ports.SwapQuoteRequest{OriginAsset: in.OriginAsset, DestinationAsset: USDCOnNEAR,
		AmountOut: fmt.Sprint(int64(usd)), Recipient: s.cfg.Receiver("mainnet"), RefundTo: in.RefundTo, Deadline: now.Add(IntentDepositWindow)})
	if err != nil {
		if errs.Is(err, errs.SourceFailed) {
			return TopUpBody{}, err
		}
		return TopUpBody{}, errs.New(errs.SourceFailed, "NEAR Intents' 1Click could not quote this top-up", "try again in a moment").WithCause(err)
	}
	top := credit.IntentTopUp{DepositAddress: q.DepositAddress, DepositMemo: q.DepositMemo, PersonID: sess.Subject, USD: usd,
		OriginAsset: in.OriginAsset, RefundTo: in.RefundTo, AmountIn: q.AmountIn, AmountInFormatted: q.AmountInFormatted,
		AmountInUSD: q.AmountInUSD, AmountOut: q.AmountOut, AmountOutUSD: q.AmountOutUSD, Deadline: q.Deadline, Quote: q.Raw,
		Status: credit.SwapPendingDeposit, CreatedAt: now}
	if err := s.store.CreateIntentTopUp(ctx, top); err != nil {
		return TopUpBody{}, err
	}
	s.events.Add(1, "quoted")
	view := TopUpQuoteView{DepositAddress: top.DepositAddress, OriginAsset: top.OriginAsset, AmountIn: top.AmountIn,
		AmountInFormatted: top.AmountInFormatted, AmountInUSD: json.Number(top.AmountInUSD), AmountOut: top.AmountOut,
		AmountOutUSD: json.Number(top.AmountOutUSD), Deadline: top.Deadline.UTC(), USD: usd.USD(), Status: string(top.Status)}
	if top.DepositMemo != "" {
		view.DepositMemo = &top.DepositMemo
	}
	return TopUpBody{TopUp: view}, nil
}

// TopUpStatusBody is GET /api/v1/pay/intents/:deposit_address.
type TopUpStatusBody struct {
	TopUp  TopUpStatusView       `json:"top_up"`
	Credit *peopleapp.CreditView `json:"credit"`
}

// TopUpStatusView is where a top-up stands.
type TopUpStatusView struct {
	DepositAddress string           `json:"deposit_address"`
	Status         string           `json:"status"`
	CreditedUSD    credit.USDNumber `json:"credited_usd"`
	OriginTx       *string          `json:"origin_tx"`
	DestinationTx  *string          `json:"destination_tx"`
}

// CheckTopUp says where one of the person's top-ups stands, asking 1Click
// first while it isn't over (a SUCCESS is credited then, once). Anyone
// else's, or none: not_found. 1Click down: source_failed, nothing changed.
func (s *TopUpService) CheckTopUp(ctx context.Context, sess people.Session, depositAddress string) (TopUpStatusBody, error) {
	if !sess.Signed() {
		return TopUpStatusBody{}, errs.New(errs.Unauthorised, "sign in first", "sign in with your NEAR wallet: ask for a challenge, then verify it signed (NEP-413)")
	}
	if len(depositAddress) > 128 {
		return TopUpStatusBody{}, errs.Newf(errs.NotFound, "no top-up at %s", depositAddress[:128])
	}
	if err := s.limit(ctx, "topup-checks:"+sess.Subject, TopUpChecksPerMinute, time.Minute, "top-up checks a minute"); err != nil {
		return TopUpStatusBody{}, err
	}
	top, err := s.store.IntentTopUp(ctx, depositAddress)
	if err == nil && top.PersonID != sess.Subject {
		err = errs.Newf(errs.NotFound, "no top-up at %s", depositAddress) // the same answer as none at all
	}
	if err != nil {
		return TopUpStatusBody{}, err
	}
	if !top.Status.Final() {
		if top, err = s.follow(ctx, top); err != nil {
			return TopUpStatusBody{}, err
		}
	}
	out := TopUpStatusBody{TopUp: TopUpStatusView{DepositAddress: top.DepositAddress, Status: string(top.Status), CreditedUSD: top.Credited.USD(),
		OriginTx: orNull(top.OriginTx), DestinationTx: orNull(top.DestinationTx)}}
	if out.Credit, err = s.signIn.Credit(ctx, sess.Subject); err != nil {
		return TopUpStatusBody{}, err
	}
	return out, nil
}

// follow asks 1Click where top's swap stands and records it: a SUCCESS is
// credited once, at what it delivered, with switch B's fee when it is on.
func (s *TopUpService) follow(ctx context.Context, top credit.IntentTopUp) (credit.IntentTopUp, error) {
	obs, err := s.swaps.SwapStatus(ctx, top.DepositAddress, top.DepositMemo)
	if err != nil {
		return top, err
	}
	price := s.cfg.Price()
	got, credited, err := s.store.ObserveIntentTopUp(ctx, top.DepositAddress, obs, s.clock.Now(),
		func(t credit.IntentTopUp) (credit.Micros, credit.Micros, error) {
			added, fee, err := credit.IntentCredit(t, obs, price)
			if err != nil {
				return 0, 0, errs.New(errs.SourceFailed, "NEAR Intents' 1Click said SUCCESS without an amount petal can count",
					"ask again in a moment").WithCause(err)
			}
			return added, fee, nil
		})
	if err != nil {
		return top, err
	}
	switch {
	case credited:
		s.events.Add(1, "credited")
		s.credited.Add(float64(got.Credited))
		if s.log != nil {
			s.log.InfoContext(ctx, "a NEAR Intents top-up was credited", "deposit_address", got.DepositAddress, "credited", got.Credited.String(), "fee", got.Fee.String())
		}
	case !top.Status.Final() && got.Status == credit.SwapRefunded:
		s.events.Add(1, "refunded")
	case !top.Status.Final() && got.Status == credit.SwapFailed:
		s.events.Add(1, "failed")
	}
	return got, nil
}

// FollowOpen is the follow job's run: the top-ups still followed (not over,
// at most a day past their deadline), least recently checked first, each
// asked of 1Click and recorded, so a person who closed the page is still
// credited. A 1Click that doesn't answer leaves them for the next run.
func (s *TopUpService) FollowOpen(ctx context.Context) (int64, error) {
	open, err := s.store.FollowedIntentTopUps(ctx, s.clock.Now(), followTopUpsBatch)
	if err != nil {
		return 0, err
	}
	var n int64
	var failed error
	for _, top := range open {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		if _, err := s.follow(ctx, top); err != nil {
			failed = err // logged by the scheduler; the next run tries again
			continue
		}
		n++
	}
	return n, failed
}

// Job is the follow job, run on one replica at a time.
func (s *TopUpService) Job() jobsapp.Job {
	return jobsapp.Job{Name: "follow_top_ups", Every: FollowTopUpsEvery, Deadline: followTopUpsDeadline, Run: s.FollowOpen}
}

func (s *TopUpService) limit(ctx context.Context, key string, n int, per time.Duration, what string) error {
	if s.limiter == nil {
		return nil
	}
	ok, wait, err := s.limiter.Allow(ctx, key, n, per)
	if err != nil {
		return errs.New(errs.Internal, "the rate limiter failed").WithCause(err)
	}
	if !ok {
		return toolkit.RateLimited(fmt.Sprintf("more than %d %s", n, what), wait)
	}
	return nil
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func trimDollars(m credit.Micros) string {
	return strings.TrimRight(strings.TrimRight(m.String(), "0"), ".")
}
