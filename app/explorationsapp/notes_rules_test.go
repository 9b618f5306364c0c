package explorationsapp

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
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
)

type fixedNow struct{ t time.Time }

func (c fixedNow) Now() time.Time { return c.t }

// add_note over memory.Explorations (it passes ExplorationStoreContract):
// who may write, what a revoked link can still do, the cap, and a repeated
// Idempotency-Key.
func notes(t *testing.T) (*ExplorationService, *memory.Explorations, explorations.Exploration, toolkit.Caller) {
	t.Helper()
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	store := memory.NewExplorations()
	at := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	owner := toolkit.Caller{Subject: "anon_owner", Session: "ses_owner"}
	e := explorations.Exploration{ID: fmt.Sprintf("exp_%032x", 1), Owner: owner.Subject, Question: "q", CreatedAt: at, UpdatedAt: at}
	require.NoError(t, store.CreateExploration(t.Context(), e))
	return NewExplorationService(cfg, store, nil, nil, nil, fixedNow{at}, rand.Reader, nil, nil, nil), store, e, owner
}

func linkToken(t *testing.T, s *ExplorationService, owner toolkit.Caller, id, scope string) (string, string) {
	t.Helper()
	l, err := s.CreateLink(t.Context(), owner, id, scope, "")
	require.NoError(t, err)
	_, token, _ := strings.Cut(l.URL, "/s/")
	return l.ID, token
}

func storedNotes(t *testing.T, store *memory.Explorations, id string) int {
	t.Helper()
	ns, err := store.Notes(t.Context(), id, time.Time{}, "", explorations.MaxNotes+1)
	require.NoError(t, err)
	return len(ns)
}

// A continue link writes notes until it is revoked; a read link, a stranger
// and a revoked link are all one not_found, and write nothing.
func TestNotesAreWrittenByTheOwnerAndContinueLinksOnly(t *testing.T) {
	s, store, e, owner := notes(t)
	ctx := t.Context()
	_, err := s.addNote(ctx, toolkit.Call{Caller: owner}, addNoteInput{Exploration: e.ID, Text: "the owner's"})
	require.NoError(t, err)
	contID, cont := linkToken(t, s, owner, e.ID, "continue")
	_, read := linkToken(t, s, owner, e.ID, "read")
	_, err = s.addNote(ctx, toolkit.Call{}, addNoteInput{Exploration: cont, Text: "through a continue link"})
	require.NoError(t, err)

	_, err = s.RevokeLink(ctx, owner, e.ID, contID)
	require.NoError(t, err)
	stranger := toolkit.Caller{Subject: "anon_stranger", Session: "ses_s"}
	for _, c := range []struct {
		who toolkit.Caller
		ref string
	}{{toolkit.Caller{}, read}, {toolkit.Caller{}, cont}, {stranger, e.ID}, {toolkit.Caller{}, e.ID}} {
		_, err := s.addNote(ctx, toolkit.Call{Caller: c.who}, addNoteInput{Exploration: c.ref, Text: "refused"})
		assert.Equal(t, errs.NotFound, errs.CodeOf(err), "%+v: %v", c, err)
	}
	_, err = s.addNote(ctx, toolkit.Call{Caller: owner}, addNoteInput{Exploration: e.ID, Text: "   "})
	assert.Equal(t, errs.BadInput, errs.CodeOf(err), "an empty note: %v", err)
	assert.Equal(t, 2, storedNotes(t, store, e.ID), "no refused note was stored")
}

// An exploration holds MaxNotes notes; the next is bad_input and stores
// nothing.
func TestNotesStopAtTheCap(t *testing.T) {
	s, store, e, owner := notes(t)
	ctx := t.Context()
	for i := range explorations.MaxNotes {
		_, err := s.addNote(ctx, toolkit.Call{Caller: owner}, addNoteInput{Exploration: e.ID, Text: fmt.Sprint("note ", i)})
		require.NoError(t, err)
	}
	_, err := s.addNote(ctx, toolkit.Call{Caller: owner}, addNoteInput{Exploration: e.ID, Text: "one too many"})
	assert.Equal(t, errs.BadInput, errs.CodeOf(err), "%v", err)
	assert.Equal(t, explorations.MaxNotes, storedNotes(t, store, e.ID))
}

// One Idempotency-Key: the request runs once and a repeat answers the same
// note; the key with another body is a conflict, and stores nothing.
func TestARepeatedIdempotencyKeyWritesOnce(t *testing.T) {
	s, store, e, owner := notes(t)
	ctx := t.Context()
	in := addNoteInput{Exploration: e.ID, Text: "once"}
	call := toolkit.Call{Caller: owner, IdempotencyKey: "k-1", Input: []byte(fmt.Sprintf(`{"exploration":%q,"text":"once"}`, e.ID))}
	first, err := s.addNote(ctx, call, in)
	require.NoError(t, err)
	again, err := s.addNote(ctx, call, in)
	require.NoError(t, err)
	assert.Equal(t, first, again)
	other := call
	other.Input = []byte(fmt.Sprintf(`{"exploration":%q,"text":"another"}`, e.ID))
	_, err = s.addNote(ctx, other, addNoteInput{Exploration: e.ID, Text: "another"})
	assert.Equal(t, errs.Conflict, errs.CodeOf(err), "%v", err)
	assert.Equal(t, 1, storedNotes(t, store, e.ID))
}
