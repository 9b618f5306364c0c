package porttest

import (
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/ports"
)

// DataBudgetContract runs the DataBudget contract against the budgets
// newBudget makes (a fresh one per call).
func DataBudgetContract(t *testing.T, newBudget func(t *testing.T) ports.DataBudget) {
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

	t.Run("spends within the limit, refuses past it, counts nothing refused", func(t *testing.T) {
		b := newBudget(t)
		if ok, err := b.Spend(t.Context(), day, 600, 1000); err != nil || !ok {
			t.Fatalf("first spend: %v %v", ok, err)
		}
		if ok, err := b.Spend(t.Context(), day, 401, 1000); err != nil || ok {
			t.Fatalf("past the limit: %v %v", ok, err)
		}
		if ok, err := b.Spend(t.Context(), day, 400, 1000); err != nil || !ok {
			t.Fatalf("up to the limit: %v %v", ok, err)
		}
		if n, err := b.Spent(t.Context(), day); err != nil || n != 1000 {
			t.Fatalf("spent %d, %v", n, err)
		}
		if ok, _ := b.Spend(t.Context(), day.Add(24*time.Hour), 1001, 1000); ok {
			t.Fatal("one write larger than the whole budget")
		}
		if n, _ := b.Spent(t.Context(), day.Add(24*time.Hour)); n != 0 {
			t.Fatalf("a refused first write counted %d", n)
		}
		if err := b.Refund(t.Context(), day, 300); err != nil {
			t.Fatal(err)
		}
		if n, _ := b.Spent(t.Context(), day); n != 700 {
			t.Fatalf("after a refund: %d", n)
		}
	})

	t.Run("spends racing at the limit never pass it together", func(t *testing.T) {
		b := newBudget(t)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for range 30 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				took, err := b.Spend(t.Context(), day, 100, 1000)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Error(err)
				}
				if took {
					ok++
				}
			}()
		}
		wg.Wait()
		if n, _ := b.Spent(t.Context(), day); ok != 10 || n != 1000 {
			t.Fatalf("%d spends took %d bytes; want 10 and 1000", ok, n)
		}
	})
}
