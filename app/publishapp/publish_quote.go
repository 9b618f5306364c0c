package publishapp

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"time"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/published"
)

// Quote is quote_payment's answer, and the quote a prepare carries.
type Quote struct {
	Nonce        string            `json:"nonce"`
	ExpiresAt    time.Time         `json:"expires_at"`
	Network      string            `json:"network"`
	Receiver     string            `json:"receiver"`
	Bytes        int               `json:"bytes"`
	DepositYocto string            `json:"deposit_yocto"`
	DepositNEAR  credit.NEARNumber `json:"deposit_near"`
	Gas          string            `json:"gas"`
	// USD is the deposit and the most the gas can cost, in dollars at
	// NEAR's price now; null when the price can't be read.
	USD       *credit.USDNumber `json:"usd"`
	LineItems []LineItem        `json:"line_items"`
}

// LineItem is one part of a quote.
type LineItem struct {
	What  string `json:"what"`
	Yocto string `json:"yocto"`
}

// QuoteAnswer is { quote }.
type QuoteAnswer struct {
	Quote Quote `json:"quote"`
}

// quote prices writing a record of canonical bytes at key: the storage
// deposit for its bytes, its key and a margin, and the gas.
func (s *PublishService) quote(ctx context.Context, chain, key string, canonical []byte) (Quote, error) {
	receiver, _ := published.SocialDBContract(chain)
	var nonce [16]byte
	if _, err := s.random.Read(nonce[:]); err != nil {
		return Quote{}, errs.New(errs.Internal, "a nonce could not be made").WithCause(err)
	}
	lines := []struct {
		what  string
		bytes int
	}{
		{fmt.Sprintf("storage of the record: %d bytes at 10^19 yoctoNEAR a byte", len(canonical)), len(canonical)},
		{fmt.Sprintf("storage of its key %s: %d bytes", key, len(key)), len(key)},
		{fmt.Sprintf("storage of SocialDB's own records of the new key: up to %d bytes (what isn't used stays yours in SocialDB)", storageMargin), storageMargin},
	}
	q := Quote{Nonce: hex.EncodeToString(nonce[:]), ExpiresAt: s.clock.Now().UTC().Add(QuoteFor).Truncate(time.Second), Network: chain,
		Receiver: receiver, Gas: fmt.Sprint(PublishGas), LineItems: []LineItem{}}
	deposit := new(big.Int)
	for _, l := range lines {
		y := new(big.Int).Mul(big.NewInt(int64(l.bytes)), yoctoPerByte)
		deposit.Add(deposit, y)
		q.Bytes += l.bytes
		q.LineItems = append(q.LineItems, LineItem{What: l.what, Yocto: y.String()})
	}
	gas := new(big.Int).Mul(big.NewInt(PublishGas), big.NewInt(gasPriceCeiling))
	q.LineItems = append(q.LineItems, LineItem{What: "gas, at most: 100 Tgas at 10^8 yoctoNEAR a unit (what isn't burnt comes back)", Yocto: gas.String()})
	q.DepositYocto, q.DepositNEAR = deposit.String(), credit.NEARNumber{Yocto: deposit}
	usd, ok, err := s.price.NearUSD(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "quote: the NEAR price could not be read", "err", err)
	}
	if err == nil && ok {
		if m, err := credit.YoctoToMicros(new(big.Int).Add(deposit, gas), usd); err == nil {
			n := m.USD()
			q.USD = &n
		}
	}
	return q, nil
}

// Quote is quote_payment: what publishing a flower costs, asked dry.
// Nothing is kept or reserved; without a signed-in wallet the record is
// priced for the longest account id.
func (s *PublishService) Quote(ctx context.Context, caller toolkit.Caller, in PublishRequest) (QuoteAnswer, error) {
	account := placeholderAccount
	network := in.Network
	if people.IsPerson(caller.Subject) {
		short := ""
		if network != "" {
			_, sh, err := publishNetwork(network)
			if err != nil {
				return QuoteAnswer{}, err
			}
			short = sh
		}
		if w, err := s.wallet(ctx, caller, short); err == nil {
			account, network = w.AccountID, w.Network
		}
	}
	if network == "" {
		network = "mainnet"
	}
	chain, _, err := publishNetwork(network)
	if err != nil {
		return QuoteAnswer{}, err
	}
	_, id, canonical, err := s.record(ctx, in, account)
	if err != nil {
		return QuoteAnswer{}, err
	}
	q, err := s.quote(ctx, chain, published.KeyPath(account, id), canonical)
	return QuoteAnswer{Quote: q}, err
}
