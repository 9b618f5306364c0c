package postgres_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/domain/relations"
	"github.com/petal-near/petal/ports"
)

// TestRelationsSharedKeptOrRead: shared_accounts pages are the same, exact
// and in order whether a pair's top accounts are kept (relation_shared_top)
// or read from the members, including pages that run past the kept ones,
// and after either group of a pair is rebuilt.
func TestRelationsSharedKeptOrRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	reading := func(group string, snap int, accounts []string) ports.RelationReading {
		ws := make([]relations.Weighted, len(accounts))
		for i, a := range accounts {
			ws[i] = relations.Weighted{Account: a, Weight: fmt.Sprint(1 + rng.IntN(20))} // many equal shares
		}
		ms, total, err := relations.Members(ws)
		if err != nil {
			t.Fatal(err)
		}
		return ports.RelationReading{Group: group, Snapshot: fmt.Sprintf("%064x", snap), AsOf: time.Date(2026, 11, 1, snap, 0, 0, 0, time.UTC),
			Reader: "near-ft-balances", Title: group, Holdings: true, Total: total, Members: ms}
	}
	pick := func(n, pool int) []string {
		var out []string
		for _, i := range rng.Perm(pool)[:n] {
			out = append(out, fmt.Sprintf("acct%03d", i))
		}
		return out
	}
	kept := postgres.NewRelationRepository(pgtest.New(t).DB).KeepingSharedTopFrom(-1) // every pair kept
	read := postgres.NewRelationRepository(pgtest.New(t).DB).KeepingSharedTopFrom(math.Inf(1))
	groups := map[string]ports.RelationReading{}
	offer := func(r ports.RelationReading) {
		for _, s := range []*postgres.RelationRepository{kept, read} {
			if ok, err := s.Offer(t.Context(), r); err != nil || !ok {
				t.Fatalf("offer %s: %v %v", r.Group, ok, err)
			}
		}
		groups[r.Group] = r
	}
	// g:big1 and g:big2 share more accounts than are kept (201).
	offer(reading("g:big1", 1, pick(300, 320)))
	offer(reading("g:big2", 2, pick(300, 320)))
	offer(reading("g:mid", 3, pick(60, 320)))
	offer(reading("g:small", 4, pick(5, 320)))

	want := func(a, b string) []ports.SharedMember {
		in := map[string]relations.Member{}
		for _, m := range groups[a].Members {
			in[m.Account] = m
		}
		var out []ports.SharedMember
		for _, m := range groups[b].Members {
			if x, ok := in[m.Account]; ok {
				out = append(out, ports.SharedMember{Account: m.Account, WeightA: x.Weight, ShareA: x.Share, WeightB: m.Weight, ShareB: m.Share,
					SmallerShare: min(x.Share, m.Share)})
			}
		}
		slices.SortFunc(out, func(x, y ports.SharedMember) int {
			if c := cmp.Compare(y.SmallerShare, x.SmallerShare); c != 0 {
				return c
			}
			return strings.Compare(x.Account, y.Account)
		})
		return out
	}
	check := func() {
		t.Helper()
		names := []string{"g:big1", "g:big2", "g:mid", "g:small"}
		for _, a := range names {
			for _, b := range names {
				if a == b {
					continue
				}
				w := want(a, b)
				for _, s := range []*postgres.RelationRepository{kept, read} {
					for _, limit := range []int{3, 51, 201} {
						var got []ports.SharedMember
						q := ports.RelationQuery{Limit: limit}
						for range 400 {
							count, page, err := s.Shared(t.Context(), a, b, q)
							if err != nil || count != int64(len(w)) {
								t.Fatalf("%s %s: count %d of %d (%v)", a, b, count, len(w), err)
							}
							got = append(got, page...)
							if len(page) < limit {
								break
							}
							last := page[len(page)-1]
							q.After = ports.RelationKey{Set: true, Value: last.SmallerShare, Name: last.Account}
						}
						if !slices.Equal(got, w) {
							t.Fatalf("%s %s by %d (kept: %v): %d accounts, want %d\n got %v\nwant %v", a, b, limit, s == kept, len(got), len(w), got, w)
						}
					}
				}
			}
		}
	}
	check()
	if len(want("g:big1", "g:big2")) <= 201 {
		t.Fatalf("the large pair shares %d accounts, not more than are kept", len(want("g:big1", "g:big2")))
	}
	offer(reading("g:big2", 5, pick(280, 320)))
	offer(reading("g:mid", 6, pick(90, 320)))
	check()
}
