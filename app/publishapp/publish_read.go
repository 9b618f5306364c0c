package publishapp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/specs"
	"github.com/petal-near/petal/ports"
)

// PublishedFlower is a published flower as the tools answer it: the record
// as published, its id, where and by whom, and where it opens and is drawn.
type PublishedFlower struct {
	Flower      json.RawMessage `json:"flower"`
	ID          string          `json:"id"`
	Network     string          `json:"network"`
	Maker       string          `json:"maker"`
	Map         string          `json:"map"`
	Snapshot    string          `json:"snapshot"`
	Name        *string         `json:"name"`
	MadeAt      time.Time       `json:"made_at"`
	PublishedAt time.Time       `json:"published_at"`
	Status      string          `json:"status"`
	ViewURL     string          `json:"view_url"`
	// Picture is the flower's SVG through the default view; null while its
	// snapshot isn't stored here.
	Picture *string `json:"picture"`
}

// FlowerList is list_flowers' answer.
type FlowerList struct {
	Flowers    []PublishedFlower `json:"flowers"`
	NextCursor *string           `json:"next_cursor"`
}

// publishedAnswer is a kept flower as the tools answer it.
func publishedAnswer(k published.Kept) PublishedFlower {
	out := PublishedFlower{Flower: json.RawMessage(k.Record), ID: k.ID, Network: k.Network, Maker: k.Maker, Map: k.Map,
		Snapshot: k.Snapshot, MadeAt: k.MadeAt, PublishedAt: k.PublishedAt, Status: k.Status}
	if k.Name != "" {
		out.Name = &k.Name
	}
	if sha, err := published.SpecName(k.Record); err == nil {
		out.ViewURL = "/d/" + sha
	}
	if k.Status == published.StatusOK {
		p := "/api/v1/flowers/" + k.ID + "/svg"
		out.Picture = &p
	}
	return out
}

// PublishInput is publish_flower's input after the door.
type PublishInput struct {
	Network   string
	AccountID string
	ID        string
	TxHash    string
}

