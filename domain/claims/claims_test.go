package claims_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/petal-near/petal/domain/claims"
	"github.com/petal-near/petal/domain/errs"
)

func TestAClaimIsNamedByItsContent(t *testing.T) {
	in := claims.Input{Subject: "near:mainnet:alice.near", Verb: "named", Object: json.RawMessage(`{ "value" : " Ann " }`), Kind: claims.Stated}
	a, err := claims.Make(0, in, "near:mainnet:me.near", "")
	if err != nil {
		t.Fatal(err)
	}
	in.Object = json.RawMessage(`{"value":"Ann"}`)
	b, _ := claims.Make(3, in, "near:mainnet:me.near", "")
	if a.ID != b.ID || !claims.ValidID(a.ID) || string(a.Object) != `{"value":"Ann"}` || string(a.Evidence) != `[]` {
		t.Fatalf("the same claim, two ids: %+v %+v", a, b)
	}
	c, _ := claims.Make(0, in, "near:mainnet:you.near", "")
	if c.ID == a.ID {
		t.Fatal("who answers for it is part of its content")
	}
	if got := claims.Names([]claims.Claim{a, c}); got["near:mainnet:alice.near"] != "Ann" {
		t.Fatalf("names: %v", got)
	}
}

func TestAClaimsRefusalsNameTheField(t *testing.T) {
	ok := claims.Input{Subject: "near:mainnet:alice.near", Verb: "noted", Object: json.RawMessage(`{"value":"x"}`), Kind: claims.Stated}
	for name, change := range map[string]func(*claims.Input){
		"subject": func(in *claims.Input) { in.Subject = "alice.near" },
		"verb":    func(in *claims.Input) { in.Verb = "Named!" },
		"kind":    func(in *claims.Input) { in.Kind = "rumoured" },
		"object":  func(in *claims.Input) { in.Object = json.RawMessage(`"just text"`) },
		"value":   func(in *claims.Input) { in.Object = json.RawMessage(`{"value":""}`) },
		"extra":   func(in *claims.Input) { in.Object = json.RawMessage(`{"value":"x","who":"y"}`) },
		"big": func(in *claims.Input) {
			in.Verb, in.Object = "said", json.RawMessage(`{"x":"`+strings.Repeat("a", claims.MaxObjectBytes)+`"}`)
		},
		"evidence": func(in *claims.Input) { in.Evidence = json.RawMessage(`{"url":"x"}`) },
		"many": func(in *claims.Input) {
			in.Evidence = json.RawMessage(`[` + strings.Repeat(`1,`, claims.MaxEvidence) + `1]`)
		},
	} {
		in := ok
		change(&in)
		if _, err := claims.Make(2, in, "near:mainnet:me.near", ""); !errs.Is(err, errs.BadInput) || !strings.Contains(err.Error(), "annotations/2/") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestTheShippedSiteClaimsLoad(t *testing.T) {
	raw, err := os.ReadFile("../../app/relationsapp/site-claims.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := claims.ParsePublished(raw)
	if err != nil || len(got) == 0 {
		t.Fatalf("%d claims, %v", len(got), err)
	}
}

// published is a valid claim/v3 changed by change, named again unless keepID.
func published(t *testing.T, change func(*claims.Published), keepID bool) []byte {
	t.Helper()
	p := claims.Published{Schema: claims.SchemaV3, Subject: "near:mainnet:a.near", Verb: claims.VerbSameOwner,
		Object: json.RawMessage(`{"account":"near:mainnet:b.near"}`), Kind: claims.Inferred, By: "petals", IssuedAt: "2026-11-11T12:00:00Z",
		Evidence: []claims.Evidence{{Type: "tx", Ref: "9xQ"}}, Method: "funding-graph@1", Qualifiers: &claims.Qualifiers{Confidence: "high"}}
	p.ID, _ = claims.NamePublished(p)
	change(&p)
	if !keepID {
		p.ID, _ = claims.NamePublished(p)
	}
	b, _ := json.Marshal([]claims.Published{p})
	return b
}

func TestASiteClaimNamingAPersonIsRefusedAtLoad(t *testing.T) {
	if _, err := claims.ParsePublished(published(t, func(*claims.Published) {}, false)); err != nil {
		t.Fatalf("a good claim: %v", err)
	}
	for name, change := range map[string]func(*claims.Published){
		"named": func(p *claims.Published) { p.Verb, p.Object = "named", json.RawMessage(`{"value":"Dekan"}`) },
		"free text": func(p *claims.Published) {
			p.Object = json.RawMessage(`{"account":"near:mainnet:b.near","name":"Dekan"}`)
		},
		"a person's id": func(p *claims.Published) { p.Subject = "near:mainnet:prs_ab12" },
		"a person's by": func(p *claims.Published) { p.By = "near:mainnet:erin.near" },
		"an unknown is": func(p *claims.Published) { p.Verb, p.Object = "is", json.RawMessage(`{"value":"person"}`) },
		"stated":        func(p *claims.Published) { p.Kind, p.Method, p.Qualifiers = "stated", "", nil },
		"no method":     func(p *claims.Published) { p.Method = "" },
		"no evidence":   func(p *claims.Published) { p.Evidence = nil },
		"evidence":      func(p *claims.Published) { p.Evidence = []claims.Evidence{{Type: "rumour", Ref: "x"}} },
		"schema":        func(p *claims.Published) { p.Schema = "claim/v2" },
		"issued_at":     func(p *claims.Published) { p.IssuedAt = "yesterday" },
	} {
		if _, err := claims.ParsePublished(published(t, change, false)); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	if _, err := claims.ParsePublished(published(t, func(p *claims.Published) { p.Object = json.RawMessage(`{"account":"near:mainnet:c.near"}`) }, true)); err == nil ||
		!strings.Contains(err.Error(), "id must be") {
		t.Errorf("a claim changed under its id: %v", err)
	}
	if _, err := claims.ParsePublished([]byte(`[{"schema":"claim/v3","note":"x"}]`)); err == nil {
		t.Error("an unknown field loaded")
	}
}
