package moneyapp

import (
	"context"
	"errors"
	"math/big"
	"time"

	"github.com/petal-near/petal/app/peopleapp"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// PayInput is POST /api/v1/pay's body.
type PayInput struct {
	Network   string `json:"network"`
	AccountID string `json:"account_id"`
	TxHash    string `json:"tx_hash"`
}

// PayBody is POST /api/v1/pay's answer.
type PayBody struct {
	AddedUSD  credit.USDNumber      `json:"added_usd"`
	AddedNEAR credit.NEARNumber     `json:"added_near"`
	NearUSD   credit.USDNumber      `json:"near_usd"`
	Price     PriceUsed             `json:"price"`
	Credit    *peopleapp.CreditView `json:"credit"`
}

// PriceUsed says which NEAR price a transfer was counted at: the reading
// (when, from where) nearest the transfer's block time.
type PriceUsed struct {
	At      time.Time `json:"at"`
	Source  string    `json:"source"`
	BlockAt time.Time `json:"block_at"`
}

// Pay counts a NEAR transfer from one of the person's wallets to Petal's
// receiver onto their credit, once per transaction hash. Refusals, as the
// contract lists them: unauthorised (not signed in, not their wallet),
// not_found (NEAR has no such transaction), bad_input (not a successful
// transfer to the receiver, or the wrong network), source_failed (the chain
// or the price at the transfer's block time could not be read; nothing
// changed).
func (s *PayService) Pay(ctx context.Context, sess people.Session, in PayInput) (PayBody, error) {
	if !sess.Signed() {
		return PayBody{}, errs.New(errs.Unauthorised, "sign in first", "sign in with your NEAR wallet: ask for a challenge, then verify it signed (NEP-413)")
	}
	if !people.ValidNetwork(in.Network) {
		return PayBody{}, errs.New(errs.BadInput, "network must be mainnet or testnet")
	}
	if in.Network == "testnet" && !s.cfg.TestnetCounts() {
		// Testnet NEAR is free; this site's model bills real dollars.
		return PayBody{}, errs.New(errs.BadInput, "this site counts mainnet NEAR only, not testnet: testnet NEAR is free and this site's model costs real dollars",
			"send NEAR on mainnet")
	}
	if !people.IsTxHash(in.TxHash) {
		return PayBody{}, errs.New(errs.BadInput, "tx_hash must be a NEAR transaction hash (base58)")
	}
	wallets, err := s.signIn.WalletsOf(ctx, sess.Subject)
	if err != nil {
		return PayBody{}, err
	}
	var wallet *people.Wallet
	for i, w := range wallets {
		if w.Network == in.Network && w.AccountID == in.AccountID {
			wallet = &wallets[i]
		}
	}
	if wallet == nil {
		return PayBody{}, errs.New(errs.Unauthorised, "account_id is not one of your wallets on "+in.Network, "sign in with that wallet first")
	}
	tx, err := s.near.Transaction(ctx, "near:"+in.Network, in.TxHash, in.AccountID)
	switch {
	case errs.Is(err, errs.NotFound):
		return PayBody{}, errs.New(errs.NotFound, "NEAR has no such transaction on "+in.Network, "check the hash and the network").WithCause(err)
	case errs.Is(err, errs.BadInput):
		return PayBody{}, errs.New(errs.BadInput, "NEAR refused to read that transaction", "check the hash, the account and the network").WithCause(err)
	case err != nil:
		return PayBody{}, errs.New(errs.SourceFailed, "NEAR's RPC could not be read, so nothing was counted", "send the same transaction again in a moment").WithCause(err)
	case !tx.Final:
		return PayBody{}, errs.New(errs.SourceFailed, "the transaction is not final yet, so nothing was counted", "send it again in a few seconds")
	}
	receiver := s.cfg.Receiver(in.Network)
	yocto, err := transferredTo(tx, in.AccountID, receiver)
	if err != nil {
		return PayBody{}, errs.New(errs.BadInput, err.Error(), "send a plain NEAR transfer to "+receiver)
	}
	// Priced at its block time, never when it is claimed: holding a hash
	// while NEAR rises gains nothing.
	quote, err := s.prices.At(ctx, tx.BlockAt)
	if err != nil {
		return PayBody{}, err
	}
	added, err := credit.YoctoToMicros(yocto, quote.USD)
	if err != nil {
		return PayBody{}, errs.New(errs.BadInput, "the amount is too large")
	}
	// Switch B: its own entry on the credit, beside the top-up's.
	counted, err := s.ledger.TopUp(ctx, credit.TopUp{TxHash: tx.Hash, Network: in.Network, PersonID: sess.Subject, WalletID: wallet.ID,
		Yocto: yocto.String(), NearUSD: quote.USD, Added: added, Fee: s.cfg.Price().TopUpFee(added),
		BlockAt: tx.BlockAt, PriceAt: quote.At, PriceSource: quote.Source})
	if err != nil {
		return PayBody{}, err
	}
	out := PayBody{AddedUSD: added.USD(), AddedNEAR: credit.NEARNumber{Yocto: yocto}, NearUSD: quote.USD.USD(),
		Price: PriceUsed{At: quote.At.UTC(), Source: quote.Source, BlockAt: tx.BlockAt.UTC()}}
	if !counted {
		out.AddedUSD, out.AddedNEAR = 0, credit.NEARNumber{}
	}
	if out.Credit, err = s.signIn.Credit(ctx, sess.Subject); err != nil {
		return PayBody{}, err
	}
	return out, nil
}

// transferredTo is the NEAR a successful transaction from sender sends
// receiver in its own Transfer actions. Receipts are never counted, so a gas
// refund (a receipt from "system") never adds credit.
func transferredTo(tx ports.NearTransaction, sender, receiver string) (*big.Int, error) {
	switch {
	case tx.SignerID != sender:
		return nil, errors.New("this transaction was not sent by account_id")
	case !tx.Succeeded:
		return nil, errors.New("this transaction did not succeed")
	case tx.ReceiverID != receiver:
		return nil, errors.New("this transaction does not send NEAR to " + receiver)
	case sender == receiver:
		return nil, errors.New("a transfer to itself adds nothing")
	}
	total := new(big.Int)
	for _, a := range tx.Actions {
		if a.Kind != "Transfer" {
			continue
		}
		y, err := credit.ParseYocto(a.Deposit)
		if err != nil {
			return nil, errors.New("this transaction's transfer could not be read")
		}
		total.Add(total, y)
	}
	if total.Sign() <= 0 {
		return nil, errors.New("this transaction is not a NEAR transfer to " + receiver)
	}
	return total, nil
}