// Publish is publish_flower (by id, or by the hash of the transaction that
// wrote it): it reads the record back from SocialDB (get,
// final) under the signed-in person's account, checks it byte for byte
// against what was prepared here, or for a record prepared elsewhere checks
// it as a flower/v1 of that account whose snapshot is stored here, and keeps
// it. The same id again is the same answer. A refusal changes nothing.
func (s *PublishService) Publish(ctx context.Context, caller toolkit.Caller, in PublishInput) (PublishedFlower, error) {
	chain, short, err := publishNetwork(in.Network)
	if err != nil {
		return PublishedFlower{}, err
	}
	if !people.IsPerson(caller.Subject) || s.wallets == nil {
		s.refused.Add(1, "unauthorised")
		return PublishedFlower{}, errs.New(errs.Unauthorised, "sign in with your NEAR wallet first", "sign in with your NEAR wallet: ask for a challenge, then verify it signed (NEP-413)")
	}
	if in.TxHash != "" {
		if in.ID, in.AccountID, err = s.flowerOfTransaction(ctx, caller, chain, short, in); err != nil {
			return PublishedFlower{}, err
		}
	}
	if !published.ValidID(in.ID) {
		return PublishedFlower{}, errs.New(errs.BadInput, "id must be a flower's id: 64 lower-case hex digits", "or send the transaction's tx_hash")
	}
	wallets, err := s.wallets.WalletsOf(ctx, caller.Subject)
	if err != nil {
		return PublishedFlower{}, err
	}
	mine := false
	for _, w := range wallets {
		mine = mine || (w.Network == short && w.AccountID == in.AccountID)
	}
	if !mine {
		s.refused.Add(1, "unauthorised")
		return PublishedFlower{}, errs.Newf(errs.Unauthorised, "account_id is not one of your wallets on %s", short).WithHint("sign in with that wallet first")
	}
	if k, err := s.store.Get(ctx, in.ID); err == nil {
		return publishedAnswer(k), nil
	} else if !errs.Is(err, errs.NotFound) {
		return PublishedFlower{}, err
	}

	key := published.KeyPath(in.AccountID, in.ID)
	rctx, cancel := context.WithTimeout(ctx, chainReadDeadline)
	values, err := s.social.Get(rctx, chain, []string{key}, published.MaxRecordBytes+4096)
	cancel()
	switch {
	case errs.Is(err, errs.CannotRead):
		s.refused.Add(1, "invalid")
		return PublishedFlower{}, published.Invalid([]errs.Problem{{Message: "what is under " + key + " can't be read as a record"}})
	case err != nil:
		s.refused.Add(1, "chain")
		return PublishedFlower{}, errs.New(errs.SourceFailed, "SocialDB could not be read, so nothing was published here", "send the same request again in a moment").WithCause(err)
	}
	value, found := "", false
	for _, v := range values {
		if v.Path == key {
			value, found = v.Value, true
		}
	}
	if !found {
		s.refused.Add(1, "not_found")
		return PublishedFlower{}, errs.Newf(errs.NotFound, "SocialDB has nothing at %s yet", key).
			WithHint("the wallet may not have sent the transaction, or it isn't final yet: send it from your wallet, then publish again in a few seconds")
	}
	came := published.CameRecord
	prepared, err := s.store.Prepared(ctx, in.ID, in.AccountID, chain, s.clock.Now())
	switch {
	case err == nil:
		if value != string(prepared.Record) {
			s.refused.Add(1, "invalid")
			return PublishedFlower{}, errs.Newf(errs.BadInput, "the record at %s is not the one prepared here: it changed after prepare", key).
				WithHint("prepare it again and send the transaction prepare_publish answers, unchanged")
		}
		came = published.CamePrepared
	case !errs.Is(err, errs.NotFound):
		return PublishedFlower{}, err
	}
	f, id, _, problems := published.Parse([]byte(value))
	if len(problems) > 0 {
		s.refused.Add(1, "invalid")
		return PublishedFlower{}, published.Invalid(problems)
	}
	if id != in.ID || f.MadeBy != in.AccountID {
		s.refused.Add(1, "invalid")
		return PublishedFlower{}, errs.Newf(errs.BadInput, "the record at %s is not a flower of %s under its own id", key, in.AccountID).
			WithHint("a record's id is the SHA-256 of its canonical JSON, and its made_by the account it is under")
	}
	if came == published.CameRecord {
		c, problems, err := s.flowers.CheckSpec(ctx, json.RawMessage(mustJSON(f.Spec)))
		if err != nil {
			return PublishedFlower{}, err
		}
		for i := range problems {
			problems[i].Path = "/spec" + problems[i].Path
		}
		// A record names the map its snapshot reads, never another one.
		if want := ""; len(problems) == 0 {
			if want = published.MapOf(c.Snapshot.Chain, c.Snapshot.Params); f.Map != want {
				problems = []errs.Problem{{Path: "/map", Message: "is not the map its snapshot reads, " + want}}
			}
		}
		if len(problems) > 0 {
			s.refused.Add(1, "invalid")
			return PublishedFlower{}, published.Invalid(problems)
		}
	}
	madeAt, _ := time.Parse(time.RFC3339, f.MadeAt)
	k, kept, err := s.store.Keep(ctx, published.Kept{ID: id, Network: chain, Maker: in.AccountID, Map: f.Map, Snapshot: f.Snapshot,
		Record: []byte(value), Name: f.Name, MadeAt: madeAt, Status: published.StatusOK, Came: came})
	if err != nil {
		return PublishedFlower{}, errs.New(errs.Internal, "the published flower could not be kept").WithCause(err)
	}
	if err := s.keepSpec(ctx, caller.Subject, f); err != nil {
		return PublishedFlower{}, err
	}
	if kept {
		s.kept.Add(1, came)
		s.log.InfoContext(ctx, "flower published", "id", id, "network", chain, "map", f.Map, "came", came)
	}
	return publishedAnswer(k), nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// Get is get_flower.
func (s *PublishService) Get(ctx context.Context, id string) (PublishedFlower, error) {
	if !published.ValidID(id) {
		return PublishedFlower{}, errs.Newf(errs.NotFound, "no published flower %s", toolkit.CutForMessage(id))
	}
	k, err := s.store.Get(ctx, id)
	if err != nil {
		return PublishedFlower{}, err
	}
	return publishedAnswer(k), nil
}

// FlowerFilter is list_flowers' input after the door.
type FlowerFilter struct {
	Network, Maker, Map string
	Limit               int
	Cursor              string
}

// List is list_flowers: published flowers, newest first, cursor-paged.
func (s *PublishService) List(ctx context.Context, in FlowerFilter) (FlowerList, error) {
	if strings.HasPrefix(in.Map, "eip155:") {
		in.Map = strings.ToLower(in.Map) // an EVM address's one form
	}
	q := ports.FlowerQuery{Maker: in.Maker, Map: in.Map, NotMaps: s.hidden}
	if slices.Contains(s.hidden, in.Map) {
		// A hidden map is in no list; its flowers still open by id.
		return FlowerList{Flowers: []PublishedFlower{}}, nil
	}
	if in.Network != "" {
		chain, _, err := publishNetwork(in.Network)
		if err != nil {
			return FlowerList{}, err
		}
		q.Network = chain
	}
	var err error
	if q.Limit, err = published.PageSize(in.Limit); err != nil {
		return FlowerList{}, err
	}
	if q.After, err = published.ParseCursor(in.Cursor); err != nil {
		return FlowerList{}, err
	}
	page, err := s.store.List(ctx, q)
	if err != nil {
		return FlowerList{}, err
	}
	out := FlowerList{Flowers: make([]PublishedFlower, 0, len(page.Flowers))}
	for _, k := range page.Flowers {
		out.Flowers = append(out.Flowers, publishedAnswer(k))
	}
	if !page.Next.IsStart() {
		c := page.Next.String()
		out.NextCursor = &c
	}
	return out, nil
}

// FlowerSVG is a published flower drawn through the view viewHash names (the
// default when empty): the picture and its render hash. A flower whose
// snapshot isn't stored here, and an unknown view, are not_found.
func (s *PublishService) FlowerSVG(ctx context.Context, id, viewHash string) (flowersapp.Rendered, error) {
	k, err := s.store.Get(ctx, id)
	if err != nil || !published.ValidID(id) {
		return flowersapp.Rendered{}, errs.Newf(errs.NotFound, "no published flower %s", toolkit.CutForMessage(id))
	}
	if k.Status != published.StatusOK {
		return flowersapp.Rendered{}, errs.New(errs.NotFound, "this flower's snapshot isn't stored here, so it is drawn nowhere")
	}
	view := specs.DefaultView()
	if viewHash != "" {
		if s.views == nil {
			return flowersapp.Rendered{}, errs.Newf(errs.NotFound, "no view %s", toolkit.CutForMessage(viewHash))
		}
		if view, err = s.views.ResolveView(ctx, viewHash); err != nil {
			return flowersapp.Rendered{}, err
		}
	}
	viewName, _, err := specs.ViewName(view)
	if err != nil {
		return flowersapp.Rendered{}, errs.New(errs.Internal, "the view could not be named").WithCause(err)
	}
	key := flowerSVGKey{id: id, view: viewName}
	if r, ok := s.svgs.Get(key); ok {
		s.svgLookup.Add(1, "hit")
		return r, nil
	}
	s.svgLookup.Add(1, "miss")
	f, _, _, problems := published.Parse(k.Record)
	if len(problems) > 0 {
		return flowersapp.Rendered{}, errs.New(errs.Internal, "a kept flower's record does not parse").WithCause(published.Invalid(problems))
	}
	loaded, err := s.flowers.LoadSnapshot(ctx, f.Snapshot)
	if err != nil {
		return flowersapp.Rendered{}, err
	}
	laid, err := specs.Layout(f.Spec, loaded.Snapshot)
	if err != nil {
		return flowersapp.Rendered{}, err
	}
	out := specs.Render(laid, view)
	sha, _, _ := specs.Name(f.Spec)
	r := flowersapp.Rendered{SVG: string(out.SVG), SpecSHA256: sha, RenderSHA256: out.SHA256, Legend: out.Legend}
	s.svgs.Put(key, r)
	return r, nil
}

// flowerSVGKey names a published flower's picture: the flower and the view.
type flowerSVGKey struct{ id, view string }
