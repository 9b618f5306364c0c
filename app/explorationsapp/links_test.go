package explorationsapp_test

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/explorationsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
)

// The links' rules over memory.Explorations, which passes the exploration
// store's contract suite as PostgreSQL's store does.

type clockAt struct{ t time.Time }

func (c clockAt) Now() time.Time { return c.t }

var at = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

var (
	owner    = toolkit.Caller{Subject: "anon_owner", Session: "ses_owner"}
	stranger = toolkit.Caller{Subject: "anon_stranger", Session: "ses_stranger"}
)

func service(t *testing.T) (*explorationsapp.ExplorationService, *memory.Explorations, explorations.Exploration) {
	t.Helper()
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	store := memory.NewExplorations()
	e := explorations.Exploration{ID: fmt.Sprintf("exp_%032x", 1), Owner: owner.Subject, Question: "who votes with whom?", CreatedAt: at, UpdatedAt: at}
	require.NoError(t, store.CreateExploration(t.Context(), e))
	return explorationsapp.NewExplorationService(cfg, store, nil, nil, nil, clockAt{at}, rand.Reader, nil, nil, nil), store, e
}

func tokenOf(t *testing.T, l explorationsapp.NewLink) string {
	t.Helper()
	_, token, ok := strings.Cut(l.URL, "/s/")
	require.True(t, ok, l.URL)
	return token
}

// A read link opens the exploration to read and no more; a continue link to
// continue. Revoked, a link opens nothing: the same not_found as a token
// that never was.
func TestALinkOpensWhatItsScopeSaysUntilRevoked(t *testing.T) {
	s, _, e := service(t)
	ctx := t.Context()
	read, err := s.CreateLink(ctx, owner, e.ID, "read", "https://petal.example/")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(read.URL, "https://petal.example/s/"), read.URL)
	cont, err := s.CreateLink(ctx, owner, e.ID, "continue", "")
	require.NoError(t, err)

	got, access, err := s.Resolve(ctx, tokenOf(t, read), toolkit.Caller{}, explorations.ReadAccess)
	require.NoError(t, err)
	assert.Equal(t, e.ID, got.ID)
	assert.Equal(t, explorations.ReadAccess, access)
	_, _, err = s.Resolve(ctx, tokenOf(t, read), toolkit.Caller{}, explorations.ContinueAccess)
	assert.Equal(t, errs.NotFound, errs.CodeOf(err), "a read link doesn't continue: %v", err)
	_, access, err = s.Resolve(ctx, tokenOf(t, cont), toolkit.Caller{}, explorations.ContinueAccess)
	require.NoError(t, err)
	assert.Equal(t, explorations.ContinueAccess, access)
	packet, err := s.ResumePacket(ctx, tokenOf(t, read), "", "")
	require.NoError(t, err)
	assert.Contains(t, packet, e.Question)

	revoked, err := s.RevokeLink(ctx, owner, e.ID, cont.ID)
	require.NoError(t, err)
	require.NotNil(t, revoked.RevokedAt)
	_, _, err = s.Resolve(ctx, tokenOf(t, cont), toolkit.Caller{}, explorations.ReadAccess)
	assert.Equal(t, errs.NotFound, errs.CodeOf(err), "a revoked link opens nothing: %v", err)
	_, err = s.ResumePacket(ctx, tokenOf(t, cont), "", "")
	assert.Equal(t, errs.NotFound, errs.CodeOf(err), "%v", err)
	_, err = s.Claim(ctx, stranger, tokenOf(t, cont))
	assert.Equal(t, errs.NotFound, errs.CodeOf(err), "%v", err)

	page, err := s.Links(ctx, owner, e.ID, "", 10)
	require.NoError(t, err)
	require.Len(t, page.Links, 2)
	for _, l := range page.Links {
		assert.Equal(t, l.ID == cont.ID, l.RevokedAt != nil, "the list keeps revoked links, marked: %+v", l)
	}
	for _, l := range page.Links {
		assert.NotContains(t, fmt.Sprintf("%+v", l), tokenOf(t, read), "a list never shows a token")
	}
}

// Links are the owner's to make, list and revoke: anyone else, even holding
// a continue link, gets not_found and changes nothing.
func TestOnlyTheOwnerManagesLinks(t *testing.T) {
	s, store, e := service(t)
	ctx := t.Context()
	cont, err := s.CreateLink(ctx, owner, e.ID, "continue", "")
	require.NoError(t, err)
	for _, who := range []toolkit.Caller{stranger, {}} {
		_, err := s.CreateLink(ctx, who, e.ID, "read", "")
		assert.Equal(t, errs.NotFound, errs.CodeOf(err), "%v", err)
		_, err = s.Links(ctx, who, e.ID, "", 10)
		assert.Equal(t, errs.NotFound, errs.CodeOf(err), "%v", err)
		_, err = s.RevokeLink(ctx, who, e.ID, cont.ID)
		assert.Equal(t, errs.NotFound, errs.CodeOf(err), "%v", err)
	}
	_, err = s.CreateLink(ctx, owner, tokenOf(t, cont), "read", "")
	assert.Equal(t, errs.NotFound, errs.CodeOf(err), "links are never managed through a link: %v", err)
	_, err = s.CreateLink(ctx, owner, e.ID, "write", "")
	assert.Equal(t, errs.BadInput, errs.CodeOf(err), "%v", err)

	links, err := store.Links(ctx, e.ID, explorations.ListCursor{}, 10)
	require.NoError(t, err)
	require.Len(t, links, 1, "no refused call made a link")
	assert.Nil(t, links[0].RevokedAt, "and none revoked one")
}

// An exploration holds at most MaxLiveLinks links that work: the next is a
// conflict; revoking one frees its place.
func TestLiveLinksAreCapped(t *testing.T) {
	s, _, e := service(t)
	ctx := t.Context()
	var first explorationsapp.NewLink
	for i := range explorations.MaxLiveLinks {
		l, err := s.CreateLink(ctx, owner, e.ID, "read", "")
		require.NoError(t, err)
		if i == 0 {
			first = l
		}
	}
	_, err := s.CreateLink(ctx, owner, e.ID, "read", "")
	assert.Equal(t, errs.Conflict, errs.CodeOf(err), "%v", err)
	_, err = s.RevokeLink(ctx, owner, e.ID, first.ID)
	require.NoError(t, err)
	_, err = s.CreateLink(ctx, owner, e.ID, "read", "")
	assert.NoError(t, err)
}

// An unowned exploration's id lets whoever holds it claim it, once; then it
// is the claimer's, and its id opens it to nobody else.
func TestAnUnownedExplorationIsClaimedOnce(t *testing.T) {
	s, store, _ := service(t)
	ctx := t.Context()
	unowned := explorations.Exploration{ID: fmt.Sprintf("exp_%032x", 2), Question: "q", CreatedAt: at, UpdatedAt: at}
	require.NoError(t, store.CreateExploration(ctx, unowned))
	got, err := s.Claim(ctx, stranger, unowned.ID)
	require.NoError(t, err)
	assert.True(t, got.Claimed)
	_, err = s.Claim(ctx, owner, unowned.ID)
	assert.Equal(t, errs.NotFound, errs.CodeOf(err), "claimed, its id opens it to its owner only: %v", err)
	e, err := store.Exploration(ctx, unowned.ID)
	require.NoError(t, err)
	assert.Equal(t, stranger.Subject, e.Owner)
}
