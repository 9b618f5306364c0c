package porttest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/ports"
)

// PublishedFlowersContract runs the PublishedFlowers contract against the
// stores newStore makes (a fresh, empty one per call).
func PublishedFlowersContract(t *testing.T, newStore func(t *testing.T) ports.PublishedFlowers) {
	hex := func(n int) string { return fmt.Sprintf("%064x", n) }
	madeAt := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	flower := func(n int, maker, mapID string, snapshot int) published.Kept {
		return published.Kept{
			ID: hex(n), Network: "near:testnet", Maker: maker, Map: mapID, Snapshot: hex(snapshot),
			Record: fmt.Appendf(nil, `{"made_by":%q,"name":"ünïcode \u003c%d\u003e"}`, maker, n),
			Name:   fmt.Sprintf("flower %d", n), MadeAt: madeAt, Status: published.StatusOK, Came: published.CamePrepared,
		}
	}
	listAll := func(t *testing.T, s ports.PublishedFlowers, q ports.FlowerQuery) []published.Kept {
		t.Helper()
		var all []published.Kept
		for range 100 {
			page, err := s.List(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, page.Flowers...)
			if page.Next.IsStart() {
				return all
			}
			q.After = page.Next
		}
		t.Fatal("paging never ended")
		return nil
	}

	t.Run("keep then get gives back the record's bytes", func(t *testing.T) {
		s := newStore(t)
		f := flower(1, "alice.testnet", "near:testnet:dao.sputnik-v2.testnet", 100)
		got, kept, err := s.Keep(t.Context(), f)
		if err != nil || !kept {
			t.Fatalf("keep: kept=%v err=%v", kept, err)
		}
		if got.PublishedAt.IsZero() || string(got.Record) != string(f.Record) {
			t.Fatalf("kept %+v", got)
		}
		read, err := s.Get(t.Context(), f.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(read.Record) != string(f.Record) || read.Maker != f.Maker || read.Map != f.Map || read.Snapshot != f.Snapshot ||
			read.Name != f.Name || !read.MadeAt.Equal(madeAt) || read.Status != published.StatusOK || read.Came != published.CamePrepared ||
			!read.PublishedAt.Equal(got.PublishedAt) || read.Network != "near:testnet" {
			t.Fatalf("read back %+v", read)
		}
		if _, err := s.Get(t.Context(), hex(2)); !errs.Is(err, errs.NotFound) {
			t.Fatalf("unknown id: %v", err)
		}
	})

	t.Run("keeping the same id again, even at once, keeps the first", func(t *testing.T) {
		s := newStore(t)
		first, _, err := s.Keep(t.Context(), flower(3, "alice.testnet", "near:testnet:population", 100))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		keptCount := 0
		for range 10 {
			wg.Go(func() {
				again := flower(3, "alice.testnet", "near:testnet:population", 100)
				again.Came = published.CameSynced
				got, kept, err := s.Keep(t.Context(), again)
				if err != nil {
					t.Error(err)
					return
				}
				if got.Came != published.CamePrepared || !got.PublishedAt.Equal(first.PublishedAt) {
					t.Errorf("a second keep answered %+v", got)
				}
				if kept {
					mu.Lock()
					keptCount++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if keptCount != 0 {
			t.Fatalf("kept again %d times", keptCount)
		}
	})

	t.Run("lists are newest first, filtered and cursor-paged", func(t *testing.T) {
		s := newStore(t)
		for i := 1; i <= 7; i++ {
			maker := "alice.testnet"
			if i%2 == 0 {
				maker = "bob.testnet"
			}
			mapID := fmt.Sprintf("near:testnet:dao%d.sputnik-v2.testnet", i%3)
			if _, _, err := s.Keep(t.Context(), flower(10+i, maker, mapID, 100+i%2)); err != nil {
				t.Fatal(err)
			}
		}
		all := listAll(t, s, ports.FlowerQuery{Limit: 3})
		if len(all) != 7 {
			t.Fatalf("listed %d, want 7", len(all))
		}
		for i := 1; i < len(all); i++ {
			a, b := all[i-1], all[i]
			if a.PublishedAt.Before(b.PublishedAt) || (a.PublishedAt.Equal(b.PublishedAt) && a.ID < b.ID) {
				t.Fatalf("not newest first at %d", i)
			}
		}
		if !all[len(all)-1].PublishedAt.Before(all[0].PublishedAt) && all[0].ID != hex(17) {
			t.Fatalf("the newest is not the last kept")
		}
		check := func(q ports.FlowerQuery, want int, ok func(published.Kept) bool) {
			t.Helper()
			got := listAll(t, s, q)
			if len(got) != want {
				t.Fatalf("%+v: %d flowers, want %d", q, len(got), want)
			}
			for _, f := range got {
				if !ok(f) {
					t.Fatalf("%+v listed %+v", q, f)
				}
			}
		}
		check(ports.FlowerQuery{Maker: "bob.testnet", Limit: 2}, 3, func(f published.Kept) bool { return f.Maker == "bob.testnet" })
		check(ports.FlowerQuery{Map: "near:testnet:dao1.sputnik-v2.testnet", Limit: 1}, 3, func(f published.Kept) bool { return f.Map == "near:testnet:dao1.sputnik-v2.testnet" })
		check(ports.FlowerQuery{Snapshot: hex(101), Limit: 100}, 4, func(f published.Kept) bool { return f.Snapshot == hex(101) })
		check(ports.FlowerQuery{Network: "near:mainnet", Limit: 100}, 0, nil)
		check(ports.FlowerQuery{NotMaps: []string{"near:testnet:dao1.sputnik-v2.testnet", "near:testnet:dao2.sputnik-v2.testnet"}, Limit: 1}, 2,
			func(f published.Kept) bool { return f.Map == "near:testnet:dao0.sputnik-v2.testnet" })
		check(ports.FlowerQuery{Network: "near:testnet", Maker: "alice.testnet", Map: "near:testnet:dao1.sputnik-v2.testnet", Limit: 100}, 2,
			func(f published.Kept) bool {
				return f.Maker == "alice.testnet" && f.Map == "near:testnet:dao1.sputnik-v2.testnet"
			})

		maps, err := s.Maps(t.Context(), ports.MapQuery{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(maps.Maps) != 2 || maps.Next.IsStart() {
			t.Fatalf("first page of maps: %+v", maps)
		}
		rest, err := s.Maps(t.Context(), ports.MapQuery{Limit: 2, After: maps.Next})
		if err != nil {
			t.Fatal(err)
		}
		if len(rest.Maps) != 1 || !rest.Next.IsStart() {
			t.Fatalf("second page of maps: %+v", rest)
		}
		seen := map[string]int64{}
		for _, m := range append(maps.Maps, rest.Maps...) {
			seen[m.Map] = m.Flowers
			newest := listAll(t, s, ports.FlowerQuery{Map: m.Map, Limit: 1})[0]
			if newest.ID != m.Newest.ID {
				t.Fatalf("map %s: newest %s, want %s", m.Map, m.Newest.ID, newest.ID)
			}
		}
		if seen["near:testnet:dao0.sputnik-v2.testnet"] != 2 || seen["near:testnet:dao1.sputnik-v2.testnet"] != 3 || seen["near:testnet:dao2.sputnik-v2.testnet"] != 2 {
			t.Fatalf("counts %v", seen)
		}
		if n, err := s.SetStatus(t.Context(), hex(101), published.StatusSnapshotMissing); err != nil || n != 4 {
			t.Fatalf("set status: %d %v", n, err)
		}
		check(ports.FlowerQuery{Snapshot: hex(101), Limit: 100}, 4, func(f published.Kept) bool { return f.Status == published.StatusSnapshotMissing })
	})

	t.Run("a bad limit or cursor is refused", func(t *testing.T) {
		s := newStore(t)
		if _, err := s.List(t.Context(), ports.FlowerQuery{Limit: published.MaxPage + 1}); !errs.Is(err, errs.BadInput) {
			t.Fatalf("limit: %v", err)
		}
	})

	t.Run("a prepared record is found until it expires", func(t *testing.T) {
		s := newStore(t)
		now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		p := published.Prepared{ID: hex(5), Account: "alice.testnet", Network: "near:testnet", Record: []byte(`{"x":"ünï"}`), ExpiresAt: now.Add(time.Hour)}
		if err := s.Prepare(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		if err := s.Prepare(t.Context(), p); err != nil {
			t.Fatalf("preparing again: %v", err)
		}
		got, err := s.Prepared(t.Context(), p.ID, p.Account, p.Network, now)
		if err != nil || string(got.Record) != string(p.Record) {
			t.Fatalf("prepared: %+v %v", got, err)
		}
		for _, miss := range [][3]string{{p.ID, "bob.testnet", p.Network}, {p.ID, p.Account, "near:mainnet"}, {hex(6), p.Account, p.Network}} {
			if _, err := s.Prepared(t.Context(), miss[0], miss[1], miss[2], now); !errs.Is(err, errs.NotFound) {
				t.Fatalf("%v: %v", miss, err)
			}
		}
		if _, err := s.Prepared(t.Context(), p.ID, p.Account, p.Network, now.Add(2*time.Hour)); !errs.Is(err, errs.NotFound) {
			t.Fatalf("expired: %v", err)
		}
	})
}
