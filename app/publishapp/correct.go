package publishapp

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/corrections"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/ports"
)

// The corrections tools' contract names (its Phase B).
const (
	ToolPrepareCorrection = "prepare_correction"
	ToolSubmitCorrection  = "submit_correction"
)

// CorrectionRequest is prepare_correction's input after the door: which
// flower, what kind of wrong, why and the evidence.
type CorrectionRequest struct {
	Flower   string
	Kind     string
	Reason   string
	Evidence corrections.Evidence
	Subject  string
}

// PreparedCorrection is prepare_correction's answer.
type PreparedCorrection struct {
	Correction  json.RawMessage `json:"correction"`
	ID          string          `json:"id"`
	Transaction Transaction     `json:"transaction"`
	Quote       Quote           `json:"quote"`
}

// Correction is a kept correction as the tools answer it: who said the
// flower is wrong, when, and what.
type Correction struct {
	Correction json.RawMessage      `json:"correction"` // the correction/v1 record as published
	ID         string               `json:"id"`
	Flower     string               `json:"flower"`
	Network    string               `json:"network"`
	Maker      string               `json:"maker"`
	Kind       string               `json:"kind"`
	Reason     string               `json:"reason"`
	Evidence   corrections.Evidence `json:"evidence"`
	Subject    *string              `json:"subject"`
	MadeAt     time.Time            `json:"made_at"`
	KeptAt     time.Time            `json:"kept_at"`
}

// correctionAnswer is a kept correction as the tools answer it. Its record
// was checked when it was kept, so it is only decoded here.
func correctionAnswer(k corrections.Kept) Correction {
	var c corrections.Correction
	_ = json.Unmarshal(k.Record, &c)
	out := Correction{Correction: json.RawMessage(k.Record), ID: k.ID, Flower: k.Flower, Network: k.Network, Maker: k.Maker,
		Kind: k.Kind, Reason: c.Reason, Evidence: c.Evidence, MadeAt: k.MadeAt, KeptAt: k.KeptAt}
	if out.Evidence.Links == nil {
		out.Evidence.Links = []string{}
	}
	if c.Subject != "" {
		out.Subject = &c.Subject
	}
	return out
}

// correctedFlower is the flower a correction names, kept here, and its
// network's short name. A correction is written on the network the flower
// is published on.
func (s *PublishService) correctedFlower(ctx context.Context, id string) (published.Kept, string, error) {
	if !published.ValidID(id) {
		return published.Kept{}, "", errs.New(errs.BadInput, "flower must be a published flower's id: 64 lower-case hex digits", "list_flowers names them")
	}
	f, err := s.store.Get(ctx, id)
	if errs.Is(err, errs.NotFound) {
		return published.Kept{}, "", errs.Newf(errs.NotFound, "no published flower %s is kept here", id).WithHint("list_flowers names the flowers kept here")
	}
	if err != nil {
		return published.Kept{}, "", err
	}
	_, short, err := publishNetwork(f.Network)
	return f, short, err
}

// PrepareCorrection is prepare_correction: the correction/v1 record for the
// signed-in person's wallet on the flower's network, and the SocialDB set
// their wallet signs and sends, with its quote. Nothing is kept: what
// submit_correction keeps is what SocialDB holds, checked then.
func (s *PublishService) PrepareCorrection(ctx context.Context, caller toolkit.Caller, in CorrectionRequest) (PreparedCorrection, error) {
	if !people.IsPerson(caller.Subject) || s.wallets == nil {
		return PreparedCorrection{}, errs.New(errs.Unauthorised, "sign in with your NEAR wallet first", "sign in with your NEAR wallet: ask for a challenge, then verify it signed (NEP-413)")
	}
	f, short, err := s.correctedFlower(ctx, in.Flower)
	if err != nil {
		return PreparedCorrection{}, err
	}
	w, err := s.wallet(ctx, caller, short)
	if err != nil {
		return PreparedCorrection{}, err
	}
	c := corrections.Correction{Schema: corrections.Schema, Flower: f.ID, Kind: in.Kind, Reason: in.Reason, Evidence: in.Evidence,
		Subject: in.Subject, MadeBy: w.AccountID, MadeAt: s.clock.Now().UTC().Truncate(time.Second).Format(time.RFC3339)}
	if c.Evidence.Links == nil {
		c.Evidence.Links = []string{}
	}
	if problems := corrections.Check(c); len(problems) > 0 {
		return PreparedCorrection{}, corrections.Invalid(problems)
	}
	id, canonical, err := c.Canonical()
	if err != nil {
		return PreparedCorrection{}, errs.New(errs.Internal, "the correction could not be named").WithCause(err)
	}
	chain := f.Network
	q, err := s.quote(ctx, chain, corrections.KeyPath(w.AccountID, id), canonical)
	if err != nil {
		return PreparedCorrection{}, err
	}
	// SocialDB's tree: { "<account>": { "petal": { "correction": { "<id>": "<record>" } } } }.
	args, err := canon.Marshal(map[string]any{"data": map[string]any{w.AccountID: map[string]any{"petal": map[string]any{"correction": map[string]string{id: string(canonical)}}}}})
	if err != nil {
		return PreparedCorrection{}, errs.New(errs.Internal, "the transaction could not be written").WithCause(err)
	}
	return PreparedCorrection{Correction: canonical, ID: id, Quote: q, Transaction: Transaction{
		ReceiverID: q.Receiver, SignerID: w.AccountID,
		Actions: []TxAction{{Type: "FunctionCall", MethodName: "set", Args: args, Gas: q.Gas, Deposit: q.DepositYocto}},
	}}, nil
}

