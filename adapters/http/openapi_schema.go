package httpapi

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/profiles"
	"github.com/petal-near/petal/domain/snapshots"
)

// A route's answer is described from the Go type its handler writes, as tool
// inputs are: encoding/json's rules (field names, omitempty, pointers and nil
// slices as null) become the JSON Schema. A type that writes itself
// (MarshalJSON, MarshalText) is the one thing reflection cannot see through;
// each such type is described here once, and a type missing from this table
// fails the document's build rather than being described wrongly.
var writesItself = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): {Description: "any JSON value"},
	// encoding/json writes a json.Number as the number it holds.
	reflect.TypeFor[json.Number]():       {Type: "number"},
	reflect.TypeFor[time.Time]():         {Type: "string", Format: "date-time"},
	reflect.TypeFor[credit.USDNumber]():  {Type: "number", Description: "US dollars, exact to the micro-dollar"},
	reflect.TypeFor[credit.NEARNumber](): {Type: "number", Description: "NEAR, exact to the yoctoNEAR"},
	reflect.TypeFor[snapshots.Fraction](): {Types: []string{"number", "null"},
		Description: "a fraction, exact to the millionth; null when undefined"},
	// A *struct{} is a field kept for later, always null (encoding/json
	// writes a struct{} as {}, which no answer holds).
	reflect.TypeFor[struct{}](): {Description: "reserved for later: null"},
	reflect.TypeFor[profiles.Links](): {Type: "object", AdditionalProperties: &jsonschema.Schema{Type: "string"},
		Description: "each service's handle or https:// URL, in the person's order"},
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// SchemaOf is the JSON Schema of what encoding/json writes for v's type.
func SchemaOf(v any) (*jsonschema.Schema, error) {
	t := reflect.TypeOf(v)
	if t == nil {
		return nil, fmt.Errorf("no type: describe an answer by a value of the type written")
	}
	if err := checkWritesItself(t, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	known := map[reflect.Type]*jsonschema.Schema{}
	for k, v := range writesItself {
		known[k] = v
	}
	if err := describeShadowingEmbeds(t, known, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	return jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: known})
}

// describeShadowingEmbeds: an embedded struct with a field of its own type's
// name (app.MeAdded embeds Added, which has a field Added) hides that field
// from reflect.VisibleFields, though encoding/json writes it under its JSON
// name; such an embed is described by its own schema's properties instead.
func describeShadowingEmbeds(t reflect.Type, known map[reflect.Type]*jsonschema.Schema, seen map[reflect.Type]bool) error {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || known[t] != nil {
		return nil
	}
	seen[t] = true
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		if err := describeShadowingEmbeds(f.Type, known, seen); err != nil {
			return err
		}
		if !f.Anonymous || f.Tag.Get("json") != "" || f.Type.Kind() != reflect.Struct {
			continue
		}
		if _, shadows := f.Type.FieldByName(f.Name); !shadows {
			continue
		}
		own, err := jsonschema.ForType(f.Type, &jsonschema.ForOptions{TypeSchemas: known})
		if err != nil {
			return err
		}
		known[f.Type] = &jsonschema.Schema{Type: "object", Properties: own.Properties}
	}
	return nil
}

// checkWritesItself refuses a type that marshals itself and has no entry in
// writesItself: reflection would describe its fields, not what it writes.
func checkWritesItself(t reflect.Type, seen map[reflect.Type]bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if seen[t] {
		return nil
	}
	seen[t] = true
	if _, ok := writesItself[t]; ok {
		return nil
	}
	if t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler) ||
		(t.Kind() != reflect.String && (t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler))) {
		return fmt.Errorf("%v writes its own JSON: describe it in writesItself (adapters/http/openapi_schema.go)", t)
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return checkWritesItself(t.Elem(), seen)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			if !f.IsExported() || strings.HasPrefix(f.Tag.Get("json"), "-") {
				continue
			}
			if err := checkWritesItself(f.Type, seen); err != nil {
				return fmt.Errorf("%s.%s: %w", t, f.Name, err)
			}
		}
	}
	return nil
}
