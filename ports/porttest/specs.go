package porttest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// SpecStoreContract runs the SpecStore contract against the stores newStore
// makes (a fresh, empty one per call).
func SpecStoreContract(t *testing.T, newStore func(t *testing.T) ports.SpecStore) {
	name := func(n int) string { return fmt.Sprintf("%064x", n) }
	body := func(n int) []byte {
		return []byte(fmt.Sprintf(`{"schema":"flower-spec/v1","snapshot":"%064x","title":"ünïcode \u003c%d\u003e"}`, n, n))
	}

	t.Run("keep then get gives back the same bytes", func(t *testing.T) {
		store := newStore(t)
		kept, err := store.Keep(t.Context(), name(1), name(100), body(1))
		if err != nil || !kept {
			t.Fatalf("keep: kept=%v err=%v", kept, err)
		}
		got, err := store.Get(t.Context(), name(1))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(body(1)) {
			t.Fatalf("body changed: %s", got)
		}
	})

	t.Run("an unknown name is not_found", func(t *testing.T) {
		store := newStore(t)
		if _, err := store.Get(t.Context(), name(2)); !errs.Is(err, errs.NotFound) {
			t.Fatalf("want not_found, got %v", err)
		}
	})

	t.Run("the same spec kept by many at once is kept once", func(t *testing.T) {
		store := newStore(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		keptCount := 0
		for range 20 {
			wg.Go(func() {
				kept, err := store.Keep(t.Context(), name(3), name(100), body(3))
				if err != nil {
					t.Error(err)
					return
				}
				if kept {
					mu.Lock()
					keptCount++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if keptCount != 1 {
			t.Fatalf("kept %d times, want once", keptCount)
		}
		got, err := store.Get(t.Context(), name(3))
		if err != nil || string(got) != string(body(3)) {
			t.Fatalf("after racing keeps: %s, %v", got, err)
		}
	})
}
