package viewsapp_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/viewsapp"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/specs"
	"github.com/petal-near/petal/ports"
)

// keptViews is a ports.ViewStore in a map, counting writes: the rules under
// test are the service's (the store's own are its contract suite's).
type keptViews struct {
	mu     sync.Mutex
	person map[string]ports.KeptView
	bodies map[string][]byte
	writes int
}

func (k *keptViews) KeepView(_ context.Context, person string, v ports.KeptView) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.writes++
	k.person[person] = v
	if _, ok := k.bodies[v.Hash]; !ok {
		k.bodies[v.Hash] = v.Body
	}
	return nil
}

func (k *keptViews) PersonView(_ context.Context, person string) (ports.KeptView, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if v, ok := k.person[person]; ok {
		return v, nil
	}
	return ports.KeptView{}, errs.New(errs.NotFound, "no view")
}

func (k *keptViews) View(_ context.Context, hash string) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if b, ok := k.bodies[hash]; ok {
		return b, nil
	}
	return nil, errs.New(errs.NotFound, "no view")
}

func views(t *testing.T) (*viewsapp.ViewService, *keptViews, people.Session) {
	t.Helper()
	store := &keptViews{person: map[string]ports.KeptView{}, bodies: map[string][]byte{}}
	id, err := people.NewPersonID(rand.Reader)
	require.NoError(t, err)
	return viewsapp.NewViewService(store, nil, memory.SystemClock{}, nil, nil), store, people.Session{ID: "ses_test", Subject: id}
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
	assert.Zero(t, store.writes, "nothing kept")
}

// A hash that names no view, or is no view name at all, is one not_found.
func TestAnUnknownViewHashIsNotFound(t *testing.T) {
	s, _, _ := views(t)
	for _, hash := range []string{"0000000000000000000000000000000000000000000000000000000000000000", "not-a-hash", ""} {
		_, err := s.ByHash(t.Context(), hash)
		require.True(t, errs.Is(err, errs.NotFound), "%q: %v", hash, err)
	}
}
