package explorationsapp

import (
	"context"
	"strings"
	"time"

	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
)

// LinkView is a link as listed (never with its token).
type LinkView struct {
	ID        string     `json:"id"`
	Scope     string     `json:"scope"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// NewLink is a link just made, with its address shown this once.
type NewLink struct {
	ID        string    `json:"id"`
	Scope     string    `json:"scope"`
	URL       string    `json:"url"`
	CreatedAt time.Time `json:"created_at"`
}

// Owned is an exploration its owner names by id; links are never managed
// through a link.
func (s *ExplorationService) Owned(ctx context.Context, caller toolkit.Caller, id string) (explorations.Exploration, error) {
	if !explorations.ValidID(id) || caller.Subject == "" {
		return explorations.Exploration{}, explorations.NotFound()
	}
	e, access, err := s.Resolve(ctx, id, caller, explorations.OwnerAccess)
	if err != nil || access != explorations.OwnerAccess {
		return explorations.Exploration{}, explorations.NotFound()
	}
	return e, nil
}

// CreateLink makes a read or continue link for the owner; base is the site's
// configured address, which the link's url starts with, or "" for a url
// relative to the site.
func (s *ExplorationService) CreateLink(ctx context.Context, caller toolkit.Caller, id, scope, base string) (NewLink, error) {
	e, err := s.Owned(ctx, caller, id)
	if err != nil {
		return NewLink{}, err
	}
	sc, err := explorations.ParseScope(scope)
	if err != nil {
		return NewLink{}, err
	}
	linkID, err := explorations.NewID(s.random, "lnk_")
	if err != nil {
		return NewLink{}, err
	}
	token, hash, err := explorations.NewLinkToken(s.random)
	if err != nil {
		return NewLink{}, err
	}
	refund, err := s.budget.Spend(ctx, e.Owner, snapshotsapp.RowBytes+int64(len(hash)))
	if err != nil {
		return NewLink{}, err
	}
	l := explorations.Link{ID: linkID, Exploration: e.ID, Scope: sc, TokenSHA256: hash, CreatedAt: s.now()}
	if err := s.store.CreateLink(ctx, l); err != nil {
		refund()
		return NewLink{}, err
	}
	return NewLink{ID: l.ID, Scope: string(l.Scope), URL: strings.TrimRight(base, "/") + "/s/" + token, CreatedAt: l.CreatedAt}, nil
}

// LinkPage is one page of an exploration's links. NextCursor, when not
// null, fetches the next page.
type LinkPage struct {
	Links      []LinkView `json:"links"`
	NextCursor *string    `json:"next_cursor"`
}

// Links lists a page of the owner's links of an exploration, the oldest
// first, without tokens: at most limit (explorations.LinkPage) after cursor.
func (s *ExplorationService) Links(ctx context.Context, caller toolkit.Caller, id, cursor string, limit int) (LinkPage, error) {
	after, err := explorations.ParseListCursor(cursor)
	if err != nil {
		return LinkPage{}, err
	}
	if limit, err = explorations.LinkPage(limit); err != nil {
		return LinkPage{}, err
	}
	e, err := s.Owned(ctx, caller, id)
	if err != nil {
		return LinkPage{}, err
	}
	ls, err := s.store.Links(ctx, e.ID, after, limit+1)
	if err != nil {
		return LinkPage{}, err
	}
	out := LinkPage{Links: []LinkView{}}
	if len(ls) > limit {
		ls = ls[:limit]
		last := ls[limit-1]
		next := explorations.ListCursor{At: last.CreatedAt, ID: last.ID}.String()
		out.NextCursor = &next
	}
	for _, l := range ls {
		out.Links = append(out.Links, LinkView{ID: l.ID, Scope: string(l.Scope), CreatedAt: l.CreatedAt, RevokedAt: l.RevokedAt})
	}
	return out, nil
}

// RevokeLink ends one of the owner's links at once.
func (s *ExplorationService) RevokeLink(ctx context.Context, caller toolkit.Caller, id, linkID string) (LinkView, error) {
	e, err := s.Owned(ctx, caller, id)
	if err != nil {
		return LinkView{}, err
	}
	l, err := s.store.RevokeLink(ctx, e.ID, linkID, s.now())
	if err != nil {
		return LinkView{}, err
	}
	// Live streams opened with the link, on any replica, look at it again.
	s.changed(ctx, e.ID)
	return LinkView{ID: l.ID, Scope: string(l.Scope), CreatedAt: l.CreatedAt, RevokedAt: l.RevokedAt}, nil
}

// Claimed is the answer of a claim.
type Claimed struct {
	Exploration string `json:"exploration"`
	Claimed     bool   `json:"claimed"`
}

// Claim makes the caller's session the owner of an unowned exploration,
// reached with its continue link (or its id, which opens an unowned one).
// One that already has an owner stays theirs: claimed is false.
func (s *ExplorationService) Claim(ctx context.Context, caller toolkit.Caller, ref string) (Claimed, error) {
	// Access first: a ref that opens nothing leaves nothing behind, not even
	// a session.
	e, _, err := s.Resolve(ctx, ref, caller, explorations.ContinueAccess)
	if err != nil {
		return Claimed{}, err
	}
	if e.Owner != "" {
		return Claimed{Exploration: e.ID, Claimed: false}, nil
	}
	if caller, err = caller.Own(ctx); err != nil {
		return Claimed{}, errs.New(errs.Internal, "a session could not be opened").WithCause(err)
	}
	if caller.Subject == "" {
		return Claimed{}, errs.New(errs.Unauthorised, "claiming an exploration needs a session")
	}
	ok, err := s.store.Claim(ctx, e.ID, caller.Subject, s.now())
	if err != nil {
		return Claimed{}, err
	}
	return Claimed{Exploration: e.ID, Claimed: ok}, nil
}

// ResumePacket is the markdown a link's token opens at /s/:token: one page of
// it from cursor (as get_exploration pages). base is the site's configured
// address, or "" for paths relative to the site.
func (s *ExplorationService) ResumePacket(ctx context.Context, token, base, cursor string) (string, error) {
	if !explorations.ValidToken(token) {
		return "", explorations.NotFound()
	}
	e, access, err := s.Resolve(ctx, token, toolkit.Caller{}, explorations.ReadAccess)
	if err != nil {
		return "", err
	}
	at, err := explorations.ParseCursor(cursor)
	if err != nil {
		return "", err
	}
	steps, notes, next, err := s.page(ctx, e.ID, at, explorations.DefaultPageItems)
	if err != nil {
		return "", err
	}
	return explorations.ResumePacket(explorations.ResumePage{Exploration: e, Steps: steps, Notes: notes, Access: access,
		Base: base, Token: token, Continued: !at.IsStart(), Next: next}), nil
}
