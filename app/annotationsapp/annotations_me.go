package annotationsapp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/petal-near/petal/app/explorationsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/claims"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// MeAnnotationsQuery is GET /api/v1/me/annotations' query.
type MeAnnotationsQuery struct {
	Verb, About, Cursor string
	Limit               int
}

// Mine is everything a signed-in person and their agents keep about
// accounts, from all their projects and none, oldest first; verb named gives
// the names their page draws on petals. A visitor is unauthorised.
func (s *AnnotationService) Mine(ctx context.Context, caller toolkit.Caller, q MeAnnotationsQuery) (AnnotationList, error) {
	if !people.IsPerson(caller.Subject) {
		return AnnotationList{}, errs.New(errs.Unauthorised, "sign in first")
	}
	after, limit, err := annotationPage(q.Cursor, q.Limit)
	if err != nil {
		return AnnotationList{}, err
	}
	if q.Verb != "" && !claims.ValidVerb(q.Verb) {
		return AnnotationList{}, errs.New(errs.BadInput, "verb must be a lower-case word of 1 to 32 letters, digits or _")
	}
	if q.About != "" && !claims.ValidCAIP10(q.About) {
		return AnnotationList{}, errs.New(errs.BadInput, "about must be a CAIP-10 account id", "such as near:mainnet:alice.near")
	}
	got, err := s.store.OfOwner(ctx, caller.Subject, ports.AnnotationQuery{Verb: q.Verb, About: q.About, AfterSeq: after, Limit: limit + 1})
	if err != nil {
		return AnnotationList{}, err
	}
	return annotationList(got, limit), nil
}

// MeAnnotationsInput is POST /api/v1/me/annotations' body.
type MeAnnotationsInput struct {
	Annotations []claims.Input `json:"annotations"`
	// Conversation is a run id or an exploration id of the person's: the
	// claims are kept in its project (a run gets one now if it has none).
	Conversation string `json:"conversation,omitempty"`
}

// MeAdded is POST /api/v1/me/annotations' answer.
type MeAdded struct {
	Exploration *string `json:"exploration"`
	Added
}

// AddMine keeps what a person adds from the page, with their account as by:
// in a conversation's project, or theirs in no project. A conversation that
// isn't theirs is not_found.
func (s *AnnotationService) AddMine(ctx context.Context, caller toolkit.Caller, in MeAnnotationsInput) (MeAdded, error) {
	if !people.IsPerson(caller.Subject) {
		return MeAdded{}, errs.New(errs.Unauthorised, "sign in first")
	}
	account, err := s.account(ctx, caller)
	if err != nil {
		return MeAdded{}, err
	}
	if account == "" {
		return MeAdded{}, errs.New(errs.Unauthorised, "adding a note needs a session signed in with a wallet", "sign in with your NEAR wallet")
	}
	cs, err := makeClaims(in.Annotations, account, "")
	if err != nil {
		return MeAdded{}, err
	}
	scope := ports.AnnotationScope{Owner: caller.Subject}
	if in.Conversation != "" {
		id, err := s.conversation(ctx, caller, in.Conversation)
		if err != nil {
			return MeAdded{}, err
		}
		scope = ports.AnnotationScope{Exploration: id}
	}
	added, err := s.keep(ctx, caller.Subject, scope, cs)
	if err != nil {
		return MeAdded{}, err
	}
	out := MeAdded{Added: added}
	if scope.Exploration != "" {
		out.Exploration = &scope.Exploration
	}
	return out, nil
}

// conversation is the project of a conversation of the caller's: an
// exploration of theirs, or a run of theirs (whose exploration is made now
// if it has none). Anything else is the one not-found answer.
func (s *AnnotationService) conversation(ctx context.Context, caller toolkit.Caller, ref string) (string, error) {
	if explorations.ValidID(ref) {
		e, err := s.explorations.Owned(ctx, caller, ref)
		if err != nil {
			return "", err
		}
		return e.ID, nil
	}
	notFound := errs.New(errs.NotFound, "no such conversation")
	if s.runs == nil || len(ref) > 100 {
		return "", notFound
	}
	run, err := s.runs.Get(ctx, ref)
	if errs.Is(err, errs.NotFound) || (err == nil && run.Owner != caller.Subject) {
		return "", notFound
	}
	if err != nil {
		return "", err
	}
	if run.Exploration != "" {
		return run.Exploration, nil
	}
	question := "Petals' agent"
	for _, m := range run.Thread {
		if m.Role == "user" && strings.TrimSpace(m.Content) != "" {
			question = strings.TrimSpace(m.Content)
			break
		}
	}
	if r := []rune(question); len(r) > 280 {
		question = string(r[:279]) + "…"
	}
	in, _ := json.Marshal(map[string]string{"question": question})
	made, err := s.explorations.Start(ctx, toolkit.Call{Input: in, Caller: toolkit.Caller{Door: toolkit.DoorAgent, Subject: caller.Subject}}, explorationsapp.StartExplorationInput{Question: question})
	if err != nil {
		return "", err
	}
	id := made.ID
	if err := s.runs.SetExploration(ctx, run.ID, id); err != nil {
		return "", err
	}
	return id, nil
}
