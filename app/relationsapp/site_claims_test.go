package relationsapp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/domain/claims"
	"github.com/petal-near/petal/domain/errs"
)

// oneMap is a map with one reading: what the map's service answers.
type oneMap struct{}

func (oneMap) MapAccounts(_ context.Context, id string) (string, []string, error) {
	if id != "near:mainnet:dao.near" {
		return "", nil, errs.New(errs.NotFound, "no map")
	}
	return id, []string{"near:mainnet:a.near", "near:mainnet:b.near"}, nil
}

func siteClaim(t *testing.T, subject, verb, object, issued string) claims.Published {
	t.Helper()
	p := claims.Published{Schema: claims.SchemaV3, Subject: subject, Verb: verb, Object: json.RawMessage(object), Kind: claims.Observed,
		By: "petals", IssuedAt: issued, Evidence: []claims.Evidence{{Type: "call", Ref: "dao.near get_policy"}}}
	var err error
	if p.ID, err = claims.NamePublished(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSiteClaimsAreTheMapsAccountsOldestFirst(t *testing.T) {
	file, _ := json.Marshal([]claims.Published{
		siteClaim(t, "near:mainnet:b.near", claims.VerbFundedBy, `{"account":"near:mainnet:a.near"}`, "2026-11-10T00:00:00Z"),
		siteClaim(t, "near:mainnet:elsewhere.near", claims.VerbIs, `{"value":"exchange"}`, "2026-11-01T00:00:00Z"),
		siteClaim(t, "near:mainnet:dao.near", claims.VerbIs, `{"value":"dao"}`, "2026-11-02T00:00:00Z"),
	})
	s, err := relationsapp.LoadSiteClaims(file)
	if err != nil {
		t.Fatal(err)
	}
	s.ReadMapsFrom(oneMap{})
	got, err := s.ForMap(t.Context(), "near:mainnet:dao.near")
	if err != nil || len(got.Claims) != 2 || got.Claims[0].Subject != "near:mainnet:dao.near" || got.Claims[1].Subject != "near:mainnet:b.near" {
		t.Fatalf("got %+v, %v", got, err)
	}
	if _, err := s.ForMap(t.Context(), "near:mainnet:elsewhere.near"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("a map that isn't on the map: %v", err)
	}

	named := siteClaim(t, "near:mainnet:a.near", claims.VerbIs, `{"value":"dao"}`, "2026-11-02T00:00:00Z")
	named.Verb, named.Object = claims.VerbNamed, json.RawMessage(`{"value":"Dekan"}`)
	named.ID, _ = claims.NamePublished(named)
	bad, _ := json.Marshal([]claims.Published{named})
	if _, err := relationsapp.LoadSiteClaims(bad); err == nil {
		t.Fatal("a claim naming a person loaded")
	}
	if _, err := relationsapp.NewSiteClaims(); err != nil {
		t.Fatalf("the shipped claims: %v", err)
	}
}
