package snapshots

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/petal-near/petal/domain/canon"
)

// The direct writer gives exactly canon.Marshal's bytes.
func TestDirectCanonicalFormEqualsTheGeneralOne(t *testing.T) {
	variants := map[string]func(*Snapshot){
		"sample":     func(*Snapshot) {},
		"nil slices": func(s *Snapshot) { s.Groups, s.Accounts, s.Source.Calls = nil, nil, nil },
		"nil params": func(s *Snapshot) { s.Params = nil },
		"escapes":    func(s *Snapshot) { s.Title = "a \"b\" \\ c\n\t\u0001 <&> \u2028 é 😀" },
		"detail":     func(s *Snapshot) { s.Detail = json.RawMessage(` { "z" : [1.50, 2e3], "a": "\u00e9" } `) },
		"cut and pages": func(s *Snapshot) {
			s.Source.Cut = &Cut{Total: 10, Kept: 2}
			s.Source.Calls[0].Pages = 3
			s.Source.Calls[0].Args = `{"x":1}`
		},
		"attrs of every common type": func(s *Snapshot) {
			s.Accounts[0].Attrs = json.RawMessage(` { "s": "x", "b": true, "n": null, "i": 42, "big": 1152921504606846976, "f": 0.1, "f2": 1e21, "list": ["a"],
				"obj": {"\ufb33": 1, "\ud83d\ude00": 2, "\u20ac": 3}, "ss": {"k": "v"}, "anys": [1.50, "x", null] } `)
		},
		"attrs nested deeper": func(s *Snapshot) { s.Accounts[0].Attrs = json.RawMessage(`{"t":{"A":[{"b":1E2}]}}`) },
		"invalid UTF-8":       func(s *Snapshot) { s.About = "bad \xff byte" },
		"weights":             func(s *Snapshot) { s.Accounts[1].Weight = "0.000000000000000000000001" },
	}
	for name, change := range variants {
		t.Run(name, func(t *testing.T) {
			s := sample()
			s.Accounts = append([]Account(nil), s.Accounts...)
			s.Source.Calls = append([]Call(nil), s.Source.Calls...)
			change(&s)
			want, err := canon.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			_, got, err := Name(s)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("direct:  %s\ngeneral: %s", got, want)
			}
		})
	}
	if _, err := canon.Marshal(math.Inf(1)); err == nil {
		t.Fatal("infinity must not marshal")
	}
}

func FuzzDirectCanonicalForm(f *testing.F) {
	f.Add("title", "alice.near", "1.5", "role", "x")
	f.Fuzz(func(t *testing.T, title, account, weight, group, attr string) {
		s := sample()
		s.Title, s.Groups = title, []Group{{ID: group, Label: group}}
		s.Accounts = []Account{{ID: account, Label: account, Weight: weight, Groups: []string{group}, Attrs: RawAttrs(map[string]string{attr: attr})}}
		want, err := canon.Marshal(s)
		if err != nil {
			return
		}
		_, got, err := Name(s)
		if err != nil || string(got) != string(want) {
			t.Fatalf("direct %s\ngeneral %s (%v)", got, want, err)
		}
	})
}

// canonicalEqual compares piece by piece: equal bytes are equal, and a
// difference anywhere (past the first piece too), a byte more or a byte
// fewer, is not.
func TestCanonicalEqualComparesEveryPiece(t *testing.T) {
	s := sample()
	for i := range 5_000 { // well past one 64 KiB piece
		id := "near:mainnet:a" + strconv.Itoa(i) + ".near"
		s.Accounts = append(s.Accounts, Account{ID: id, Label: id, Weight: "1", Groups: []string{}})
	}
	_, raw, err := Name(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) < 3*flushAt {
		t.Fatalf("too small to need pieces: %d", len(raw))
	}
	if !canonicalEqual(s, raw) {
		t.Fatal("its own canonical form is not equal")
	}
	late := append([]byte(nil), raw...)
	late[2*flushAt+7] ^= 1
	for name, other := range map[string][]byte{"a late byte": late, "one more": append(append([]byte(nil), raw...), ' '), "one fewer": raw[:len(raw)-1]} {
		if canonicalEqual(s, other) {
			t.Fatalf("%s: equal", name)
		}
	}
	c := NewShapeChecker(PostedLimits)
	if _, err := c.Write(raw); err != nil || c.Close() != nil || c.Accounts() != len(s.Accounts) {
		t.Fatalf("counted %d accounts of %d (%v)", c.Accounts(), len(s.Accounts), err)
	}
	got, _, _, err := ParseShapedCounted(raw, c.Accounts())
	if err != nil || len(got.Accounts) != len(s.Accounts) {
		t.Fatalf("parse: %v", err)
	}
}
