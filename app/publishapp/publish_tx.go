package publishapp

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/ports"
)

// flowerOfTransaction is publish_flower's { network, tx_hash }: the flower
// the person's transaction wrote, read from its final outcome. It names the
// id only: what is kept is still what SocialDB holds at that key. account
// is the wallet that sent it (account_id, else the person's wallet on the
// network); id, when given too, must be one the transaction wrote.
func (s *PublishService) flowerOfTransaction(ctx context.Context, caller toolkit.Caller, chain, short string, in PublishInput) (id, account string, err error) {
	if !people.IsTxHash(in.TxHash) {
		return "", "", errs.New(errs.BadInput, "tx_hash must be a NEAR transaction hash (base58)")
	}
	account = in.AccountID
	if account == "" {
		w, err := s.wallet(ctx, caller, short)
		if err != nil {
			return "", "", err
		}
		account = w.AccountID
	}
	tx, err := s.finalSet(ctx, chain, short, in.TxHash, account)
	if err != nil {
		return "", "", err
	}
	ids := idsWritten(tx, account, "flower", published.ValidID)
	switch {
	case in.ID != "" && !slices.Contains(ids, in.ID):
		return "", "", errs.Newf(errs.BadInput, "the transaction did not write the flower %s", in.ID)
	case in.ID != "":
		return in.ID, account, nil
	case len(ids) == 1:
		return ids[0], account, nil
	case len(ids) == 0:
		return "", "", errs.New(errs.BadInput, "the transaction wrote no flower", "publish the transaction prepare_publish answered")
	}
	return "", "", errs.Newf(errs.BadInput, "the transaction wrote %d flowers: say which with id", len(ids))
}

// idsWritten are the ids a transaction's SocialDB sets write under
// <account>/petal/<node>/, sorted: the keys valid says are ids.
func idsWritten(tx ports.NearTransaction, account, node string, valid func(string) bool) []string {
	var ids []string
	for _, a := range tx.Actions {
		if a.Kind != "FunctionCall" || a.Method != "set" {
			continue
		}
		var args struct {
			Data map[string]struct {
				Petal map[string]json.RawMessage `json:"petal"`
			} `json:"data"`
		}
		var written map[string]json.RawMessage
		if json.Unmarshal(a.Args, &args) != nil || json.Unmarshal(args.Data[account].Petal[node], &written) != nil {
			continue
		}
		for key := range written {
			if valid(key) && !slices.Contains(ids, key) {
				ids = append(ids, key)
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// finalSet is the FINAL outcome of the transaction hash account sent: it
// must have succeeded, been signed by account and sent to the network's
// SocialDB.
func (s *PublishService) finalSet(ctx context.Context, chain, short, hash, account string) (ports.NearTransaction, error) {
	if s.near == nil {
		return ports.NearTransaction{}, errs.New(errs.SourceFailed, "NEAR's transactions can't be read here", "send { network, account_id, id }")
	}
	rctx, cancel := context.WithTimeout(ctx, chainReadDeadline)
	defer cancel()
	tx, err := s.near.Transaction(rctx, chain, hash, account)
	switch {
	case errs.Is(err, errs.NotFound):
		return ports.NearTransaction{}, errs.Newf(errs.NotFound, "NEAR has no transaction %s from %s on %s", hash, account, short).
			WithHint("the wallet may not have sent it yet: check the hash, or publish again in a few seconds")
	case errs.Is(err, errs.BadInput):
		return ports.NearTransaction{}, errs.New(errs.BadInput, "NEAR refused to read that transaction", "check the hash, the account and the network").WithCause(err)
	case err != nil:
		return ports.NearTransaction{}, errs.New(errs.SourceFailed, "NEAR's RPC could not be read, so nothing was published here", "send the same request again in a moment").WithCause(err)
	case !tx.Final:
		return ports.NearTransaction{}, errs.New(errs.SourceFailed, "the transaction is not final yet, so nothing was published here", "send it again in a few seconds")
	case !tx.Succeeded:
		return ports.NearTransaction{}, errs.New(errs.BadInput, "the transaction failed on chain, so it wrote nothing", "prepare it again and send it from your wallet")
	}
	receiver, _ := published.SocialDBContract(chain)
	if tx.SignerID != account || tx.ReceiverID != receiver {
		return ports.NearTransaction{}, errs.Newf(errs.BadInput, "the transaction is not a SocialDB set sent by %s to %s", account, receiver)
	}
	return tx, nil
}
