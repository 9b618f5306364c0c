package snapshots

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The published schema names exactly the fields the type writes, and its
// required lists match the fields without omitempty.
func TestPublishedSchemaMatchesTheType(t *testing.T) {
	raw, err := os.ReadFile("../../docs/schemas/snapshot-v1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	check := func(where string, node map[string]any, typ reflect.Type) {
		props := node["properties"].(map[string]any)
		var required []string
		for _, r := range node["required"].([]any) {
			required = append(required, r.(string))
		}
		for i := range typ.NumField() {
			tag := typ.Field(i).Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if _, ok := props[name]; !ok {
				t.Errorf("%s: field %s is not in the schema", where, name)
			}
			if (opts != "omitempty") != slices.Contains(required, name) {
				t.Errorf("%s: %s required in the schema = %v, but omitempty = %v", where, name, slices.Contains(required, name), opts == "omitempty")
			}
		}
		if len(props) != typ.NumField() {
			t.Errorf("%s: schema has %d properties, type has %d fields", where, len(props), typ.NumField())
		}
	}
	props := schema["properties"].(map[string]any)
	check("snapshot", schema, reflect.TypeFor[Snapshot]())
	check("block", props["block"].(map[string]any), reflect.TypeFor[Block]())
	check("account", props["accounts"].(map[string]any)["items"].(map[string]any), reflect.TypeFor[Account]())
	check("group", props["groups"].(map[string]any)["items"].(map[string]any), reflect.TypeFor[Group]())
	check("source", props["source"].(map[string]any), reflect.TypeFor[Source]())
}
