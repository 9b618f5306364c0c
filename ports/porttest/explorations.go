package porttest

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/ports"
)

// ExplorationStoreContract runs the ExplorationStore contract against the
// stores newStore makes (a fresh, empty one per call).
func ExplorationStoreContract(t *testing.T, newStore func(t *testing.T) ports.ExplorationStore) {
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	sample := func(n int, owner string) explorations.Exploration {
		return explorations.Exploration{ID: fmt.Sprintf("exp_%032x", n), Owner: owner, Question: fmt.Sprintf("question %d", n),
			CreatedAt: at.Add(time.Duration(n) * time.Minute), UpdatedAt: at.Add(time.Duration(n) * time.Minute)}
	}

	t.Run("an exploration reads back; an unknown one is not_found", func(t *testing.T) {
		store := newStore(t)
		e := sample(1, "anon_a")
		if err := store.CreateExploration(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		got, err := store.Exploration(t.Context(), e.ID)
		if err != nil || got != e {
			t.Fatalf("got %+v, %v; want %+v", got, err, e)
		}
		if _, err := store.Exploration(t.Context(), sample(2, "").ID); !errs.Is(err, errs.NotFound) {
			t.Fatalf("unknown exploration: %v", err)
		}
	})

	t.Run("an owner's list is theirs alone, the newest first", func(t *testing.T) {
		store := newStore(t)
		for i, owner := range []string{"anon_a", "anon_b", "anon_a", ""} {
			if err := store.CreateExploration(t.Context(), sample(i+1, owner)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := store.OwnedBy(t.Context(), "anon_a", 10)
		if err != nil || len(got) != 2 || got[0].ID != sample(3, "").ID || got[1].ID != sample(1, "").ID {
			t.Fatalf("got %+v, %v", got, err)
		}
		if got, _ := store.OwnedBy(t.Context(), "", 10); len(got) != 0 {
			t.Fatalf("nobody owns the unowned: %+v", got)
		}
	})

	t.Run("claim takes an unowned exploration once", func(t *testing.T) {
		store := newStore(t)
		e := sample(1, "")
		if err := store.CreateExploration(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		if ok, err := store.Claim(t.Context(), e.ID, "anon_a", at); err != nil || !ok {
			t.Fatalf("first claim: %v %v", ok, err)
		}
		if ok, err := store.Claim(t.Context(), e.ID, "anon_b", at); err != nil || ok {
			t.Fatalf("second claim: %v %v", ok, err)
		}
		if got, _ := store.Exploration(t.Context(), e.ID); got.Owner != "anon_a" {
			t.Fatalf("owner %q", got.Owner)
		}
	})

	t.Run("steps saved at once each get their own number", func(t *testing.T) {
		store := newStore(t)
		e := sample(1, "anon_a")
		if err := store.CreateExploration(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		const n = 20
		var wg sync.WaitGroup
		errc := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := store.AddStep(t.Context(), explorations.Step{ID: fmt.Sprintf("stp_%d", i), Exploration: e.ID,
					SpecSHA256: fmt.Sprintf("%064x", i), CreatedAt: at})
				errc <- err
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			if err != nil {
				t.Fatal(err)
			}
		}
		steps, err := store.Steps(t.Context(), e.ID)
		if err != nil || len(steps) != n {
			t.Fatalf("%d steps, %v", len(steps), err)
		}
		for i, s := range steps {
			if s.Seq != i+1 {
				t.Fatalf("step %d has seq %d", i, s.Seq)
			}
		}
		if _, err := store.AddStep(t.Context(), explorations.Step{ID: "stp_x", Exploration: sample(9, "").ID, CreatedAt: at}); !errs.Is(err, errs.NotFound) {
			t.Fatalf("a step on no exploration: %v", err)
		}
	})

	t.Run("links are found by their token's hash and stop when revoked", func(t *testing.T) {
		store := newStore(t)
		e := sample(1, "anon_a")
		if err := store.CreateExploration(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		l := explorations.Link{ID: "lnk_1", Exploration: e.ID, Scope: explorations.ScopeContinue, TokenSHA256: fmt.Sprintf("%064x", 7), CreatedAt: at}
		if err := store.CreateLink(t.Context(), l); err != nil {
			t.Fatal(err)
		}
		got, err := store.LinkByToken(t.Context(), l.TokenSHA256)
		if err != nil || got.ID != l.ID || got.RevokedAt != nil {
			t.Fatalf("got %+v, %v", got, err)
		}
		first, err := store.RevokeLink(t.Context(), e.ID, l.ID, at.Add(time.Hour))
		if err != nil || first.RevokedAt == nil {
			t.Fatalf("revoke: %+v %v", first, err)
		}
		again, err := store.RevokeLink(t.Context(), e.ID, l.ID, at.Add(2*time.Hour))
		if err != nil || !again.RevokedAt.Equal(*first.RevokedAt) {
			t.Fatalf("a second revoke keeps the first time: %+v %v", again, err)
		}
		if _, err := store.RevokeLink(t.Context(), sample(2, "").ID, l.ID, at); !errs.Is(err, errs.NotFound) {
			t.Fatalf("another exploration's link: %v", err)
		}
		if got, _ := store.LinkByToken(t.Context(), l.TokenSHA256); explorations.AccessByLink(got) != explorations.NoAccess {
			t.Fatal("a revoked link still opens the exploration")
		}
	})

	t.Run("one idempotency key: one request runs, the rest see it", func(t *testing.T) {
		store := newStore(t)
		const n = 20
		var wg sync.WaitGroup
		var mu sync.Mutex
		var winners int
		var priors []string
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				prior, err := store.ReserveIdempotency(t.Context(), "anon_a", "k", "fp", at)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					t.Error(err)
				case prior == nil:
					winners++
				default:
					priors = append(priors, prior.Fingerprint)
				}
			}()
		}
		wg.Wait()
		if winners != 1 || len(priors) != n-1 {
			t.Fatalf("%d reservations won, %d saw one", winners, len(priors))
		}
		sort.Strings(priors)
		if priors[0] != "fp" || priors[len(priors)-1] != "fp" {
			t.Fatalf("priors %v", priors)
		}
		if err := store.KeepIdempotentAnswer(t.Context(), "anon_a", "k", []byte(`{"id":"x"}`)); err != nil {
			t.Fatal(err)
		}
		prior, err := store.ReserveIdempotency(t.Context(), "anon_a", "k", "other", at)
		if err != nil || prior == nil || prior.Fingerprint != "fp" || string(prior.Answer) != `{"id":"x"}` {
			t.Fatalf("prior %+v, %v", prior, err)
		}
		// Release frees only an unanswered reservation.
		if err := store.ReleaseIdempotency(t.Context(), "anon_a", "k"); err != nil {
			t.Fatal(err)
		}
		if prior, _ := store.ReserveIdempotency(t.Context(), "anon_a", "k", "fp", at); prior == nil {
			t.Fatal("an answered key was released")
		}
		if prior, _ := store.ReserveIdempotency(t.Context(), "anon_b", "k", "fp", at); prior != nil {
			t.Fatal("another caller's key is theirs")
		}
		if err := store.ReleaseIdempotency(t.Context(), "anon_b", "k"); err != nil {
			t.Fatal(err)
		}
		if prior, _ := store.ReserveIdempotency(t.Context(), "anon_b", "k", "fp2", at); prior != nil {
			t.Fatal("a released key is free again")
		}
	})

	t.Run("posted readings count once, from a time", func(t *testing.T) {
		store := newStore(t)
		e := sample(1, "anon_a")
		if err := store.CreateExploration(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		for i, r := range []struct {
			sha   string
			isNew bool
			at    time.Time
		}{{"a", true, at.Add(-25 * time.Hour)}, {"b", true, at}, {"b", true, at}, {"c", false, at}} {
			if err := store.RecordPostedReading(t.Context(), e.ID, r.sha, r.isNew, r.at); err != nil {
				t.Fatalf("reading %d: %v", i, err)
			}
		}
		n, err := store.PostedReadingsSince(t.Context(), explorations.StartOfDayUTC(at))
		if err != nil || n != 1 {
			t.Fatalf("%d new readings today, %v", n, err)
		}
	})
}
