package snapshots

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/petal-near/petal/domain/errs"
)

func sample() Snapshot {
	return Snapshot{
		Schema:  Schema,
		Network: "near-dao-members",
		Params:  json.RawMessage(`{"dao":"marketing.sputnik-dao.near","chain":"near:mainnet"}`),
		Chain:   Mainnet,
		Block:   Block{Height: 131_000_000, Hash: "9z1Kb3kNJHqRkN4vDt1ZK4DfwN5yLnWs7pF9vJ8Tq2aX", Time: "2026-11-01T12:00:00Z"},
		Title:   "Members of marketing.sputnik-dao.near",
		About:   "Who holds a role in the marketing DAO.",
		Groups:  []Group{{ID: "council", Label: "Council"}, {ID: "all", Label: "All"}},
		Accounts: []Account{
			{ID: "near:mainnet:alice.near", Label: "alice.near", Weight: "1", Groups: []string{"council"}},
			{ID: "near:mainnet:bob.near", Label: "bob.near", Weight: "2.5", Groups: []string{}, Attrs: json.RawMessage(`{"note":"x"}`)},
		},
		Source: Source{Calls: []Call{{Contract: "marketing.sputnik-dao.near", Method: "get_policy"}}},
	}
}

func TestNameIsStableAndOrderFree(t *testing.T) {
	s := sample()
	sha1, c1, err := Name(s)
	if err != nil {
		t.Fatal(err)
	}
	// The same params written in another order and spacing name the same reading.
	s.Params = json.RawMessage(`{ "chain":"near:mainnet", "dao":"marketing.sputnik-dao.near" }`)
	sha2, c2, err := Name(s)
	if err != nil {
		t.Fatal(err)
	}
	if sha1 != sha2 || string(c1) != string(c2) {
		t.Fatalf("same reading, two names: %s %s", sha1, sha2)
	}
	if !strings.HasPrefix(string(c1), `{"about":"Who holds`) {
		t.Fatalf("canonical form does not start with the sorted first key: %.40s", c1)
	}
	s.Accounts[1].Weight = "2.50"
	if sha3, _, _ := Name(s); sha3 == sha1 {
		t.Fatal("a different weight text must give a different name")
	}
}

func TestParseNamesTheBytesAsSent(t *testing.T) {
	sha, canonical, _ := Name(sample())
	s, gotSHA, gotCanonical, err := Parse(canonical)
	if err != nil {
		t.Fatal(err)
	}
	if gotSHA != sha || string(gotCanonical) != string(canonical) || s.Title != sample().Title {
		t.Fatalf("parse of canonical bytes: %s vs %s", gotSHA, sha)
	}
	// An unknown field would be dropped by decoding, so it is refused.
	withExtra := strings.Replace(string(canonical), `{"about"`, `{"extra":1,"about"`, 1)
	if _, _, _, err := Parse([]byte(withExtra)); !errs.Is(err, errs.BadInput) || !strings.Contains(err.Error(), "extra") {
		t.Fatalf("unknown field: %v", err)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Snapshot)
		path   string
	}{
		{"wrong schema", func(s *Snapshot) { s.Schema = "snapshot/v2" }, "/schema"},
		{"network id", func(s *Snapshot) { s.Network = "Near DAO" }, "/network"},
		{"params not an object", func(s *Snapshot) { s.Params = json.RawMessage(`[1]`) }, "/params"},
		{"chain", func(s *Snapshot) { s.Chain = "mainnet" }, "/chain"},
		{"block time", func(s *Snapshot) { s.Block.Time = "yesterday" }, "/block/time"},
		{"empty title", func(s *Snapshot) { s.Title = " " }, "/title"},
		{"float weight", func(s *Snapshot) { s.Accounts[0].Weight = "1e3" }, "/accounts/0/weight"},
		{"negative weight", func(s *Snapshot) { s.Accounts[0].Weight = "-1" }, "/accounts/0/weight"},
		{"leading zero weight", func(s *Snapshot) { s.Accounts[0].Weight = "01" }, "/accounts/0/weight"},
		{"account on another chain", func(s *Snapshot) { s.Accounts[1].ID = "near:testnet:bob.testnet" }, "/accounts/1/id"},
		{"bad NEAR account", func(s *Snapshot) { s.Accounts[1].ID = "near:mainnet:Bob..near" }, "/accounts/1/id"},
		{"account twice", func(s *Snapshot) { s.Accounts[1].ID = s.Accounts[0].ID }, "/accounts/1/id"},
		{"unknown group", func(s *Snapshot) { s.Accounts[0].Groups = []string{"council", "ghosts"} }, "/accounts/0/groups/1"},
		{"group twice", func(s *Snapshot) { s.Groups = append(s.Groups, Group{ID: "all"}) }, "/groups/2/id"},
		{"null groups on an account", func(s *Snapshot) { s.Accounts[0].Groups = nil }, "/accounts/0/groups"},
		{"no source calls", func(s *Snapshot) { s.Source.Calls = nil }, "/source/calls"},
		{"cut that doesn't match", func(s *Snapshot) { s.Source.Cut = &Cut{Total: 10, Kept: 5} }, "/source/cut"},
	}
	if ps := Validate(sample()); len(ps) != 0 {
		t.Fatalf("sample is valid, got %v", ps)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := sample()
			s.Accounts = append([]Account(nil), s.Accounts...)
			tc.change(&s)
			ps := Validate(s)
			if len(ps) == 0 || ps[0].Path != tc.path {
				t.Fatalf("want a problem at %s, got %v", tc.path, ps)
			}
		})
	}
}

func TestValidateBoundsAccounts(t *testing.T) {
	s := sample()
	s.Accounts = make([]Account, MaxAccounts+1)
	for i := range s.Accounts {
		s.Accounts[i] = Account{ID: fmt.Sprintf("near:mainnet:a%d.near", i), Weight: "1", Groups: []string{}}
	}
	ps := Validate(s)
	if len(ps) == 0 || ps[len(ps)-1].Path != "/accounts" || !strings.Contains(ps[len(ps)-1].Message, "at most 100000") {
		t.Fatalf("want the account bound, got %v", ps)
	}
	// Many broken accounts give a short answer.
	s.Accounts = s.Accounts[:MaxAccounts]
	for i := range s.Accounts {
		s.Accounts[i].Weight = "x"
	}
	if ps := Validate(s); len(ps) != maxProblems {
		t.Fatalf("want %d problems at most, got %d", maxProblems, len(ps))
	}
}

func TestTargetKey(t *testing.T) {
	k, err := TargetKey("near-dao-members", json.RawMessage(`{"dao":"a.sputnik-dao.near","chain":"near:mainnet"}`))
	if err != nil || k != `near-dao-members{"chain":"near:mainnet","dao":"a.sputnik-dao.near"}` {
		t.Fatalf("got %q, %v", k, err)
	}
	if k, _ := TargetKey("some-network", json.RawMessage(`{}`)); k != "some-network" {
		t.Fatalf("no params: %q", k)
	}
}
