package porttest

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
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
		got, err := store.OwnedBy(t.Context(), "anon_a", explorations.ListCursor{}, 10)
		if err != nil || len(got) != 2 || got[0].ID != sample(3, "").ID || got[1].ID != sample(1, "").ID {
			t.Fatalf("got %+v, %v", got, err)
		}
		if got, _ := store.OwnedBy(t.Context(), "", explorations.ListCursor{}, 10); len(got) != 0 {
			t.Fatalf("nobody owns the unowned: %+v", got)
		}
		after := explorations.ListCursor{At: got[0].CreatedAt, ID: got[0].ID}
		if rest, err := store.OwnedBy(t.Context(), "anon_a", after, 10); err != nil || len(rest) != 1 || rest[0].ID != sample(1, "").ID {
			t.Fatalf("the page after the newest: %+v, %v", rest, err)
		}
	})

	t.Run("links page oldest first, ties by id; past the cap of live links nothing is made", func(t *testing.T) {
		store := newStore(t)
		e := sample(1, "anon_a")
		if err := store.CreateExploration(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		link := func(i int) explorations.Link {
			// Two links share each created_at, so the id breaks ties.
			return explorations.Link{ID: fmt.Sprintf("lnk_%04d", i), Exploration: e.ID, Scope: explorations.ScopeRead,
				TokenSHA256: fmt.Sprintf("%064x", 1000+i), CreatedAt: at.Add(time.Duration(i/2) * time.Second)}
		}
		for i := range explorations.MaxLiveLinks {
			if err := store.CreateLink(t.Context(), link(i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := store.CreateLink(t.Context(), link(explorations.MaxLiveLinks)); !errs.Is(err, errs.Conflict) {
			t.Fatalf("a link past the cap: %v", err)
		}
		if _, err := store.LinkByToken(t.Context(), link(explorations.MaxLiveLinks).TokenSHA256); !errs.Is(err, errs.NotFound) {
			t.Fatalf("a refused link was stored: %v", err)
		}
		var seen []string
		after := explorations.ListCursor{}
		for {
			page, err := store.Links(t.Context(), e.ID, after, 7)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range page {
				seen = append(seen, l.ID)
			}
			if len(page) < 7 {
				break
			}
			last := page[len(page)-1]
			after = explorations.ListCursor{At: last.CreatedAt, ID: last.ID}
		}
		if len(seen) != explorations.MaxLiveLinks || seen[0] != link(0).ID || seen[len(seen)-1] != link(explorations.MaxLiveLinks-1).ID || !sort.StringsAreSorted(seen) {
			t.Fatalf("pages held %d links: %v", len(seen), seen)
		}
		if _, err := store.RevokeLink(t.Context(), e.ID, link(0).ID, at); err != nil {
			t.Fatal(err)
		}
		if err := store.CreateLink(t.Context(), link(explorations.MaxLiveLinks)); err != nil {
			t.Fatalf("a revoked link frees a place: %v", err)
		}
		if err := store.CreateLink(t.Context(), explorations.Link{ID: "lnk_x", Exploration: sample(9, "").ID, Scope: explorations.ScopeRead,
			TokenSHA256: fmt.Sprintf("%064x", 9), CreatedAt: at}); !errs.Is(err, errs.NotFound) {
			t.Fatalf("a link on no exploration: %v", err)
		}
	})

	t.Run("links made at once never pass the cap together", func(t *testing.T) {
		store := newStore(t)
		e := sample(1, "anon_a")
		if err := store.CreateExploration(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		link := func(i int) explorations.Link {
			return explorations.Link{ID: fmt.Sprintf("lnk_%04d", i), Exploration: e.ID, Scope: explorations.ScopeContinue,
				TokenSHA256: fmt.Sprintf("%064x", 5000+i), CreatedAt: at}
		}
		const before, racing = explorations.MaxLiveLinks - 5, 30
		for i := range before {
			if err := store.CreateLink(t.Context(), link(i)); err != nil {
				t.Fatal(err)
			}
		}
		var made, refused atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range racing {
			wg.Go(func() {
				<-start
				switch err := store.CreateLink(context.Background(), link(before+i)); {
				case err == nil:
					made.Add(1)
				case errs.Is(err, errs.Conflict):
					refused.Add(1)
				default:
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		if made.Load() != 5 || refused.Load() != racing-5 {
			t.Fatalf("%d made and %d refused of %d racing for the last 5 places", made.Load(), refused.Load(), racing)
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
		steps, err := store.Steps(t.Context(), e.ID, 0, 100)
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

	t.Run("steps and notes read a page at a time", func(t *testing.T) {
		store := newStore(t)
		e := sample(1, "anon_a")
		if err := store.CreateExploration(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			if _, err := store.AddStep(t.Context(), explorations.Step{ID: fmt.Sprintf("stp_%d", i), Exploration: e.ID,
				SpecSHA256: fmt.Sprintf("%064x", i), CreatedAt: at}); err != nil {
				t.Fatal(err)
			}
			// Two notes share each time, so the id orders them.
			if err := store.AddNote(t.Context(), explorations.Note{ID: fmt.Sprintf("not_%032x", i), Exploration: e.ID, Text: "n",
				CreatedAt: at.Add(time.Duration(i/2) * time.Second)}); err != nil {
				t.Fatal(err)
			}
		}
		steps, err := store.Steps(t.Context(), e.ID, 2, 2)
		if err != nil || len(steps) != 2 || steps[0].Seq != 3 || steps[1].Seq != 4 {
			t.Fatalf("steps after 2: %+v, %v", steps, err)
		}
		var seen []string
		afterAt, afterID := time.Time{}, ""
		for range 5 {
			page, err := store.Notes(t.Context(), e.ID, afterAt, afterID, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			for _, n := range page {
				seen = append(seen, n.ID)
			}
			afterAt, afterID = page[len(page)-1].CreatedAt, page[len(page)-1].ID
		}
		if len(seen) != 5 || !sort.StringsAreSorted(seen) {
			t.Fatalf("notes by pages: %v", seen)
		}
	})

	t.Run("an exploration holds at most MaxSteps steps and MaxNotes notes", func(t *testing.T) {
		store := newStore(t)
		e := sample(1, "anon_a")
		if err := store.CreateExploration(t.Context(), e); err != nil {
			t.Fatal(err)
		}
		for i := range explorations.MaxNotes {
			if err := store.AddNote(t.Context(), explorations.Note{ID: fmt.Sprintf("not_%032x", i), Exploration: e.ID, Text: "n", CreatedAt: at}); err != nil {
				t.Fatalf("note %d: %v", i, err)
			}
		}
		if err := store.AddNote(t.Context(), explorations.Note{ID: "not_over", Exploration: e.ID, Text: "n", CreatedAt: at}); !errs.Is(err, errs.BadInput) {
			t.Fatalf("a note past the cap: %v", err)
		}
		for i := range explorations.MaxSteps {
			if _, err := store.AddStep(t.Context(), explorations.Step{ID: fmt.Sprintf("stp_%d", i), Exploration: e.ID,
				SpecSHA256: fmt.Sprintf("%064x", i), CreatedAt: at}); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		if _, err := store.AddStep(t.Context(), explorations.Step{ID: "stp_over", Exploration: e.ID, SpecSHA256: fmt.Sprintf("%064x", 0), CreatedAt: at}); !errs.Is(err, errs.BadInput) {
			t.Fatalf("a step past the cap: %v", err)
		}
		if steps, _ := store.Steps(t.Context(), e.ID, explorations.MaxSteps-1, 10); len(steps) != 1 {
			t.Fatalf("the step refused was stored: %d after the last but one", len(steps))
		}
	})

	t.Run("posted readings' places: caps per site, address and owner, raced once", func(t *testing.T) {
		store := newStore(t)
		e, f := sample(1, "anon_a"), sample(2, "")
		for _, x := range []explorations.Exploration{e, f} {
			if err := store.CreateExploration(t.Context(), x); err != nil {
				t.Fatal(err)
			}
		}
		caps := ports.PostedCaps{Site: 6, PerAddress: 3, PerOwner: 4}
		since := explorations.StartOfDayUTC(at)
		slot := func(x explorations.Exploration, sha, address string) ports.PostedSlot {
			return ports.PostedSlot{Exploration: x.ID, SHA256: sha, Address: address, Owner: x.Owner, At: at, Since: since}
		}
		// Twenty posts from one address race for its three places.
		var wg sync.WaitGroup
		var mu sync.Mutex
		taken := 0
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				refused, err := store.ReservePostedReading(t.Context(), slot(e, fmt.Sprintf("a%d", i), "1.1.1.1"), caps)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					t.Error(err)
				case refused == "":
					taken++
				case refused != "address":
					t.Errorf("refused for %q", refused)
				}
			}()
		}
		wg.Wait()
		if taken != 3 {
			t.Fatalf("one address took %d places, not 3", taken)
		}
		if refused, _ := store.ReservePostedReading(t.Context(), slot(e, "b1", "2.2.2.2"), caps); refused != "" {
			t.Fatalf("another address: refused %q", refused)
		}
		if refused, _ := store.ReservePostedReading(t.Context(), slot(e, "b2", "2.2.2.2"), caps); refused != "owner" {
			t.Fatalf("the owner's fifth: refused %q", refused)
		}
		// The unowned exploration has no owner's cap; the site's stops it.
		if refused, _ := store.ReservePostedReading(t.Context(), slot(f, "c1", "3.3.3.3"), caps); refused != "" {
			t.Fatalf("unowned: refused %q", refused)
		}
		if refused, _ := store.ReservePostedReading(t.Context(), slot(f, "c2", "3.3.3.3"), caps); refused != "" {
			t.Fatalf("unowned: refused %q", refused)
		}
		if refused, _ := store.ReservePostedReading(t.Context(), slot(f, "c3", "3.3.3.3"), caps); refused != "site" {
			t.Fatalf("past the site's cap: refused %q", refused)
		}
		// A place given back is free again; yesterday's don't count.
		if err := store.ReleasePostedReading(t.Context(), f.ID, "c2"); err != nil {
			t.Fatal(err)
		}
		if refused, _ := store.ReservePostedReading(t.Context(), slot(f, "c3", "3.3.3.3"), caps); refused != "" {
			t.Fatalf("after a release: refused %q", refused)
		}
		if n, _ := store.PostedReadingsSince(t.Context(), since); n != 6 {
			t.Fatalf("%d new readings today, not 6", n)
		}
		tomorrow := slot(f, "d1", "3.3.3.3")
		tomorrow.At, tomorrow.Since = at.Add(24*time.Hour), since.Add(24*time.Hour)
		if refused, _ := store.ReservePostedReading(t.Context(), tomorrow, caps); refused != "" {
			t.Fatalf("a new day: refused %q", refused)
		}
	})
}
