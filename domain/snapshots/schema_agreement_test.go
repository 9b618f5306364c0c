package snapshots

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The published schema, checked by an independent JSON Schema validator,
// accepts every snapshot Parse accepts (Parse adds what a schema can't say),
// and refuses what it can express.
func publishedSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile("../../docs/schemas/snapshot-v1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("snapshot-v1.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("snapshot-v1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func schemaAccepts(t testing.TB, s *jsonschema.Schema, raw []byte) bool {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return false
	}
	return s.Validate(inst) == nil
}

func TestSchemaAgreesWithParse(t *testing.T) {
	schema := publishedSchema(t)
	_, canonical, _ := Name(sample())
	if !schemaAccepts(t, schema, canonical) {
		t.Fatal("the schema refuses a valid snapshot")
	}
	refused := map[string][2]string{
		"float weight":   {`"weight":"2.5"`, `"weight":2.5`},
		"exponent":       {`"weight":"2.5"`, `"weight":"2.5e3"`},
		"unknown key":    {`{"about"`, `{"x":1,"about"`},
		"wrong schema":   {`"snapshot/v1"`, `"snapshot/v2"`},
		"bad chain":      {`"chain":"near:mainnet"`, `"chain":"mainnet"`},
		"missing groups": {`"groups":["council"],`, ``},
	}
	for name, edit := range refused {
		bad := strings.Replace(string(canonical), edit[0], edit[1], 1)
		if bad == string(canonical) {
			t.Fatalf("%s: edit did not apply", name)
		}
		if schemaAccepts(t, schema, []byte(bad)) {
			t.Errorf("%s: the schema accepts it", name)
		}
		if _, _, _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%s: Parse accepts it", name)
		}
	}
}

func FuzzSchemaAcceptsWhatParseAccepts(f *testing.F) {
	_, canonical, _ := Name(sample())
	f.Add(canonical)
	f.Add([]byte(strings.Replace(string(canonical), `"weight":"1"`, `"weight":"1.0"`, 1)))
	schema := publishedSchema(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, _, _, err := Parse(raw); err != nil {
			return
		}
		if !schemaAccepts(t, schema, raw) {
			t.Fatalf("Parse accepts what the schema refuses: %s", raw)
		}
	})
}
