package postgres_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// searchFixture writes the sources straight into their tables: the index is
// kept by the database's triggers, which is what these tests check.
type searchFixture struct {
	t   testing.TB
	db  *postgres.DB
	svc *relationsapp.SearchService
	n   int
}

func newSearchFixture(t testing.TB) *searchFixture {
	db := pgtest.New(t).DB
	svc, err := relationsapp.NewSearchService(postgres.NewSearchRepository(db), ports.NoMetrics{})
	if err != nil {
		t.Fatal(err)
	}
	return &searchFixture{t: t, db: db, svc: svc}
}

func (f *searchFixture) exec(sql string, args ...any) {
	f.t.Helper()
	if _, err := f.db.Pool.Exec(context.Background(), sql, args...); err != nil {
		f.t.Fatalf("%s: %v", sql, err)
	}
}

// flower keeps a published flower on map m; it answers the flower's id.
func (f *searchFixture) flower(m, name, about, status string) string {
	f.t.Helper()
	f.n++
	id := hex.EncodeToString(func() []byte { h := sha256.Sum256(fmt.Appendf(nil, "flower %d", f.n)); return h[:] }())
	rec, _ := json.Marshal(map[string]any{"schema": "flower/v1", "about": about, "map": m, "spec": map[string]any{"title": "Members"}})
	var n any
	if name != "" {
		n = name
	}
	f.exec(`INSERT INTO published_flowers (id, network, maker, map, snapshot_sha256, record, name, made_at, published_at, status, came)
VALUES ($1, 'near:mainnet', 'maker.near', $2, $3, $4, $5, now(), now() + make_interval(secs => $6), $7, 'record')`,
		id, m, id, string(rec), n, f.n, status)
	return id
}

func (f *searchFixture) exploration(id, owner, title, question string) {
	f.exec(`INSERT INTO explorations (id, owner, question, title, created_at, updated_at) VALUES ($1, $2, $3, $4, now(), now())`, id, owner, question, title)
}

func (f *searchFixture) note(id, exploration, text string) {
	f.exec(`INSERT INTO exploration_notes (id, exploration, text, created_at) VALUES ($1, $2, $3, now())`, id, exploration, text)
}

func (f *searchFixture) annotation(exploration, owner, id, subject, value string) {
	claim, _ := json.Marshal(map[string]any{"subject": subject, "verb": "noted", "object": map[string]any{"value": value}})
	var exp any
	scope := owner
	if exploration != "" {
		exp, scope = exploration, exploration
	}
	f.exec(`INSERT INTO annotations (scope, exploration, owner, id, subject, verb, claim, added_at) VALUES ($1, $2, $3, $4, $5, 'noted', $6, now())`,
		scope, exp, owner, id, subject, string(claim))
}

func (f *searchFixture) search(subject string, in relationsapp.SearchPetalsInput) relationsapp.PetalSearchAnswer {
	f.t.Helper()
	ans, err := f.svc.Search(context.Background(), toolkit.Caller{Subject: subject}, in)
	if err != nil {
		f.t.Fatalf("search %+v: %v", in, err)
	}
	return ans
}

func hitIDs(a relationsapp.PetalSearchAnswer) []string {
	out := []string{}
	for _, r := range a.Results {
		out = append(out, r.Kind+":"+r.ID)
	}
	return out
}

func TestSearchRanksTitlesFirstAndReadsTheLastWordAsAPrefix(t *testing.T) {
	f := newSearchFixture(t)
	strong := f.flower("near:mainnet:marketing.sputnik-dao.near", "Marketing council", "who votes in the marketing DAO", "ok")
	weak := f.flower("near:mainnet:pool.near", "Delegators", "a pool that pays the marketing team once", "ok")
	missing := f.flower("near:mainnet:ghost.near", "Marketing ghost", "its snapshot isn't here", "snapshot_missing")

	got := f.search("", relationsapp.SearchPetalsInput{Q: "marketing", Kinds: "flower"})
	if want := []string{"flower:" + strong, "flower:" + weak}; !slices.Equal(hitIDs(got), want) {
		t.Fatalf("marketing: %v, want %v (the named one first; %s has no snapshot here)", hitIDs(got), want, missing)
	}
	if got.Results[0].Snippet == "" || got.Results[0].Map == nil || *got.Results[0].Map != "near:mainnet:marketing.sputnik-dao.near" {
		t.Fatalf("first result: %+v", got.Results[0])
	}
	if r := f.search("", relationsapp.SearchPetalsInput{Q: "the marketing te", Kinds: "flower"}); !slices.Equal(hitIDs(r), []string{"flower:" + weak}) {
		t.Fatalf("prefix te: %v", hitIDs(r))
	}
	for _, q := range []string{"mark", "Marketing Cou", "sputnik-d", "marketing.sputnik-dao.ne", "sputnik"} {
		r := f.search("", relationsapp.SearchPetalsInput{Q: q, Kinds: "map"})
		if len(r.Results) == 0 || r.Results[0].ID != "near:mainnet:marketing.sputnik-dao.near" {
			t.Fatalf("%q: %v", q, hitIDs(r))
		}
	}
	if r := f.search("", relationsapp.SearchPetalsInput{Q: "mark "}); len(r.Results) != 0 {
		t.Fatalf("a word followed by a space is whole: %v", hitIDs(r))
	}
	if r := f.search("", relationsapp.SearchPetalsInput{Q: "marketing -pool"}); slices.Contains(hitIDs(r), "flower:"+weak) {
		t.Fatalf("-pool: %v", hitIDs(r))
	}
}

