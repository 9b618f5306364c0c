package specs

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

// compileSchema compiles a published schema with an independent JSON Schema
// validator, so ParseSpec is held to the schema people read.
func compileSchema(t testing.TB, url, schema string) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource(url, doc))
	s, err := c.Compile(url)
	require.NoError(t, err)
	return s
}

// FuzzSchemaAgreesWithParse: for any single JSON value, the published
// flower-spec/v1 and view/v1 schemas and the hand-written checks accept and
// refuse the same documents.
func FuzzSchemaAgreesWithParse(f *testing.F) {
	specSchema := compileSchema(f, "https://petal.near/schemas/flower-spec-v1.schema.json", SpecJSONSchema)
	viewSchema := compileSchema(f, "https://petal.near/schemas/view-v1.schema.json", ViewJSONSchema)
	base, _ := json.Marshal(mustPropose(f))
	f.Add(base)
	// Each seed is the proposal with one member changed, at the top or in petals.
	for _, edit := range []struct{ key, value string }{
		{"petals.top", `60`}, {"petals.top", `61`}, {"petals.top", `0`}, {"petals.top", `2.5`}, {"petals.top", `"3"`},
		{"petals.top", `6e1`}, {"petals.min_share", `1.5`}, {"petals.min_share", `-0`}, {"petals.min_share", `1e-300`},
		{"petals.groups", `["a","a"]`}, {"petals.groups", `[""]`}, {"petals.groups", `null`}, {"petals.groups", `["council"]`},
		{"title", `" "`}, {"title", `"\u00a0"`}, {"title", `"\t x"`}, {"title", `"` + strings.Repeat("ü", 200) + `"`},
		{"title", `"` + strings.Repeat("ü", 201) + `"`}, {"size", `"area"`}, {"legend", `null`}, {"snapshot", `"ABC"`},
		{"schema", `"flower-spec/v2"`}, {"others", `"hide"`}, {"petals", `{"top":1}`}, {"petals", `{}`},
	} {
		var m map[string]json.RawMessage
		require.NoError(f, json.Unmarshal(base, &m))
		if k, ok := strings.CutPrefix(edit.key, "petals."); ok {
			var p map[string]json.RawMessage
			require.NoError(f, json.Unmarshal(m["petals"], &p))
			p[k] = json.RawMessage(edit.value)
			m["petals"], _ = json.Marshal(p)
		} else {
			m[edit.key] = json.RawMessage(edit.value)
		}
		b, err := json.Marshal(m)
		require.NoError(f, err)
		f.Add(b)
	}
	for _, seed := range []string{`{}`, `[]`, `1`, `null`, `{"schema":"view/v1"}`, `{"schema":"view/v1","palette":"tol-muted","max_labels":61}`,
		`{"schema":"view/v1","max_labels":62}`, `{"schema":"view/v1","labels":"all"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // the strict reader refuses it; the schema validator never sees it
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return
		}
		_, problems := ParseSpec(raw)
		schemaErr := specSchema.Validate(inst)
		if (len(problems) == 0) != (schemaErr == nil) {
			t.Fatalf("flower-spec/v1 disagreement on %s\nParseSpec: %v\nschema: %v", raw, problems, schemaErr)
		}
		_, vproblems := ParseView(raw)
		verr := viewSchema.Validate(inst)
		if (len(vproblems) == 0) != (verr == nil) {
			t.Fatalf("view/v1 disagreement on %s\nParseView: %v\nschema: %v", raw, vproblems, verr)
		}
	})
}

func mustPropose(t testing.TB) Spec {
	s, err := Propose(daoSnapshot(), daoSHA, "")
	require.NoError(t, err)
	return s
}
