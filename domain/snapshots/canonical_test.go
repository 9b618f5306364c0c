package snapshots

import (
	"encoding/json"
	"math"
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
			s.Accounts[0].Attrs = map[string]any{
				"s": "x", "b": true, "n": nil, "i": 42, "big": int64(1) << 60, "f": 0.1, "f2": 1e21, "list": []string{"a"},
				"obj": map[string]any{"\ufb33": 1, "\U0001F600": 2, "\u20ac": 3}, "ss": map[string]string{"k": "v"}, "anys": []any{1.5, "x", nil},
			}
		},
		"an attribute of another type": func(s *Snapshot) { s.Accounts[0].Attrs = map[string]any{"t": struct{ A int }{1}} },
		"invalid UTF-8":                func(s *Snapshot) { s.About = "bad \xff byte" },
		"weights":                      func(s *Snapshot) { s.Accounts[1].Weight = "0.000000000000000000000001" },
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
		s.Accounts = []Account{{ID: account, Label: account, Weight: weight, Groups: []string{group}, Attrs: map[string]any{attr: attr}}}
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
