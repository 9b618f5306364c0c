package explorationsapp

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

// everyTool is every tool petal registers, from services that are never run.
func everyTool() []toolkit.Tool {
	var out []toolkit.Tool
	for _, set := range []toolkit.ToolSet{&snapshotsapp.SnapshotService{}, &flowersapp.FlowerService{}, &ExplorationService{}} {
		out = append(out, set.Tools()...)
	}
	return out
}

// jsonField is a struct field as encoding/json sees it.
type jsonField struct {
	name        string
	optional    bool
	typ         reflect.Type
	description string
}

func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := slices.Contains(strings.Split(opts, ","), "omitempty") || slices.Contains(strings.Split(opts, ","), "omitzero")
		out = append(out, jsonField{name: name, optional: optional, typ: f.Type, description: f.Tag.Get("jsonschema")})
	}
	return out
}

// schemaTypes is what JSON types a Go type may be sent as.
func schemaTypes(t reflect.Type) []string {
	if t == reflect.TypeFor[json.RawMessage]() {
		return nil // any JSON value, narrowed (or not) by the tool
	}
	null := false
	for t.Kind() == reflect.Pointer {
		null, t = true, t.Elem()
	}
	if ownJSON(t) {
		return []string{ownJSONType}
	}
	var ts []string
	switch t.Kind() {
	case reflect.String:
		ts = []string{"string"}
	case reflect.Bool:
		ts = []string{"boolean"}
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64, reflect.Uint32:
		ts = []string{"integer"}
	case reflect.Float64:
		ts = []string{"number"}
	case reflect.Slice:
		ts, null = []string{"array"}, true
	case reflect.Struct, reflect.Map:
		ts = []string{"object"}
	}
	if null {
		ts = append([]string{"null"}, ts...)
	}
	return ts
}

// ownJSONType stands for a type that writes its own JSON (a json.Marshaler,
// such as snapshots.Fraction, sent as a number): its schema is the tool's to
// say, and the struct can't tell what it is.
const ownJSONType = "its own"

func ownJSON(t reflect.Type) bool {
	m := reflect.TypeFor[json.Marshaler]()
	return t.Implements(m) || reflect.PointerTo(t).Implements(m)
}

// Each tool's published input schema and the struct its input is decoded
// into agree on every field: the same names, required exactly when not
// omitempty, the same JSON types, nothing else allowed, and a description
// wherever the struct gives one.
func TestToolInputSchemasAgreeWithTheirStructs(t *testing.T) {
	tools := everyTool()
	require.NotEmpty(t, tools)
	for _, tool := range tools {
		t.Run(tool.Name, func(t *testing.T) {
			require.NotNil(t, tool.InputType, "the input is declared as a Go struct through WithInput")
			var schema struct {
				Type                 string `json:"type"`
				AdditionalProperties *bool  `json:"additionalProperties"`
				Required             []string
				Properties           map[string]struct {
					Type        any    `json:"type"`
					Description string `json:"description"`
				} `json:"properties"`
			}
			require.NoError(t, json.Unmarshal(tool.Input, &schema))
			assert.Equal(t, "object", schema.Type)
			require.NotNil(t, schema.AdditionalProperties)
			assert.False(t, *schema.AdditionalProperties, "no field beyond the struct's")

			fields := jsonFields(tool.InputType)
			var names, required []string
			for _, f := range fields {
				names = append(names, f.name)
				if !f.optional {
					required = append(required, f.name)
				}
				p, ok := schema.Properties[f.name]
				if !assert.True(t, ok, "field %s is in the schema", f.name) {
					continue
				}
				var got []string
				switch v := p.Type.(type) {
				case string:
					got = []string{v}
				case []any:
					for _, x := range v {
						got = append(got, x.(string))
					}
				}
				want := schemaTypes(f.typ)
				if f.optional && len(want) == 2 && want[0] == "null" {
					// Left out rather than sent null: typed by its one type (toolkit.OptionalNotNull).
					want = want[1:]
				}
				if len(want) == 1 && want[0] == ownJSONType {
					assert.NotEmpty(t, got, "field %s writes its own JSON: its schema names a type", f.name)
				} else if want != nil || got == nil {
					assert.ElementsMatch(t, want, got, "field %s's JSON type", f.name)
				} else {
					assert.Equal(t, []string{"object"}, got, "a raw JSON field is narrowed only to an object, field %s", f.name)
				}
				assert.Equal(t, f.description, p.Description, "field %s's description comes from its tag", f.name)
			}
			props := make([]string, 0, len(schema.Properties))
			for name := range schema.Properties {
				props = append(props, name)
			}
			assert.ElementsMatch(t, names, props, "the schema's properties are the struct's fields")
			assert.ElementsMatch(t, required, schema.Required, "required are the fields without omitempty")
		})
	}
}

// The registry compiles every tool's schema, and an input that fits it
// reaches the tool decoded; the schema is generated from the same struct.
func TestEveryToolSchemaCompilesAndIsGenerated(t *testing.T) {
	for _, tool := range everyTool() {
		_, err := toolkit.CompileInput(tool.Name, tool.Input)
		require.NoError(t, err, tool.Name)
	}
	regenerated, err := toolkit.InputSchema[flowersapp.ProposeInput]()
	require.NoError(t, err)
	for _, tool := range everyTool() {
		if tool.Name == flowersapp.ToolProposeSpec {
			assert.JSONEq(t, string(regenerated), string(tool.Input))
		}
	}
}

