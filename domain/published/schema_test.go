package published

import (
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/schemas/flower-v1.schema.json")

// The published schema is the one in schema.go, byte for byte, and it names
// exactly the fields the type writes, required where they have no
// omitempty.
func TestPublishedSchema(t *testing.T) {
	const path = "../../docs/schemas/flower-v1.schema.json"
	if *update {
		if err := os.WriteFile(path, []byte(JSONSchema), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("run go test ./domain/published -update to write it: %v", err)
	}
	if string(got) != JSONSchema {
		t.Fatalf("%s differs from the schema in schema.go", path)
	}
	var schema struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(got, &schema); err != nil {
		t.Fatal(err)
	}
	typ := reflect.TypeFor[Flower]()
	for i := range typ.NumField() {
		name, opts, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if _, ok := schema.Properties[name]; !ok {
			t.Errorf("field %s is not in the schema", name)
		}
		if (opts != "omitempty") != slices.Contains(schema.Required, name) {
			t.Errorf("%s: required in the schema = %v, omitempty = %v", name, slices.Contains(schema.Required, name), opts == "omitempty")
		}
	}
	if len(schema.Properties) != typ.NumField() {
		t.Errorf("schema has %d properties, the type %d fields", len(schema.Properties), typ.NumField())
	}
}
