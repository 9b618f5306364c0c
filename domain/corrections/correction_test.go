package corrections

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/errs"
)

var update = flag.Bool("update", false, "rewrite docs/schemas/correction-v1.schema.json")

func TestPublishedSchemaIsTheOneHere(t *testing.T) {
	const path = "../../docs/schemas/correction-v1.schema.json"
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(JSONSchema), 0o644))
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./domain/corrections -update to write it")
	assert.Equal(t, JSONSchema, string(got))
	var s map[string]any
	require.NoError(t, json.Unmarshal(got, &s))
}

func good() Correction {
	return Correction{Schema: Schema, Flower: strings.Repeat("a", 64), Kind: StaleReading, Reason: "the council changed in November",
		Evidence: Evidence{Wrong: "carol.near sits on the council", Right: "carol.near left; dan.near joined",
			Links: []string{"https://nearblocks.io/txns/abc"}},
		MadeBy: "alice.near", MadeAt: "2026-11-30T12:00:00Z"}
}

func TestAGoodCorrectionParsesToItsOwnID(t *testing.T) {
	id, canonical, err := good().Canonical()
	require.NoError(t, err)
	assert.Equal(t, canon.Sum(canonical), id)
	c, gotID, again, problems := Parse(canonical)
	require.Empty(t, problems)
	assert.Equal(t, id, gotID)
	assert.Equal(t, canonical, again)
	assert.Equal(t, good(), c)

	// Other spacing and member order: the same record, the same id.
	var m map[string]any
	require.NoError(t, json.Unmarshal(canonical, &m))
	pretty, _ := json.MarshalIndent(m, "", "  ")
	_, id2, _, problems := Parse(pretty)
	require.Empty(t, problems)
	assert.Equal(t, id, id2)

	// No links and a subject are fine; a nil list is written [].
	c = good()
	c.Evidence.Links, c.Subject = nil, "near:mainnet:carol.near"
	_, canonical, err = c.Canonical()
	require.NoError(t, err)
	assert.Contains(t, string(canonical), `"links":[]`)
	_, _, _, problems = Parse(canonical)
	assert.Empty(t, problems)
}

func TestCheckRefusesWhatACorrectionMayNotBe(t *testing.T) {
	cases := map[string]func(c *Correction){
		"/schema":           func(c *Correction) { c.Schema = "correction/v2" },
		"/flower":           func(c *Correction) { c.Flower = "ABC" },
		"/kind":             func(c *Correction) { c.Kind = "wrong" },
		"/reason":           func(c *Correction) { c.Reason = strings.Repeat("x", MaxReason+1) },
		"/evidence/wrong":   func(c *Correction) { c.Evidence.Wrong = "   " },
		"/evidence/right":   func(c *Correction) { c.Evidence.Right = "two\nlines" },
		"/evidence/links":   func(c *Correction) { c.Evidence.Links = make([]string, MaxLinks+1) },
		"/evidence/links/0": func(c *Correction) { c.Evidence.Links = []string{"javascript:alert(1)"} },
		"/subject":          func(c *Correction) { c.Subject = "alice" },
		"/made_by":          func(c *Correction) { c.MadeBy = "Alice!" },
		"/made_at":          func(c *Correction) { c.MadeAt = "2026-11-30T12:00:00+01:00" },
	}
	for path, spoil := range cases {
		c := good()
		spoil(&c)
		problems := Check(c)
		require.NotEmpty(t, problems, path)
		assert.Equal(t, path, problems[0].Path)
	}
	assert.Empty(t, Check(good()))
	// A reason at its limit, in four-byte characters, is fine.
	c := good()
	c.Reason = strings.Repeat("🌸", MaxReason)
	assert.Empty(t, Check(c))
}

func TestLinks(t *testing.T) {
	for _, ok := range []string{"https://nearblocks.io/txns/abc", "https://example.org", "https://a.b/c?d=e#f"} {
		assert.Empty(t, CheckLink(ok), ok)
	}
	for _, bad := range []string{"", "http://example.org", "javascript:alert(1)", "data:text/html,hi", "https://", "https:example.org",
		"https://user:pw@example.org/", "https://example.org/a b", "https://exämple.org", "https://example.org/" + strings.Repeat("a", MaxLinkSize)} {
		assert.NotEmpty(t, CheckLink(bad), bad)
	}
}

func TestParseIsStrict(t *testing.T) {
	_, canonical, _ := good().Canonical()
	for name, raw := range map[string]string{
		"unknown member":  strings.Replace(string(canonical), `{"evidence"`, `{"extra":1,"evidence"`, 1),
		"duplicate":       strings.Replace(string(canonical), `{"evidence"`, `{"kind":"other","evidence"`, 1),
		"trailing":        string(canonical) + " {}",
		"no evidence":     `{"schema":"correction/v1","flower":"` + strings.Repeat("a", 64) + `","kind":"other","reason":"r","made_by":"alice.near","made_at":"2026-11-30T12:00:00Z"}`,
		"links missing":   strings.Replace(string(canonical), `"links":["https://nearblocks.io/txns/abc"],`, ``, 1),
		"empty subject":   strings.Replace(string(canonical), `"schema"`, `"subject":"","schema"`, 1),
		"not an object":   `[]`,
		"too big":         `{"reason":"` + strings.Repeat("x", MaxRecordBytes) + `"}`,
		"a link too many": strings.Replace(string(canonical), `"links":[`, `"links":[`+strings.Repeat(`"https://a.b",`, MaxLinks), 1),
	} {
		_, _, _, problems := Parse([]byte(raw))
		assert.NotEmpty(t, problems, name)
	}
	e := Invalid([]errs.Problem{{Path: "/kind", Message: "must be one of …"}})
	assert.Contains(t, e.Message, "/kind")
}

func TestKeys(t *testing.T) {
	id := strings.Repeat("a", 64)
	account, got, ok := ParseKey(KeyPath("alice.near", id))
	assert.True(t, ok)
	assert.Equal(t, "alice.near", account)
	assert.Equal(t, id, got)
	for _, bad := range []string{"alice.near/petal/flower/" + id, "alice.near/petal/correction/xyz", "Alice/petal/correction/" + id} {
		_, _, ok := ParseKey(bad)
		assert.False(t, ok, bad)
	}
}

func TestEveryKindHasItsWords(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Kinds {
		l := KindLabel(k)
		if l == "" || seen[l] {
			t.Fatalf("kind %s is said as %q", k, l)
		}
		seen[l] = true
	}
	if KindLabel("unheard_of") != KindLabel(Other) {
		t.Fatal("an unknown kind is not said as a correction")
	}
}
