package porttest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/corrections"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/ports"
)

// FlowerCorrectionsContract runs the FlowerCorrections contract against the
// stores newStores makes (fresh and empty per call, over one database: the
// flowers a correction names are kept in the first).
func FlowerCorrectionsContract(t *testing.T, newStores func(t *testing.T) (ports.PublishedFlowers, ports.FlowerCorrections)) {
	hex := func(n int) string { return fmt.Sprintf("%064x", n) }
	madeAt := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	withFlowers := func(t *testing.T, n int) ports.FlowerCorrections {
		t.Helper()
		flowers, store := newStores(t)
		for i := 1; i <= n; i++ {
			if _, _, err := flowers.Keep(t.Context(), published.Kept{ID: hex(i), Network: "near:testnet", Maker: "alice.testnet",
				Map: "near:testnet:population", Snapshot: hex(1000), Record: []byte(`{}`), MadeAt: madeAt,
				Status: published.StatusOK, Came: published.CamePrepared}); err != nil {
				t.Fatal(err)
			}
		}
		return store
	}
	correction := func(n, flower int) corrections.Kept {
		return corrections.Kept{ID: hex(100 + n), Flower: hex(flower), Network: "near:testnet", Maker: "bob.testnet",
			Kind: corrections.StaleReading, Record: fmt.Appendf(nil, `{"reason":"ünïcode \u003c%d\u003e"}`, n),
			MadeAt: madeAt, Came: corrections.CameSubmitted}
	}

	t.Run("keep then get gives back the record's bytes; the same again changes nothing", func(t *testing.T) {
		s := withFlowers(t, 1)
		c := correction(1, 1)
		got, kept, err := s.Keep(t.Context(), c)
		if err != nil || !kept || got.KeptAt.IsZero() {
			t.Fatalf("keep: %+v kept=%v err=%v", got, kept, err)
		}
		read, err := s.Get(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(read.Record) != string(c.Record) || read.Flower != c.Flower || read.Maker != c.Maker || read.Kind != c.Kind ||
			read.Network != c.Network || !read.MadeAt.Equal(madeAt) || !read.KeptAt.Equal(got.KeptAt) || read.Came != c.Came {
			t.Fatalf("read %+v, kept %+v", read, c)
		}
		again := c
		again.Record, again.Came = []byte(`{"other":1}`), corrections.CameSynced
		second, kept, err := s.Keep(t.Context(), again)
		if err != nil || kept || string(second.Record) != string(c.Record) || second.Came != c.Came {
			t.Fatalf("a second keep: %+v kept=%v err=%v", second, kept, err)
		}
	})

	t.Run("a correction of a flower not kept, and an unknown id, are not_found", func(t *testing.T) {
		s := withFlowers(t, 1)
		if _, _, err := s.Keep(t.Context(), correction(1, 2)); !errs.Is(err, errs.NotFound) {
			t.Fatalf("keeping a correction of no flower: %v", err)
		}
		if _, err := s.Get(t.Context(), hex(101)); !errs.Is(err, errs.NotFound) {
			t.Fatalf("get: %v", err)
		}
	})

	t.Run("each flower's newest, at most limit, and its count", func(t *testing.T) {
		s := withFlowers(t, 3)
		var ofOne []corrections.Kept
		for i := 1; i <= 5; i++ {
			k, _, err := s.Keep(t.Context(), correction(i, 1))
			if err != nil {
				t.Fatal(err)
			}
			ofOne = append(ofOne, k)
		}
		// The newest three by when they were kept, as the store says.
		slices.SortFunc(ofOne, func(a, b corrections.Kept) int {
			if c := b.KeptAt.Compare(a.KeptAt); c != 0 {
				return c
			}
			return strings.Compare(b.ID, a.ID)
		})
		if _, _, err := s.Keep(t.Context(), correction(9, 2)); err != nil {
			t.Fatal(err)
		}
		shown, err := s.OfFlowers(t.Context(), []string{hex(1), hex(2), hex(3)}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(shown[hex(1)]) != 3 || len(shown[hex(2)]) != 1 {
			t.Fatalf("shown %d and %d", len(shown[hex(1)]), len(shown[hex(2)]))
		}
		for i, k := range shown[hex(1)] {
			if k.ID != ofOne[i].ID {
				t.Fatalf("shown %d is %s, not the %d-th newest %s", i, k.ID, i+1, ofOne[i].ID)
			}
		}
		if _, ok := shown[hex(3)]; ok {
			t.Fatal("a flower with no corrections has some")
		}
		for i := 1; i < len(shown[hex(1)]); i++ {
			a, b := shown[hex(1)][i-1], shown[hex(1)][i]
			if a.KeptAt.Before(b.KeptAt) || (a.KeptAt.Equal(b.KeptAt) && a.ID < b.ID) {
				t.Fatalf("not newest first: %s then %s", a.ID, b.ID)
			}
		}
		if shown, err := s.OfFlowers(t.Context(), nil, 3); err != nil || len(shown) != 0 {
			t.Fatalf("no flowers: %v %v", shown, err)
		}
		for flower, want := range map[int]int{1: 5, 2: 1, 3: 0} {
			if n, err := s.Count(t.Context(), hex(flower)); err != nil || n != want {
				t.Fatalf("flower %d counts %d (%v), want %d", flower, n, err, want)
			}
		}
	})

	t.Run("the same correction kept at once is kept once", func(t *testing.T) {
		s := withFlowers(t, 1)
		var wg sync.WaitGroup
		var newly atomic.Int32
		for range 8 {
			wg.Go(func() {
				_, kept, err := s.Keep(t.Context(), correction(1, 1))
				if err != nil {
					t.Error(err)
				}
				if kept {
					newly.Add(1)
				}
			})
		}
		wg.Wait()
		if newly.Load() != 1 {
			t.Fatalf("kept %d times", newly.Load())
		}
	})
}