// SubmitInput is submit_correction's input after the door.
type SubmitInput struct {
	Network   string
	TxHash    string
	AccountID string
	ID        string
}

// SubmitCorrection is submit_correction: by the hash of the transaction the
// person's wallet sent (or by account and id), the correction is read back
// from SocialDB at finality final under the signer's account, checked (a
// valid correction/v1 under its own id, made by that account, of a flower
// kept here on that network) and kept. The signer must be one of the
// signed-in person's wallets: nobody submits another's correction. The same
// id again is the same answer. A refusal changes nothing.
func (s *PublishService) SubmitCorrection(ctx context.Context, caller toolkit.Caller, in SubmitInput) (Correction, error) {
	chain, short, err := publishNetwork(in.Network)
	if err != nil {
		return Correction{}, err
	}
	if !people.IsPerson(caller.Subject) || s.wallets == nil {
		s.correctionsRefused.Add(1, "unauthorised")
		return Correction{}, errs.New(errs.Unauthorised, "sign in with your NEAR wallet first", "sign in with your NEAR wallet: ask for a challenge, then verify it signed (NEP-413)")
	}
	if in.TxHash == "" && (in.AccountID == "" || in.ID == "") {
		return Correction{}, errs.New(errs.BadInput, "send tx_hash, or account_id and id", "the hash of the transaction your wallet sent names the correction")
	}
	if in.TxHash != "" && !people.IsTxHash(in.TxHash) {
		return Correction{}, errs.New(errs.BadInput, "tx_hash must be a NEAR transaction hash (base58)")
	}
	if in.ID != "" && !published.ValidID(in.ID) {
		return Correction{}, errs.New(errs.BadInput, "id must be a correction's id: 64 lower-case hex digits", "or send the transaction's tx_hash")
	}
	account := in.AccountID
	if account == "" {
		w, err := s.wallet(ctx, caller, short)
		if err != nil {
			s.correctionsRefused.Add(1, "unauthorised")
			return Correction{}, err
		}
		account = w.AccountID
	}
	wallets, err := s.wallets.WalletsOf(ctx, caller.Subject)
	if err != nil {
		return Correction{}, err
	}
	if !slices.ContainsFunc(wallets, func(w people.Wallet) bool { return w.Network == short && w.AccountID == account }) {
		s.correctionsRefused.Add(1, "unauthorised")
		return Correction{}, errs.Newf(errs.Unauthorised, "%s is not one of your wallets on %s: a correction is submitted by the wallet that signed it", toolkit.CutForMessage(account), short).
			WithHint("sign in with that wallet first")
	}
	if in.TxHash != "" {
		tx, err := s.finalSet(ctx, chain, short, in.TxHash, account)
		if err != nil {
			s.correctionsRefused.Add(1, "transaction")
			return Correction{}, err
		}
		ids := idsWritten(tx, account, "correction", published.ValidID)
		switch {
		case in.ID != "" && !slices.Contains(ids, in.ID):
			return Correction{}, errs.Newf(errs.BadInput, "the transaction did not write the correction %s", in.ID)
		case in.ID != "":
		case len(ids) == 1:
			in.ID = ids[0]
		case len(ids) == 0:
			s.correctionsRefused.Add(1, "transaction")
			return Correction{}, errs.New(errs.BadInput, "the transaction wrote no correction", "send the transaction prepare_correction answered")
		default:
			return Correction{}, errs.Newf(errs.BadInput, "the transaction wrote %d corrections: say which with id", len(ids))
		}
	}
	if k, err := s.corrections.Get(ctx, in.ID); err == nil {
		if k.Maker != account {
			return Correction{}, errs.Newf(errs.BadInput, "the correction %s is %s's, not %s's", in.ID, k.Maker, account)
		}
		return correctionAnswer(k), nil
	} else if !errs.Is(err, errs.NotFound) {
		return Correction{}, err
	}

	key := corrections.KeyPath(account, in.ID)
	rctx, cancel := context.WithTimeout(ctx, chainReadDeadline)
	values, err := s.social.Get(rctx, chain, []string{key}, corrections.MaxRecordBytes+4096)
	cancel()
	switch {
	case errs.Is(err, errs.CannotRead):
		s.correctionsRefused.Add(1, "invalid")
		return Correction{}, corrections.Invalid([]errs.Problem{{Message: "what is under " + key + " can't be read as a record"}})
	case err != nil:
		s.correctionsRefused.Add(1, "chain")
		return Correction{}, errs.New(errs.SourceFailed, "SocialDB could not be read, so nothing was kept here", "send the same request again in a moment").WithCause(err)
	}
	i := slices.IndexFunc(values, func(v ports.SocialValue) bool { return v.Path == key })
	if i < 0 {
		s.correctionsRefused.Add(1, "not_found")
		return Correction{}, errs.Newf(errs.NotFound, "SocialDB has nothing at %s yet", key).
			WithHint("the wallet may not have sent the transaction, or it isn't final yet: send it from your wallet, then submit again in a few seconds")
	}
	k, kept, err := s.takeCorrection(ctx, chain, account, in.ID, []byte(values[i].Value), corrections.CameSubmitted)
	if err != nil {
		s.correctionsRefused.Add(1, "invalid")
		return Correction{}, err
	}
	if kept {
		s.correctionsKept.Add(1, corrections.CameSubmitted)
		s.log.InfoContext(ctx, "correction kept", "id", k.ID, "flower", k.Flower, "network", chain, "kind", k.Kind)
	}
	return correctionAnswer(k), nil
}

