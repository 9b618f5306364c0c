package porttest

import (
	"fmt"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/conversations"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// ConversationStores is what the conversation list's suite needs of one
// adapter: the list, and the run and exploration stores it lists, over one
// database.
type ConversationStores struct {
	List         ports.Conversations
	Runs         ports.RunStore
	Explorations ports.ExplorationStore
}

// ConversationsContract runs the Conversations contract against the stores
// newStores makes (fresh and empty per call).
func ConversationsContract(t *testing.T, newStores func(t *testing.T) ConversationStores) {
	n := 0
	exploration := func(t *testing.T, s ConversationStores, owner string) string {
		t.Helper()
		n++
		// Made now, as a run is: what is made later is newer.
		now := time.Now().UTC().Truncate(time.Microsecond)
		e := explorations.Exploration{ID: fmt.Sprintf("exp_%032x", n), Owner: owner, Question: "question", Title: fmt.Sprintf("exploration %d", n),
			CreatedAt: now, UpdatedAt: now}
		must(t, s.Explorations.CreateExploration(t.Context(), e))
		return e.ID
	}
	run := func(t *testing.T, s ConversationStores, owner string) string {
		t.Helper()
		n++
		id := fmt.Sprintf("run_%032x", n)
		_, err := s.Runs.Create(t.Context(), runs.Run{ID: id, Owner: owner, Model: "recorded"})
		must(t, err)
		return id
	}
	// all reads every page of owner's list, limit at a time, checking each
	// page is in order and continues the one before.
	all := func(t *testing.T, s ConversationStores, owner string, limit int) []conversations.Conversation {
		t.Helper()
		var out []conversations.Conversation
		cursor := conversations.Cursor{}
		for range 1000 {
			page, err := s.List.Conversations(t.Context(), owner, cursor, limit)
			must(t, err)
			if len(page) > limit {
				t.Fatalf("a page of %d holds %d", limit, len(page))
			}
			out = append(out, page...)
			if len(page) < limit {
				break
			}
			cursor = conversations.After(page[len(page)-1])
		}
		for i := 1; i < len(out); i++ {
			a, b := out[i-1], out[i]
			if a.UpdatedAt.Before(b.UpdatedAt) || a.UpdatedAt.Equal(b.UpdatedAt) && a.ID <= b.ID {
				t.Fatalf("out of order at %d: %+v then %+v", i, a, b)
			}
		}
		return out
	}
	ids := func(cs []conversations.Conversation) map[string]int {
		m := map[string]int{}
		for _, c := range cs {
			m[c.ID]++
		}
		return m
	}

	t.Run("an owner's list is their runs and explorations alone, newest first", func(t *testing.T) {
		s := newStores(t)
		mine := map[string]bool{}
		for i := range 4 {
			mine[run(t, s, "prs_a")] = true
			mine[exploration(t, s, "prs_a")] = true
			run(t, s, "prs_b")
			exploration(t, s, "anon_c")
			if i == 0 {
				run(t, s, "") // nobody's
				exploration(t, s, "")
			}
		}
		got := all(t, s, "prs_a", 3)
		if len(got) != len(mine) {
			t.Fatalf("got %d entries, want %d: %+v", len(got), len(mine), got)
		}
		for _, c := range got {
			if !mine[c.ID] {
				t.Fatalf("someone else's entry %+v", c)
			}
			switch c.Kind {
			case conversations.KindRun:
				if c.Status != string(runs.Running) {
					t.Fatalf("a run's status: %+v", c)
				}
			case conversations.KindExploration:
				if c.Status != conversations.StatusOpen || c.Title == "" {
					t.Fatalf("an exploration's entry: %+v", c)
				}
			default:
				t.Fatalf("kind %q", c.Kind)
			}
		}
		if got, err := s.List.Conversations(t.Context(), "", conversations.Cursor{}, 10); err != nil || len(got) != 0 {
			t.Fatalf("nobody's list is empty: %+v %v", got, err)
		}
		if got, err := s.List.Conversations(t.Context(), "prs_nobody", conversations.Cursor{}, 10); err != nil || len(got) != 0 {
			t.Fatalf("a stranger's list is empty: %+v %v", got, err)
		}
	})

	t.Run("a run's name and activity; its own exploration is in its entry, not beside it", func(t *testing.T) {
		s := newStores(t)
		older := run(t, s, "prs_a")
		r := run(t, s, "prs_a")
		e := exploration(t, s, "prs_a")
		must(t, s.Runs.SetExploration(t.Context(), r, e))
		must(t, s.Runs.SetTitle(t.Context(), older, "Who holds the marketing DAO"))
		got := all(t, s, "prs_a", 10)
		if len(got) != 2 {
			t.Fatalf("want the two runs alone: %+v", got)
		}
		// Naming is activity: the older run comes first now.
		if got[0].ID != older || got[0].Title != "Who holds the marketing DAO" || got[0].Exploration != "" {
			t.Fatalf("first: %+v", got[0])
		}
		if got[1].ID != r || got[1].Title != "" || got[1].Exploration != e {
			t.Fatalf("second: %+v", got[1])
		}
	})

	t.Run("paging is stable while new entries arrive", func(t *testing.T) {
		s := newStores(t)
		before := map[string]bool{}
		for range 7 {
			before[run(t, s, "prs_a")] = true
			before[exploration(t, s, "prs_a")] = true
		}
		seen := map[string]int{}
		cursor := conversations.Cursor{}
		for {
			page, err := s.List.Conversations(t.Context(), "prs_a", cursor, 4)
			must(t, err)
			for id := range ids(page) {
				seen[id]++
			}
			// New work lands between pages: newer than everything paged,
			// so it is on no later page and moves nothing.
			run(t, s, "prs_a")
			exploration(t, s, "prs_a")
			if len(page) < 4 {
				break
			}
			cursor = conversations.After(page[len(page)-1])
		}
		for id := range before {
			if seen[id] != 1 {
				t.Fatalf("%s seen %d times across the pages", id, seen[id])
			}
		}
		for id, k := range seen {
			if !before[id] || k != 1 {
				t.Fatalf("%s seen %d times, new: %v", id, k, !before[id])
			}
		}
	})
}
