package published

import (
	"strings"
	"testing"

	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/specs"
)

const snap = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

func sample() Flower {
	return Flower{
		Schema: Schema,
		Spec: specs.Spec{Schema: specs.SpecSchema, Snapshot: snap, Title: "Marketing DAO",
			Petals: specs.Petals{Top: 12, Groups: []string{}}, Size: "weight", Colour: "group", Labels: "name", Order: "weight", Others: "fold"},
		Snapshot: snap, Name: "Who runs marketing", About: "Sputnik DAO members on NEAR",
		Map: "near:mainnet:marketing.sputnik-dao.near", MadeBy: "alice.near", MadeAt: "2026-11-30T12:00:00Z",
	}
}

func TestParseRoundTripsAndNamesTheCanonicalForm(t *testing.T) {
	id, canonical, err := sample().Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if id != canon.Sum(canonical) {
		t.Fatal("id is not the SHA-256 of the canonical bytes")
	}
	f, gotID, gotCanon, problems := Parse(canonical)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	if gotID != id || string(gotCanon) != string(canonical) || f.Name != "Who runs marketing" {
		t.Fatalf("round trip changed the record: %s %s", gotID, gotCanon)
	}
	// Other spacing and member order: the same flower.
	spaced := strings.Replace(string(canonical), `{"about"`, `{ "about" `, 1)
	if _, id2, _, p := Parse([]byte(spaced)); len(p) > 0 || id2 != id {
		t.Fatalf("spaced: %v %s", p, id2)
	}
}

func TestParseRefuses(t *testing.T) {
	_, canonical, _ := sample().Canonical()
	good := string(canonical)
	cases := map[string]struct{ raw, path string }{
		"a member twice":      {strings.Replace(good, `{"about":`, `{"about":"x","about":`, 1), ""},
		"an unknown member":   {strings.Replace(good, `{"about":`, `{"colour":"red","about":`, 1), ""},
		"trailing data":       {good + ` {}`, ""},
		"no map":              {strings.Replace(good, `"map":"near:mainnet:marketing.sputnik-dao.near",`, ``, 1), "/map"},
		"a bad map":           {strings.Replace(good, `near:mainnet:marketing.sputnik-dao.near`, `marketing`, 1), "/map"},
		"an upper-case EVM":   {strings.Replace(good, `near:mainnet:marketing.sputnik-dao.near`, `eip155:100:0xABCDEF0123456789abcdef0123456789abcdef01`, 1), "/map"},
		"a name too long":     {strings.Replace(good, `Who runs marketing`, strings.Repeat("é", 81), 1), "/name"},
		"a name with a break": {strings.Replace(good, `Who runs marketing`, `Who\nruns`, 1), "/name"},
		"an empty name":       {strings.Replace(good, `"Who runs marketing"`, `""`, 1), "/name"},
		"another snapshot":    {strings.Replace(good, `"snapshot":"`+snap+`","spec"`, `"snapshot":"`+strings.Repeat("b", 64)+`","spec"`, 1), "/snapshot"},
		"a bad spec":          {strings.Replace(good, `"top":12`, `"top":0`, 1), "/spec/petals/top"},
		"a bad maker":         {strings.Replace(good, `alice.near`, `Alice`, 1), "/made_by"},
		"a time not in UTC":   {strings.Replace(good, `2026-11-30T12:00:00Z`, `2026-11-30T12:00:00+01:00`, 1), "/made_at"},
		"another schema":      {strings.Replace(good, `"flower/v1"`, `"flower/v2"`, 1), "/schema"},
		"not an object":       {`"flower"`, ""},
		"far too many bytes":  {`{"about":"` + strings.Repeat("x", MaxRecordBytes) + `"}`, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, _, problems := Parse([]byte(c.raw))
			if len(problems) == 0 {
				t.Fatal("accepted")
			}
			if problems[0].Path != c.path {
				t.Fatalf("first problem at %q, want %q: %v", problems[0].Path, c.path, problems)
			}
		})
	}
}

func TestMaps(t *testing.T) {
	for _, ok := range []string{"near:mainnet:marketing.sputnik-dao.near", "near:testnet:population", "eip155:100:0xabcdef0123456789abcdef0123456789abcdef01"} {
		if _, _, good := SplitMap(ok); !good {
			t.Errorf("%s refused", ok)
		}
	}
	for _, bad := range []string{"", "near:mainnet", "near:mainnet:", "near:mainnet:Bad.near", "x:y:z", "near:mainnet:a b"} {
		if _, _, good := SplitMap(bad); good {
			t.Errorf("%q accepted", bad)
		}
	}
	if got := MapOf("near:mainnet", []byte(`{"dao":"marketing.sputnik-dao.near","chain":"near:mainnet"}`)); got != "near:mainnet:marketing.sputnik-dao.near" {
		t.Error(got)
	}
	if got := MapOf("eip155:100", []byte(`{"token":"0xABCDEF0123456789abcdef0123456789abcdef01"}`)); got != "eip155:100:0xabcdef0123456789abcdef0123456789abcdef01" {
		t.Error(got)
	}
	if got := MapOf("near:testnet", []byte(`{}`)); got != "near:testnet:population" {
		t.Error(got)
	}
}

func TestCursor(t *testing.T) {
	c := Cursor{At: mustTime("2026-11-30T12:00:00.123456Z"), Key: strings.Repeat("c", 64)}
	got, err := ParseCursor(c.String())
	if err != nil || !got.At.Equal(c.At) || got.Key != c.Key {
		t.Fatalf("%v %v", got, err)
	}
	m := Cursor{At: c.At, Key: "near:mainnet:population"}
	if got, err := ParseCursor(m.String()); err != nil || got.Key != m.Key {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"x", "MS4x", strings.Repeat("a", 500)} {
		if _, err := ParseCursor(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSpecNameIsTheSpecsName(t *testing.T) {
	f := sample()
	_, canonical, err := f.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := specs.Name(f.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := SpecName(canonical); err != nil || got != want {
		t.Fatalf("%s %v, want %s", got, err, want)
	}
}