// takeCorrection checks a record read from SocialDB at
// <account>/petal/correction/<id> on network and keeps it: a valid
// correction/v1 whose id is its key, made by that account, of a flower kept
// here and published on that network. An error is the refusal, and nothing
// is kept.
func (s *PublishService) takeCorrection(ctx context.Context, network, account, id string, value []byte, came string) (corrections.Kept, bool, error) {
	c, refused := corrections.Read(account, id, value)
	if refused != nil {
		return corrections.Kept{}, false, refused
	}
	f, err := s.store.Get(ctx, c.Flower)
	switch {
	case errs.Is(err, errs.NotFound):
		return corrections.Kept{}, false, errs.Newf(errs.NotFound, "the correction names the flower %s, which isn't kept here", c.Flower)
	case err != nil:
		return corrections.Kept{}, false, err
	}
	keeping, refused := corrections.Keeping(c, id, network, f.Network, value, came)
	if refused != nil {
		return corrections.Kept{}, false, refused
	}
	k, kept, err := s.corrections.Keep(ctx, keeping)
	if err != nil && !errs.Is(err, errs.NotFound) {
		return corrections.Kept{}, false, errs.New(errs.Internal, "the correction could not be kept").WithCause(err)
	}
	return k, kept, err
}

// FlowerAnswer is get_flower's answer: the published flower, and the
// newest of the corrections people published of it (at most
// corrections.MaxShown, newest first) with how many there are. A
// correction never changes the flower: it is shown beside it.
type FlowerAnswer struct {
	PublishedFlower
	Corrections      []Correction `json:"corrections"`
	CorrectionsCount int          `json:"corrections_count"`
}

// GetWithCorrections is get_flower: the flower and its corrections.
func (s *PublishService) GetWithCorrections(ctx context.Context, id string) (FlowerAnswer, error) {
	f, err := s.Get(ctx, id)
	if err != nil {
		return FlowerAnswer{}, err
	}
	out := FlowerAnswer{PublishedFlower: f, Corrections: []Correction{}}
	shown, err := s.corrections.OfFlowers(ctx, []string{id}, corrections.MaxShown)
	if err != nil {
		return FlowerAnswer{}, err
	}
	for _, k := range shown[id] {
		out.Corrections = append(out.Corrections, correctionAnswer(k))
	}
	if out.CorrectionsCount = len(out.Corrections); out.CorrectionsCount == corrections.MaxShown {
		if out.CorrectionsCount, err = s.corrections.Count(ctx, id); err != nil {
			return FlowerAnswer{}, err
		}
	}
	return out, nil
}

// FlowerCorrections is one flower of a map and its newest corrections;
// More says it has more than those (get_flower lists 20).
type FlowerCorrections struct {
	Flower      PublishedFlower
	Corrections []Correction
	More        bool
}

// Bounds of a map page's corrections: its newest flowers, and the newest
// corrections of each.
const (
	mapPageFlowers     = published.MaxPage
	mapPageCorrections = 5
)

// MapCorrections are the corrections of a map's newest flowers, for its
// page: each flower that has any, newest flower first.
func (s *PublishService) MapCorrections(ctx context.Context, mapID string) ([]FlowerCorrections, error) {
	page, err := s.store.List(ctx, ports.FlowerQuery{Map: mapID, Limit: mapPageFlowers})
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(page.Flowers))
	for _, f := range page.Flowers {
		ids = append(ids, f.ID)
	}
	// One more than is shown says whether there are more, without counting.
	shown, err := s.corrections.OfFlowers(ctx, ids, mapPageCorrections+1)
	if err != nil {
		return nil, err
	}
	var out []FlowerCorrections
	for _, f := range page.Flowers {
		list := shown[f.ID]
		if len(list) == 0 {
			continue
		}
		fc := FlowerCorrections{Flower: publishedAnswer(f), More: len(list) > mapPageCorrections}
		for _, k := range list[:min(len(list), mapPageCorrections)] {
			fc.Corrections = append(fc.Corrections, correctionAnswer(k))
		}
		out = append(out, fc)
	}
	return out, nil
}
