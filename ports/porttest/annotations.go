package porttest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/claims"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/ports"
)

// Annotations is what the annotation suite runs over: the annotation store
// and the exploration store of the same database (an exploration's
// annotations are its owner's).
type Annotations struct {
	Explorations ports.ExplorationStore
	Annotations  ports.AnnotationStore
}

// AnnotationStoreContract runs the AnnotationStore contract against the
// stores newStores makes (fresh and empty per call).
func AnnotationStoreContract(t *testing.T, newStores func(t *testing.T) Annotations) {
	at := time.Date(2026, 11, 11, 12, 0, 0, 0, time.UTC)
	claim := func(subject, verb, value string) claims.Claim {
		obj, _ := json.Marshal(map[string]string{"value": value})
		c, err := claims.Make(0, claims.Input{Subject: subject, Verb: verb, Object: obj, Kind: claims.Stated}, "near:testnet:me.testnet", "")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	explore := func(t *testing.T, s Annotations, n int, owner string) string {
		id := fmt.Sprintf("exp_%032x", n)
		if err := s.Explorations.CreateExploration(t.Context(), explorations.Exploration{ID: id, Owner: owner, Question: "q", CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	ids := func(as []ports.Annotation) []string {
		out := []string{}
		for _, a := range as {
			out = append(out, a.Claim.Subject+" "+a.Claim.Verb+" "+a.Claim.Value())
		}
		return out
	}

	t.Run("kept in order, once by content, and read back whole", func(t *testing.T) {
		s := newStores(t)
		exp := explore(t, s, 1, "prs_a")
		a, b := claim("near:mainnet:a.near", "named", "Ann"), claim("near:mainnet:b.near", "noted", "big")
		existed, err := s.Annotations.Add(t.Context(), ports.AnnotationScope{Exploration: exp}, []claims.Claim{a, b, a}, at)
		if err != nil || fmt.Sprint(existed) != "[false false true]" {
			t.Fatalf("existed %v, %v", existed, err)
		}
		existed, err = s.Annotations.Add(t.Context(), ports.AnnotationScope{Exploration: exp}, []claims.Claim{b}, at.Add(time.Second))
		if err != nil || fmt.Sprint(existed) != "[true]" {
			t.Fatalf("again: existed %v, %v", existed, err)
		}
		got, err := s.Annotations.InExploration(t.Context(), exp, ports.AnnotationQuery{Limit: 10})
		if err != nil || len(got) != 2 {
			t.Fatalf("got %+v, %v", got, err)
		}
		if string(got[0].Claim.Object) != string(a.Object) || got[0].Claim.ID != a.ID || got[0].Exploration != exp || !got[0].AddedAt.Equal(at) {
			t.Fatalf("read back %+v, want %+v", got[0], a)
		}
		page, err := s.Annotations.InExploration(t.Context(), exp, ports.AnnotationQuery{AfterSeq: got[0].Seq, Limit: 10})
		if err != nil || len(page) != 1 || page[0].Claim.ID != b.ID {
			t.Fatalf("after the first: %+v, %v", page, err)
		}
		about, err := s.Annotations.InExploration(t.Context(), exp, ports.AnnotationQuery{About: b.Subject, Limit: 10})
		if err != nil || len(about) != 1 || about[0].Claim.ID != b.ID {
			t.Fatalf("about b: %+v, %v", about, err)
		}
	})

	t.Run("an owner's are theirs alone, from every project and none, filtered", func(t *testing.T) {
		s := newStores(t)
		mine1, mine2, theirs := explore(t, s, 1, "prs_a"), explore(t, s, 2, "prs_a"), explore(t, s, 3, "prs_b")
		add := func(scope ports.AnnotationScope, c claims.Claim) {
			if _, err := s.Annotations.Add(t.Context(), scope, []claims.Claim{c}, at); err != nil {
				t.Fatal(err)
			}
		}
		add(ports.AnnotationScope{Exploration: mine1}, claim("near:mainnet:a.near", "named", "Ann"))
		add(ports.AnnotationScope{Exploration: theirs}, claim("near:mainnet:a.near", "named", "Not yours"))
		add(ports.AnnotationScope{Owner: "prs_a"}, claim("near:mainnet:b.near", "noted", "in no project"))
		add(ports.AnnotationScope{Exploration: mine2}, claim("near:mainnet:a.near", "noted", "again"))
		add(ports.AnnotationScope{Owner: "prs_b"}, claim("near:mainnet:b.near", "named", "Bea"))
		got, err := s.Annotations.OfOwner(t.Context(), "prs_a", ports.AnnotationQuery{Limit: 10})
		want := []string{"near:mainnet:a.near named Ann", "near:mainnet:b.near noted in no project", "near:mainnet:a.near noted again"}
		if err != nil || fmt.Sprint(ids(got)) != fmt.Sprint(want) {
			t.Fatalf("got %v, %v; want %v", ids(got), err, want)
		}
		if got[1].Exploration != "" || got[1].Owner != "prs_a" {
			t.Fatalf("one in no project: %+v", got[1])
		}
		named, _ := s.Annotations.OfOwner(t.Context(), "prs_a", ports.AnnotationQuery{Verb: "named", Limit: 10})
		if fmt.Sprint(ids(named)) != "[near:mainnet:a.near named Ann]" {
			t.Fatalf("named: %v", ids(named))
		}
		about, _ := s.Annotations.OfOwner(t.Context(), "prs_a", ports.AnnotationQuery{About: "near:mainnet:a.near", Limit: 10})
		if len(about) != 2 {
			t.Fatalf("about a: %v", ids(about))
		}
		if none, _ := s.Annotations.OfOwner(t.Context(), "", ports.AnnotationQuery{Limit: 10}); len(none) != 0 {
			t.Fatalf("nobody's: %v", ids(none))
		}
		// An exploration that moves to another owner takes its annotations.
		moving := explore(t, s, 4, "")
		add(ports.AnnotationScope{Exploration: moving}, claim("near:mainnet:c.near", "noted", "moves"))
		if ok, err := s.Explorations.Claim(t.Context(), moving, "prs_b", at); err != nil || !ok {
			t.Fatal(err)
		}
		if got, _ := s.Annotations.OfOwner(t.Context(), "prs_b", ports.AnnotationQuery{About: "near:mainnet:c.near", Limit: 10}); len(got) != 1 {
			t.Fatalf("moved with its exploration: %v", ids(got))
		}
	})

	t.Run("all or none: past the cap nothing is kept", func(t *testing.T) {
		s := newStores(t)
		exp := explore(t, s, 1, "anon_a")
		batch := make([]claims.Claim, 0, claims.MaxPerRequest)
		for i := range claims.MaxPerProject - 1 {
			batch = append(batch, claim(fmt.Sprintf("near:mainnet:a%d.near", i), "noted", "x"))
			if len(batch) == claims.MaxPerRequest || i == claims.MaxPerProject-2 {
				if _, err := s.Annotations.Add(t.Context(), ports.AnnotationScope{Exploration: exp}, batch, at); err != nil {
					t.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		two := []claims.Claim{claim("near:mainnet:last.near", "noted", "x"), claim("near:mainnet:over.near", "noted", "x")}
		if _, err := s.Annotations.Add(t.Context(), ports.AnnotationScope{Exploration: exp}, two, at); !errs.Is(err, errs.BadInput) {
			t.Fatalf("past the cap: %v", err)
		}
		got, _ := s.Annotations.InExploration(t.Context(), exp, ports.AnnotationQuery{Limit: claims.MaxPerProject + 5})
		if len(got) != claims.MaxPerProject-1 {
			t.Fatalf("kept %d; want %d (nothing of the refused request)", len(got), claims.MaxPerProject-1)
		}
		if _, err := s.Annotations.Add(t.Context(), ports.AnnotationScope{Exploration: exp}, two[:1], at); err != nil {
			t.Fatalf("the last place: %v", err)
		}
	})

	t.Run("the same claims sent at once are kept once", func(t *testing.T) {
		s := newStores(t)
		exp := explore(t, s, 1, "prs_a")
		cs := []claims.Claim{claim("near:mainnet:a.near", "named", "Ann"), claim("near:mainnet:b.near", "noted", "x"), claim("near:mainnet:c.near", "noted", "y")}
		var wg sync.WaitGroup
		added := make([]int, 8)
		failed := make([]error, 8)
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				existed, err := s.Annotations.Add(t.Context(), ports.AnnotationScope{Exploration: exp}, cs, at)
				failed[g] = err
				for _, e := range existed {
					if !e {
						added[g]++
					}
				}
			}()
		}
		wg.Wait()
		total := 0
		for g := range 8 {
			if failed[g] != nil {
				t.Fatal(failed[g])
			}
			total += added[g]
		}
		got, _ := s.Annotations.InExploration(t.Context(), exp, ports.AnnotationQuery{Limit: 10})
		if total != 3 || len(got) != 3 {
			t.Fatalf("added %d in all, %d kept; want 3 and 3", total, len(got))
		}
	})

	t.Run("an unknown exploration keeps nothing", func(t *testing.T) {
		s := newStores(t)
		_, err := s.Annotations.Add(t.Context(), ports.AnnotationScope{Exploration: fmt.Sprintf("exp_%032x", 9)}, []claims.Claim{claim("near:mainnet:a.near", "noted", "x")}, at)
		if !errs.Is(err, errs.NotFound) {
			t.Fatalf("got %v", err)
		}
	})
}