func TestSearchFindsAPersonsOwnWorkForThemAlone(t *testing.T) {
	f := newSearchFixture(t)
	f.exploration("exp_a", "prs_alice", "Treasury", "who holds the treasury keys")
	f.note("note_a", "exp_a", "the treasurer is bob.near, ask about quorum")
	f.annotation("exp_a", "", "claim_a", "near:mainnet:bob.near", "treasurer of the guild")
	f.annotation("", "prs_alice", "claim_b", "near:mainnet:carol.near", "treasurer emerita")
	f.exploration("exp_anon", "anon_x", "", "treasury of the anon")

	alice := f.search("prs_alice", relationsapp.SearchPetalsInput{Q: "treasur"})
	want := []string{"annotation:claim_a", "annotation:claim_b", "exploration:exp_a", "note:note_a"}
	if got := hitIDs(alice); !slices.Equal(sorted(got), want) {
		t.Fatalf("alice finds %v, want %v", got, want)
	}
	for _, other := range []string{"", "prs_bob", "anon_y"} {
		if got := f.search(other, relationsapp.SearchPetalsInput{Q: "treasur"}); len(got.Results) != 0 {
			t.Fatalf("%q finds %v", other, hitIDs(got))
		}
	}
	if got := hitIDs(f.search("prs_alice", relationsapp.SearchPetalsInput{Q: "treasur", Kinds: "note"})); !slices.Equal(got, []string{"note:note_a"}) {
		t.Fatalf("kinds=note: %v", got)
	}
	if got := hitIDs(f.search("anon_x", relationsapp.SearchPetalsInput{Q: "treasury"})); !slices.Equal(got, []string{"exploration:exp_anon"}) {
		t.Fatalf("anon_x: %v", got)
	}

	// Sign-in moves an anonymous owner's exploration to the person; its notes follow.
	f.note("note_anon", "exp_anon", "treasury multisig")
	f.exec(`UPDATE explorations SET owner = 'prs_dan' WHERE owner = 'anon_x'`)
	if got := f.search("anon_x", relationsapp.SearchPetalsInput{Q: "treasury"}); len(got.Results) != 0 {
		t.Fatalf("the old owner still finds %v", hitIDs(got))
	}
	if got := hitIDs(f.search("prs_dan", relationsapp.SearchPetalsInput{Q: "treasury"})); !slices.Equal(sorted(got), []string{"exploration:exp_anon", "note:note_anon"}) {
		t.Fatalf("prs_dan: %v", got)
	}
	// A note deleted, an exploration deleted: gone from the index.
	f.exec(`DELETE FROM exploration_notes WHERE id = 'note_anon'`)
	f.exec(`DELETE FROM explorations WHERE id = 'exp_a'`)
	if got := hitIDs(f.search("prs_alice", relationsapp.SearchPetalsInput{Q: "treasur"})); !slices.Equal(got, []string{"annotation:claim_b"}) {
		t.Fatalf("after deletes: %v", got)
	}
}

func TestSearchNeverAnswersAHiddenMap(t *testing.T) {
	f := newSearchFixture(t)
	hidden := f.flower("near:testnet:hidden-example.sputnikv2.testnet", "Hidden council", "a council", "ok")
	shown := f.flower("near:testnet:shown.sputnikv2.testnet", "Shown council", "a council", "ok")
	got := hitIDs(f.search("", relationsapp.SearchPetalsInput{Q: "council"}))
	if slices.Contains(got, "flower:"+hidden) || slices.Contains(got, "map:near:testnet:hidden-example.sputnikv2.testnet") {
		t.Fatalf("a hidden map answered: %v", got)
	}
	if !slices.Contains(got, "flower:"+shown) || !slices.Contains(got, "map:near:testnet:shown.sputnikv2.testnet") {
		t.Fatalf("the shown map is missing: %v", got)
	}
	if got := f.search("", relationsapp.SearchPetalsInput{Q: "hidden-example"}); len(got.Results) != 0 {
		t.Fatalf("by its id: %v", hitIDs(got))
	}
}

func TestSearchPagesEveryHitOnce(t *testing.T) {
	f := newSearchFixture(t)
	for i := range 7 {
		f.flower(fmt.Sprintf("near:mainnet:dao%d.near", i), fmt.Sprintf("Guild %d", i), "guild guild members", "ok")
	}
	var all []string
	cursor := ""
	for page := 0; ; page++ {
		a := f.search("", relationsapp.SearchPetalsInput{Q: "guild", Limit: 3, Cursor: cursor})
		all = append(all, hitIDs(a)...)
		if a.NextCursor == nil {
			break
		}
		if page > 10 {
			t.Fatal("pages never end")
		}
		cursor = *a.NextCursor
	}
	if len(all) != 14 || len(slices.Compact(sorted(all))) != 14 {
		t.Fatalf("14 hits (7 maps, 7 flowers) once each, got %d: %v", len(all), all)
	}
}

func TestSearchRefusesBadInput(t *testing.T) {
	f := newSearchFixture(t)
	for _, in := range []relationsapp.SearchPetalsInput{
		{Q: ""}, {Q: "   "}, {Q: "-- ..."}, {Q: "a", Kinds: "map,person"}, {Q: "a", Limit: 51}, {Q: "a", Cursor: "!!"},
		{Q: string(make([]rune, 301))},
	} {
		_, err := f.svc.Search(context.Background(), toolkit.Caller{}, in)
		if !errs.Is(err, errs.BadInput) {
			t.Errorf("%+v: %v, want bad_input", in, err)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