type sampleInput struct {
	Name  string   `json:"name" jsonschema:"who"`
	Count *int     `json:"count,omitempty"`
	Tags  []string `json:"tags,omitempty"`
	Inner *struct {
		Flag bool `json:"flag"`
	} `json:"inner,omitempty"`
	Blob json.RawMessage `json:"blob,omitempty"`
	SHA  string          `json:"sha,omitempty"`
}

// Registry.Call checks the input against the schema before the tool runs,
// and every door gets the same refusal: bad_input naming the JSON Pointer.
func TestRegistryRefusesInputOutsideTheSchemaBeforeTheToolRuns(t *testing.T) {
	ran := 0
	tool := toolkit.WithIO(toolkit.Tool{Name: "sample"}, func(_ context.Context, _ toolkit.Call, in sampleInput) (sampleInput, error) {
		ran++
		return in, nil
	})
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	reg := toolkit.NewRegistry(cfg, nil, nil)
	reg.Register(tool)

	cases := []struct {
		input, message string
	}{
		{`{"name":"a","colour":1}`, "unknown field /colour"},
		{`{}`, "field /name is required"},
		{`{"name":7}`, "field /name: expected a string, got number"},
		{`{"name":"a","count":"seven"}`, "field /count: expected a whole number, got string"},
		{`{"name":"a","count":1.5}`, "field /count: expected a whole number, got number"},
		{`{"name":"a","tags":["x",2]}`, "field /tags/1: expected a string, got number"},
		{`{"name":"a","inner":{}}`, "field /inner/flag is required"},
		{`{"name":"a","inner":{"flag":true,"x":1}}`, "unknown field /inner/x"},
		{`{"name":"a","b":1,"c":2}`, "unknown field /b (and 1 more problems)"},
		{`[1]`, "field /: expected an object, got array"},
		{`{"name":"a"} {}`, "the body holds more than one JSON value"},
		{`{"name":"a"`, "the body's JSON ends too soon"},
	}
	for _, c := range cases {
		for _, door := range []string{toolkit.DoorHTTP, toolkit.DoorMCP, toolkit.DoorAgent} {
			_, err := reg.Call(context.Background(), "sample", toolkit.Call{Input: json.RawMessage(c.input), Caller: toolkit.Caller{Door: door}})
			e, ok := errs.As(err)
			require.True(t, ok, "%s through %s: %v", c.input, door, err)
			assert.Equal(t, errs.BadInput, e.Code, c.input)
			assert.Equal(t, c.message, e.Message, "%s through %s", c.input, door)
		}
	}
	assert.Zero(t, ran, "no refused input reached the tool")

	// What fits reaches the tool, decoded; a raw field's inside is the tool's.
	out, err := reg.Call(context.Background(), "sample", toolkit.Call{Input: json.RawMessage(`{"name":"a","count":2,"tags":["x"],"inner":{"flag":true},"blob":{"deep":[1,{"x":null}]}}`)})
	require.NoError(t, err)
	assert.Equal(t, 1, ran)
	assert.JSONEq(t, `{"deep":[1,{"x":null}]}`, string(out.(sampleInput).Blob))
	_, err = reg.Call(context.Background(), "sample", toolkit.Call{})
	e, _ := errs.As(err)
	require.NotNil(t, e)
	assert.Equal(t, "field /name is required", e.Message, "empty input reads as {}")
}

// The refinements the flower and snapshot tools add are checked too, in words.
func TestRefinedSchemasAreEnforced(t *testing.T) {
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	reg := toolkit.NewRegistry(cfg, nil, []toolkit.ToolSet{&flowersapp.FlowerService{}, &snapshotsapp.SnapshotService{}, &ExplorationService{}})
	cases := []struct {
		tool, input, message string
	}{
		{flowersapp.ToolProposeSpec, `{"sha256":"ABC"}`, `field /sha256 must be 64 lower-case hex digits (a SHA-256), not "ABC"`},
		{flowersapp.ToolProposeSpec, `{"sha256":"` + strings.Repeat("a", 64) + `","intent":"` + strings.Repeat("x", flowersapp.MaxIntent+1) + `"}`, "field /intent: at most 2000 characters, not 2001"},
		{"describe_snapshot", `{"sha256":"` + strings.Repeat("a", 64) + `","top":101}`, "field /top: at most 100, not 101"},
		{"find_target", `{"query":"x","chain":"near:devnet"}`, `field /chain must be "near:mainnet", "near:testnet" or an EVM chain as "eip155:<chain id>", not "near:devnet"`},
		{"find_target", `{"query":""}`, "field /query: at least 1 characters, not 0"},
		{"list_explorations", `{"limit":0}`, "field /limit: at least 1, not 0"},
		{flowersapp.ToolComputeFigures, `{"snapshot":"x"}`, "field /snapshot: expected an object, got string"},
	}
	for _, c := range cases {
		_, err := reg.Call(context.Background(), c.tool, toolkit.Call{Input: json.RawMessage(c.input)})
		e, ok := errs.As(err)
		require.True(t, ok, "%s %s: %v", c.tool, c.input, err)
		assert.Equal(t, errs.BadInput, e.Code)
		assert.Equal(t, c.message, e.Message, "%s %s", c.tool, c.input)
	}
}
