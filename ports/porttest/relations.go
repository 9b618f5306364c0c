package porttest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/relations"
	"github.com/petal-near/petal/ports"
)

// RelationStoreContract runs the RelationStore contract against the stores
// newStore makes (a fresh, empty one per call).
func RelationStoreContract(t *testing.T, newStore func(t *testing.T) ports.RelationStore) {
	hex := func(n int) string { return fmt.Sprintf("%064x", n) }
	at := func(day int) time.Time { return time.Date(2026, 11, day, 0, 0, 0, 0, time.UTC) }
	reading := func(group string, snap, day int, accounts ...string) ports.RelationReading {
		ws := make([]relations.Weighted, len(accounts))
		for i, a := range accounts {
			ws[i] = relations.Weighted{Account: a, Weight: fmt.Sprint(i + 1)}
		}
		ms, total, err := relations.Members(ws)
		if err != nil {
			t.Fatal(err)
		}
		return ports.RelationReading{Group: group, Snapshot: hex(snap), AsOf: at(day), Reader: "near-dao-members", Title: "T " + group,
			Holdings: true, Total: total, Members: ms}
	}
	offer := func(t *testing.T, s ports.RelationStore, r ports.RelationReading, want bool) {
		t.Helper()
		got, err := s.Offer(t.Context(), r)
		if err != nil || got != want {
			t.Fatalf("offer %s %s: rebuilt %v (%v), want %v", r.Group, r.Snapshot[60:], got, err, want)
		}
	}
	page := ports.RelationQuery{Limit: 100}

	t.Run("the newest reading wins and an older one changes nothing", func(t *testing.T) {
		s := newStore(t)
		offer(t, s, reading("g:1", 1, 5, "a", "b"), true)
		offer(t, s, reading("g:1", 2, 3, "c"), false) // older
		offer(t, s, reading("g:1", 1, 5, "a", "b"), false)
		sha, asOf, ok, err := s.Newest(t.Context(), "g:1")
		if err != nil || !ok || sha != hex(1) || !asOf.Equal(at(5)) {
			t.Fatalf("newest %s %v %v %v", sha, asOf, ok, err)
		}
		offer(t, s, reading("g:1", 3, 6, "b", "c"), true)
		g, err := s.Group(t.Context(), "g:1")
		if err != nil || g.Members != 2 || g.Snapshot != hex(3) || g.Total != "3" || g.Kind != relations.KindDAO {
			t.Fatalf("group %+v %v", g, err)
		}
		if ms, _ := s.AccountGroups(t.Context(), "a", page); len(ms) != 0 {
			t.Fatalf("a left with the old reading: %+v", ms)
		}
		// Same block time: the lower sha256 is the newest.
		offer(t, s, reading("g:1", 0, 6, "z"), true)
		offer(t, s, reading("g:1", 4, 6, "y"), false)
		// A reading that isn't holdings is recorded, never members.
		r := reading("g:1", 9, 20, "v")
		r.Holdings = false
		offer(t, s, r, false)
		if sha, _, _, _ := s.Newest(t.Context(), "g:1"); sha != hex(0) {
			t.Fatalf("newest %s", sha)
		}
		if _, err := s.Group(t.Context(), "g:none"); !errs.Is(err, errs.NotFound) {
			t.Fatalf("unknown group: %v", err)
		}
	})

	t.Run("pairs are counted on rebuild and kept in step", func(t *testing.T) {
		s := newStore(t)
		offer(t, s, reading("g:a", 1, 1, "x", "y", "z"), true)
		offer(t, s, reading("g:b", 2, 1, "y", "z", "w"), true)
		offer(t, s, reading("g:c", 3, 1, "z"), true)
		pairs, err := s.Pairs(t.Context(), 1, "", page)
		if err != nil || len(pairs) != 3 || pairs[0] != (ports.GroupPair{A: "g:a", B: "g:b", Shared: 2, MembersA: 3, MembersB: 3}) {
			t.Fatalf("pairs %+v %v", pairs, err)
		}
		// b's new reading shares only w with nobody: a–b and b–c go.
		offer(t, s, reading("g:b", 4, 2, "w"), true)
		pairs, _ = s.Pairs(t.Context(), 1, "", page)
		if len(pairs) != 1 || pairs[0].A != "g:a" || pairs[0].B != "g:c" {
			t.Fatalf("pairs after b changed %+v", pairs)
		}
		count, shared, err := s.Shared(t.Context(), "g:c", "g:a", page)
		if err != nil || count != 1 || len(shared) != 1 || shared[0].Account != "z" || shared[0].ShareA != relations.Scale || shared[0].ShareB != relations.Ratio(3, 6) {
			t.Fatalf("shared %d %+v %v", count, shared, err)
		}
		rel, err := s.Related(t.Context(), "g:a", ports.RelatedByWeight, page)
		if err != nil || len(rel) != 1 || rel[0].Group != "g:c" || rel[0].WeightInGroup != relations.Scale || rel[0].Members != 1 || rel[0].Of != 3 {
			t.Fatalf("related %+v %v", rel, err)
		}
		// Hidden groups are left out.
		if pairs, _ := s.Pairs(t.Context(), 1, "", ports.RelationQuery{Limit: 10, Hidden: []string{"g:c"}}); len(pairs) != 0 {
			t.Fatalf("a hidden group's pair: %+v", pairs)
		}
		if ms, _ := s.AccountGroups(t.Context(), "z", ports.RelationQuery{Limit: 10, Hidden: []string{"g:c"}}); len(ms) != 1 || ms[0].Group != "g:a" {
			t.Fatalf("a hidden group's membership: %+v", ms)
		}
	})

	t.Run("shared accounts by the smaller share, paged one at a time", func(t *testing.T) {
		s := newStore(t)
		var xs, ys []string
		for i := range 40 {
			xs = append(xs, fmt.Sprintf("s%02d", i)) // weights 1..40
		}
		for i := range 45 { // larger, so x is read down to a threshold
			ys = append(ys, fmt.Sprintf("s%02d", (i*7)%60)) // another order, some not in x
		}
		ra, rb := reading("g:x", 1, 1, xs...), reading("g:y", 2, 1, ys...)
		offer(t, s, ra, true)
		offer(t, s, rb, true)
		share := map[string][2]int64{}
		for _, m := range ra.Members {
			share[m.Account] = [2]int64{m.Share, -1}
		}
		var want []string
		for _, m := range rb.Members {
			if v, ok := share[m.Account]; ok {
				share[m.Account] = [2]int64{v[0], m.Share}
				want = append(want, m.Account)
			}
		}
		smaller := func(acc string) int64 { return min(share[acc][0], share[acc][1]) }
		slices.SortFunc(want, func(x, y string) int {
			if c := cmp.Compare(smaller(y), smaller(x)); c != 0 {
				return c
			}
			return strings.Compare(x, y)
		})
		var got []string
		q := ports.RelationQuery{Limit: 1}
		for range 100 {
			count, page, err := s.Shared(t.Context(), "g:y", "g:x", q)
			if err != nil || count != int64(len(want)) {
				t.Fatalf("count %d of %d (%v)", count, len(want), err)
			}
			if len(page) == 0 {
				break
			}
			m := page[0]
			if m.ShareA != share[m.Account][1] || m.ShareB != share[m.Account][0] || m.SmallerShare != smaller(m.Account) {
				t.Fatalf("%s's shares %+v, want y %d and x %d", m.Account, m, share[m.Account][1], share[m.Account][0])
			}
			got = append(got, m.Account)
			q.After = ports.RelationKey{Set: true, Value: m.SmallerShare, Name: m.Account}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("paged %v\nwant  %v", got, want)
		}
	})

	t.Run("pages go on from their cursor", func(t *testing.T) {
		s := newStore(t)
		for i := range 7 {
			offer(t, s, reading(fmt.Sprintf("g:%d", i), i+1, 1, "hub", fmt.Sprintf("m%d", i)), true)
		}
		var all []ports.Membership
		q := ports.RelationQuery{Limit: 3}
		for range 10 {
			ms, err := s.AccountGroups(t.Context(), "hub", q)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, ms...)
			if len(ms) < q.Limit {
				break
			}
			last := ms[len(ms)-1]
			q.After = ports.RelationKey{Set: true, Value: last.Share, Name: last.Group}
		}
		if len(all) != 7 {
			t.Fatalf("paged %d of 7", len(all))
		}
		for i := 1; i < len(all); i++ {
			if all[i-1].Group >= all[i].Group {
				t.Fatalf("equal shares by group id: %+v", all)
			}
		}
		var walked []ports.Membership
		err := s.Walk(t.Context(), func(w ports.RelationWalker) error {
			var err error
			walked, err = w.GroupsOf(t.Context(), []string{"hub"}, []string{"g:0"}, 100)
			return err
		})
		if err != nil || len(walked) != 6 {
			t.Fatalf("walked %d (%v)", len(walked), err)
		}
	})
	t.Run("related groups in each order from both sides, paged, kept when either group is rebuilt", func(t *testing.T) {
		s := newStore(t)
		readings := map[string]ports.RelationReading{}
		put := func(r ports.RelationReading) {
			offer(t, s, r, true)
			readings[r.Group] = r
		}
		// g:m is b in its pairs with g:a…g:c and a in those with g:w…g:z;
		// several Jaccard indices are 1/3 from different counts.
		put(reading("g:m", 1, 1, "m1", "m2", "m3", "m4", "m5", "m6"))
		put(reading("g:a", 2, 1, "m1", "m2", "z1"))
		put(reading("g:b", 3, 1, "m1", "m2", "m3", "z1", "z2", "z3"))
		put(reading("g:c", 4, 1, "z4", "m4"))
		put(reading("g:w", 5, 1, "m6", "m5"))
		put(reading("g:x", 6, 1, "m1", "m2", "m3", "m4", "m5", "m6", "z1", "z2", "z3", "z4", "z5", "z6"))
		put(reading("g:y", 7, 1, "z5", "m5", "z6", "m6", "z7", "z8"))
		put(reading("g:z", 8, 1, "m3", "m4", "m5", "z9", "z10", "z11"))
		put(reading("g:lone", 9, 1, "q"))

		want := func(by ports.RelatedOrder, hidden string) []ports.RelatedGroup {
			me := map[string]bool{}
			for _, m := range readings["g:m"].Members {
				me[m.Account] = true
			}
			var out []ports.RelatedGroup
			for g, r := range readings {
				if g == "g:m" || g == hidden {
					continue
				}
				x := ports.RelatedGroup{Group: g, Title: r.Title, Members: int64(len(r.Members)), Of: int64(len(me))}
				for _, m := range r.Members {
					if me[m.Account] {
						x.Shared++
						x.WeightInGroup += m.Share
					}
				}
				if x.Shared > 0 {
					out = append(out, x)
				}
			}
			slices.SortFunc(out, func(x, y ports.RelatedGroup) int {
				c := cmp.Compare(y.Shared, x.Shared)
				switch by {
				case ports.RelatedByJaccard: // y's fraction against x's, cross-multiplied
					c = cmp.Compare(y.Shared*(x.Members+x.Of-x.Shared), x.Shared*(y.Members+y.Of-y.Shared))
				case ports.RelatedByWeight:
					c = cmp.Compare(y.WeightInGroup, x.WeightInGroup)
				}
				if c != 0 {
					return c
				}
				return strings.Compare(x.Group, y.Group)
			})
			return out
		}
		check := func(t *testing.T, hidden string) {
			t.Helper()
			for _, by := range []ports.RelatedOrder{ports.RelatedByCount, ports.RelatedByJaccard, ports.RelatedByWeight} {
				q := ports.RelationQuery{Limit: 2}
				if hidden != "" {
					q.Hidden = []string{hidden}
				}
				var got []ports.RelatedGroup
				for range 20 {
					rel, err := s.Related(t.Context(), "g:m", by, q)
					if err != nil {
						t.Fatalf("%s: %v", by, err)
					}
					got = append(got, rel...)
					if len(rel) < q.Limit {
						break
					}
					last := rel[len(rel)-1]
					q.After = ports.RelationKey{Set: true, Value: last.Shared, Name: last.Group}
					switch by {
					case ports.RelatedByJaccard:
						q.After.Num, q.After.Den = last.Shared, last.Members+last.Of-last.Shared
					case ports.RelatedByWeight:
						q.After.Value = last.WeightInGroup
					}
				}
				if w := want(by, hidden); !slices.Equal(got, w) {
					t.Fatalf("by %s, paged two at a time:\n got %+v\nwant %+v", by, got, w)
				}
			}
		}
		check(t, "")
		check(t, "g:b")
		// Rebuilding a related group, or the group itself, changes sizes
		// both sides' pair rows carry.
		put(reading("g:x", 10, 2, "m1", "m2"))
		put(reading("g:a", 11, 2, "m1", "z1", "z2", "z3", "z4"))
		check(t, "")
		put(reading("g:m", 12, 2, "m1", "m2", "m5", "m6", "z1", "z2"))
		check(t, "")
		check(t, "g:w")
	})
}
