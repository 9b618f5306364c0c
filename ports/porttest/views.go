package porttest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// ViewStoreContract runs the ViewStore contract against the stores newStore
// makes (a fresh, empty one per call).
func ViewStoreContract(t *testing.T, newStore func(t *testing.T) ports.ViewStore) {
	view := func(n int) ports.KeptView {
		return ports.KeptView{
			Hash:       fmt.Sprintf("%064x", n),
			Body:       fmt.Appendf(nil, `{"labels":"spec","max_labels":%d,"palette":"tol-muted","schema":"view/v1"}`, n),
			Credential: hexID(t, "wal_", 16),
			Session:    hexID(t, "", 32),
			KeptAt:     suiteNow,
		}
	}

	t.Run("a person keeps a view, reads it back, and anyone reads it by its name", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		alice := hexID(t, "prs_", 16)
		if _, err := s.PersonView(ctx, alice); !errs.Is(err, errs.NotFound) {
			t.Fatalf("before keeping: want not_found, got %v", err)
		}
		v := view(7)
		must(t, s.KeepView(ctx, alice, v))
		got, err := s.PersonView(ctx, alice)
		must(t, err)
		if got.Hash != v.Hash || string(got.Body) != string(v.Body) || got.Credential != v.Credential ||
			got.Session != v.Session || !got.KeptAt.Equal(v.KeptAt) {
			t.Fatalf("read back:\n got %+v\nwant %+v", got, v)
		}
		body, err := s.View(ctx, v.Hash)
		must(t, err)
		if string(body) != string(v.Body) {
			t.Fatalf("by name: %s", body)
		}
		if _, err := s.View(ctx, view(8).Hash); !errs.Is(err, errs.NotFound) {
			t.Fatalf("a name nobody kept: want not_found, got %v", err)
		}
	})

	t.Run("keeping another view replaces the person's, and the first stays readable by its name", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		alice, bob := hexID(t, "prs_", 16), hexID(t, "prs_", 16)
		first, second := view(1), view(2)
		second.KeptAt = suiteNow.Add(time.Minute)
		must(t, s.KeepView(ctx, alice, first))
		must(t, s.KeepView(ctx, bob, first))
		must(t, s.KeepView(ctx, alice, second))
		got, err := s.PersonView(ctx, alice)
		must(t, err)
		if got.Hash != second.Hash || !got.KeptAt.Equal(second.KeptAt) || got.Session != second.Session {
			t.Fatalf("alice's view: %+v", got)
		}
		if got, _ := s.PersonView(ctx, bob); got.Hash != first.Hash {
			t.Fatalf("bob's view changed: %+v", got)
		}
		if body, err := s.View(ctx, first.Hash); err != nil || string(body) != string(first.Body) {
			t.Fatalf("the first view by its name: %s, %v", body, err)
		}
	})

	t.Run("one view kept by many at once is kept once, and each has it", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		v := view(3)
		people := make([]string, 16)
		var wg sync.WaitGroup
		for i := range people {
			people[i] = hexID(t, "prs_", 16)
			wg.Go(func() {
				if err := s.KeepView(ctx, people[i], v); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		for _, p := range people {
			if got, err := s.PersonView(ctx, p); err != nil || got.Hash != v.Hash {
				t.Fatalf("%s: %+v, %v", p, got, err)
			}
		}
	})
}
