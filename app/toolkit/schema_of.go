package toolkit

import (
	"context"
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

// What is written is described from the Go type that writes it, as tool
// inputs are: encoding/json's rules (field names, omitempty, pointers and nil
// slices as null) become the JSON Schema, a field's jsonschema tag its
// description. This one generator describes tool outputs (WithIO)
// and the HTTP routes' bodies and answers (SchemaOf). A type that writes
// itself (MarshalJSON, MarshalText) is the one thing reflection cannot see
// through; each such type is described here once, and a type missing from
// this table fails at start-up rather than being described wrongly.
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

// SchemaOf is the JSON Schema of what encoding/json writes for v's type,
// with the RefineSchema of every type it holds (a route answering a tool's
// answer types describes them as the tool does).
func SchemaOf(v any) (*jsonschema.Schema, error) {
	t := reflect.TypeOf(v)
	if t == nil {
		return nil, fmt.Errorf("no type: describe an answer by a value of the type written")
	}
	s, err := SchemaFor(t)
	if err != nil {
		return nil, err
	}
	refineWithin(t, s, map[reflect.Type]bool{})
	return s, nil
}

// SchemaFor is the JSON Schema of what encoding/json writes for a t.
func SchemaFor(t reflect.Type) (*jsonschema.Schema, error) {
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

// OutputSchema is the JSON Schema of a tool's answer type Out, as the
// registry publishes it: SchemaFor's, refined by Out's RefineSchema when it
// has one, with arrays and maps typed as what the answer holds (a nil slice
// written as null where an array is described fails the OpenAPI check of the
// end-to-end tests, which is what should happen), and every object
// described (CheckDescribed).
func OutputSchema[Out any]() (json.RawMessage, error) {
	t := reflect.TypeFor[Out]()
	if e, ok := any(*new(Out)).(encodedAnswer); ok {
		t = e.encodes() // an Encoded[A] is described as the A it holds
	}
	s, err := SchemaFor(t)
	if err != nil {
		return nil, err
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("a tool's answer must be a struct (an object with tools_version), not %s", t)
	}
	s.Types, s.Type = nil, "object" // a *Out answered is never nil
	refineWithin(t, s, map[reflect.Type]bool{})
	collectionsNotNull(s)
	OptionalNotNull(s)
	if err := CheckDescribed(s); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// refineWithin calls RefineSchema of t, and of every type t's JSON holds,
// on the schema describing it (a field's, an item's, an embedded struct's
// on its container's), so a type's refinements hold wherever it is written.
func refineWithin(t reflect.Type, s *jsonschema.Schema, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil || seen[t] {
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		refineWithin(t.Elem(), s.Items, seen)
		return
	case reflect.Map:
		refineWithin(t.Elem(), s.AdditionalProperties, seen)
		return
	case reflect.Struct:
	default:
		return
	}
	if _, own := writesItself[t]; own {
		return
	}
	seen[t] = true
	defer delete(seen, t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			refineWithin(f.Type, s, seen) // its fields are the container's
			continue
		}
		if name == "" {
			name = f.Name
		}
		refineWithin(f.Type, s.Properties[name], seen)
	}
	if r, ok := reflect.Zero(t).Interface().(SchemaRefiner); ok {
		r.RefineSchema(s)
	}
}

// collectionsNotNull: jsonschema-go types every slice and map as nullable
// (a nil one writes null); an answer's collections are made, not nil, and
// are described as such.
func collectionsNotNull(s *jsonschema.Schema) {
	walkSchema(s, func(s *jsonschema.Schema) {
		if len(s.Types) == 2 && s.Types[0] == "null" && (s.Types[1] == "array" || (s.Types[1] == "object" && s.Properties == nil && s.AdditionalProperties != nil)) {
			s.Type, s.Types = s.Types[1], nil
		}
	})
}

// OptionalNotNull types an optional field (omitempty: a nil one is left
// out, never written null) as the one type it has when present: ["null",
// "integer"] becomes "integer". Clients that convert an argument by its
// type (the MCP Inspector's CLI) read one type word only.
func OptionalNotNull(s *jsonschema.Schema) {
	walkSchema(s, func(s *jsonschema.Schema) {
		for name, p := range s.Properties {
			if len(p.Types) == 2 && p.Types[0] == "null" && !contains(s.Required, name) {
				p.Type, p.Types = p.Types[1], nil
			}
		}
	})
}

// CheckDescribed refuses a schema a generated client cannot type: an object
// requiring a field it does not describe, an array without items.
func CheckDescribed(s *jsonschema.Schema) error {
	var err error
	walkSchema(s, func(s *jsonschema.Schema) {
		for _, name := range s.Required {
			if s.Properties[name] == nil && err == nil {
				err = fmt.Errorf("%q is required but has no schema in properties", name)
			}
		}
		if (s.Type == "array" || contains(s.Types, "array")) && s.Items == nil && s.PrefixItems == nil && err == nil {
			err = fmt.Errorf("an array without items")
		}
	})
	return err
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func walkSchema(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	if s == nil {
		return
	}
	f(s)
	for _, p := range s.Properties {
		walkSchema(p, f)
	}
	for _, d := range s.Defs {
		walkSchema(d, f)
	}
	for _, sub := range append(append(append([]*jsonschema.Schema{s.Items, s.AdditionalProperties, s.Not}, s.AnyOf...), s.OneOf...), s.PrefixItems...) {
		walkSchema(sub, f)
	}
}

// WithIO is t taking In and answering Out: WithInput's, and its Output is
// Out's schema, so what the tool is said to answer is what its run returns.
func WithIO[In, Out any](t Tool, run func(ctx context.Context, call Call, in In) (Out, error)) Tool {
	t = answering[Out](t)
	return WithInput(t, func(ctx context.Context, call Call, in In) (any, error) {
		out, err := run(ctx, call, in)
		if err != nil {
			return nil, err
		}
		return out, nil
	})
}

func answering[Out any](t Tool) Tool {
	schema, err := OutputSchema[Out]()
	if err != nil {
		panic(fmt.Sprintf("app: tool %s: its answer: %v", t.Name, err)) // a programming error, found at start-up
	}
	t.Output, t.outputMade = schema, schema
	return t
}

// Encoded is an answer of type A encoded once and kept: one that is the
// same for every call (list_networks' without a query, the commonest call of
// all) is not encoded again for each. A tool answering Encoded[A] is
// described as answering an A (WithIO), and the doors write its bytes as
// they are (JSON).
type Encoded[A any] struct{ b json.RawMessage }

// Encode encodes v, once.
func Encode[A any](v A) (Encoded[A], error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Encoded[A]{}, err
	}
	return Encoded[A]{b: b}, nil
}

// JSON is the answer's encoding, for a door to write without another pass.
func (e Encoded[A]) JSON() json.RawMessage { return e.b }

// MarshalJSON writes the kept encoding.
func (e Encoded[A]) MarshalJSON() ([]byte, error) { return e.b, nil }

func (Encoded[A]) encodes() reflect.Type { return reflect.TypeFor[A]() }

type encodedAnswer interface{ encodes() reflect.Type }

// EncodedAnswer is an answer that carries its JSON (an Encoded[A]).
type EncodedAnswer interface{ JSON() json.RawMessage }

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
		return fmt.Errorf("%v writes its own JSON: describe it in writesItself (app/toolkit/schema_of.go)", t)
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
