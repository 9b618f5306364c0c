package viewsapp_test

import (
	"crypto/rand"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/viewsapp"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/specs"
)

func views(t *testing.T) (*viewsapp.ViewService, *memory.Views, people.Session) {
	t.Helper()
	store := memory.NewViews()
	id, err := people.NewPersonID(rand.Reader)
	require.NoError(t, err)
	return viewsapp.NewViewService(store, nil, memory.SystemClock{}, nil, nil), store, people.Session{ID: "ses_test", Subject: id, WalletID: "wal_test"}
}

var okabeIto = json.RawMessage(`{"schema":"view/v1","palette":"okabe-ito"}`)

// A kept view is the person's, and anyone's by its hash; the default view
// answers by its hash with nothing kept.
func TestAKeptViewIsThePersonsAndAnyonesByItsHash(t *testing.T) {
	s, _, sess := views(t)
	def, err := s.ByHash(t.Context(), specs.DefaultViewName())
	require.NoError(t, err)
	assert.Equal(t, specs.DefaultViewName(), def.Hash)

	kept, err := s.Keep(t.Context(), sess, okabeIto)
	require.NoError(t, err)
	mine, err := s.Mine(t.Context(), sess.Subject)
	require.NoError(t, err)
	assert.Equal(t, kept, mine)
	byHash, err := s.ByHash(t.Context(), kept.Hash)
	require.NoError(t, err)
	assert.Equal(t, kept, byHash)
}

// Keeping needs a signed-in person and a view/v1; refused, nothing is kept.
func TestAViewIsKeptOnlyBySignedInPeopleAndOnlyValid(t *testing.T) {
	s, store, sess := views(t)
	_, err := s.Keep(t.Context(), people.Session{ID: "ses_anon"}, okabeIto)
	require.True(t, errs.Is(err, errs.Unauthorised), "%v", err)

	_, err = s.Keep(t.Context(), sess, json.RawMessage(`{"schema":"view/v1","palette":"no-such-palette"}`))
	require.True(t, errs.Is(err, errs.BadInput), "%v", err)
	var e *errs.Error
	require.ErrorAs(t, err, &e)
	require.NotEmpty(t, e.Problems)
	assert.Regexp(t, `^/view`, e.Problems[0].Path, "problems point into the body's view")

	_, err = s.Keep(t.Context(), sess, nil)
	require.True(t, errs.Is(err, errs.BadInput), "%v", err)
	assert.Zero(t, store.Len(), "nothing kept")
	_, err = store.PersonView(t.Context(), sess.Subject)
	assert.True(t, errs.Is(err, errs.NotFound), "the person still keeps no view: %v", err)
}

// A hash that names no view, or is no view name at all, is one not_found.
func TestAnUnknownViewHashIsNotFound(t *testing.T) {
	s, _, _ := views(t)
	for _, hash := range []string{"0000000000000000000000000000000000000000000000000000000000000000", "not-a-hash", ""} {
		_, err := s.ByHash(t.Context(), hash)
		require.True(t, errs.Is(err, errs.NotFound), "%q: %v", hash, err)
	}
}

var tolMuted = json.RawMessage(`{"schema":"view/v1","palette":"tol-muted"}`)

// A person has one view: keeping another replaces theirs, and the first
// stays anyone's by its hash. The store notes the keeping session's wallet.
func TestKeepingAnotherViewReplacesThePersonsAndTheFirstStaysByHash(t *testing.T) {
	s, store, sess := views(t)
	first, err := s.Keep(t.Context(), sess, okabeIto)
	require.NoError(t, err)
	second, err := s.Keep(t.Context(), sess, tolMuted)
	require.NoError(t, err)
	require.NotEqual(t, first.Hash, second.Hash)

	mine, err := s.Mine(t.Context(), sess.Subject)
	require.NoError(t, err)
	assert.Equal(t, second, mine)
	byHash, err := s.ByHash(t.Context(), first.Hash)
	require.NoError(t, err)
	assert.Equal(t, first, byHash)

	kept, err := store.PersonView(t.Context(), sess.Subject)
	require.NoError(t, err)
	assert.Equal(t, "wal_test", kept.Credential)
	assert.Equal(t, "ses_test", kept.Session)
	assert.Equal(t, 1, store.Len())
}

// Two views that differ only in how they are written are one view: one
// name, one canonical body.
func TestAViewIsNamedByItsCanonicalForm(t *testing.T) {
	s, _, sess := views(t)
	a, err := s.Keep(t.Context(), sess, json.RawMessage(`{"schema":"view/v1","palette":"okabe-ito"}`))
	require.NoError(t, err)
	b, err := s.Keep(t.Context(), sess, json.RawMessage(`{ "palette" : "okabe-ito", "schema":"view/v1" }`))
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

// A visitor, and a person who kept nothing, see through the default view;
// its short name resolves as its whole one does.
func TestVisitorsAndPeopleWithoutAViewSeeTheDefault(t *testing.T) {
	s, _, sess := views(t)
	def, err := viewsapp.ViewAnswerOf(specs.DefaultView())
	require.NoError(t, err)
	for _, subject := range []string{"", "visitor_abc", sess.Subject} {
		got, err := s.Mine(t.Context(), subject)
		require.NoError(t, err)
		assert.Equal(t, def, got, "%q", subject)
	}
	short, err := s.ByHash(t.Context(), specs.DefaultViewName()[:specs.ShortViewNameLen])
	require.NoError(t, err)
	assert.Equal(t, def, short)
}
