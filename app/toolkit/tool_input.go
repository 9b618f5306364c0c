package toolkit

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// A tool's input is declared once, as a Go struct:
//
//	type proposeInput struct {
//		SHA256 string `json:"sha256" jsonschema:"a stored snapshot's name"`
//		Intent string `json:"intent,omitempty" jsonschema:"what the person wants to see"`
//	}
//
// WithInput makes the tool's JSON Schema from it (github.com/google/jsonschema-go):
// a field is a property, its jsonschema tag the description, a field without
// omitempty is required, and no other property is allowed. What a tag cannot
// say (a pattern, a bound, an enum) the type adds in a RefineSchema method.
// The registry compiles the schema once and checks every call's input
// against it before the tool runs, whichever door the call came through;
// then the input is decoded strictly into the struct and handed to run.
// OpenAPI, MCP's tools/list and the agent's tool list all publish Tool.Input.

// WithInput is t taking In: its Input is In's schema and its Run decodes the
// input into an In for run.
func WithInput[In any](t Tool, run func(ctx context.Context, call Call, in In) (any, error)) Tool {
	schema, err := InputSchema[In]()
	if err != nil {
		panic(fmt.Sprintf("app: tool %s: %v", t.Name, err)) // a programming error, found at start-up
	}
	t.Input = schema
	t.InputType = reflect.TypeFor[In]()
	t.Run = func(ctx context.Context, call Call) (any, error) {
		var in In
		if emptyInput(call.Input) {
			return run(ctx, call, in) // {} is In's zero value: nothing to decode
		}
		if err := DecodeInput(call.Input, &in); err != nil {
			return nil, err
		}
		return run(ctx, call, in)
	}
	return t
}

// SchemaRefiner is an input type that adds to its generated schema what a
// struct tag cannot say. It is called on In's zero value.
type SchemaRefiner interface {
	RefineSchema(s *jsonschema.Schema)
}

// inputTypeSchemas are the schemas of types the generator cannot see into.
var inputTypeSchemas = map[reflect.Type]*jsonschema.Schema{
	// Any JSON value, kept undecoded for the tool to read (a spec, a
	// snapshot, a reader's params); the tool's RefineSchema narrows it.
	reflect.TypeFor[json.RawMessage](): {},
}

// InputSchema is the JSON Schema of a tool input type In.
func InputSchema[In any]() (json.RawMessage, error) {
	s, err := jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: inputTypeSchemas})
	if err != nil {
		return nil, err
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("a tool's input must be a struct, not %s", reflect.TypeFor[In]())
	}
	OptionalNotNull(s)
	if r, ok := any(*new(In)).(SchemaRefiner); ok {
		r.RefineSchema(s)
	}
	return json.Marshal(s)
}

// sha256Pattern is the name of anything content-addressed: a snapshot, a
// spec, a render.
const Sha256Pattern = "^[0-9a-f]{64}$"

// ChainPattern is a chain a tool reads: a NEAR network or an EVM chain by
// its CAIP-2 id.
const ChainPattern = `^(near:mainnet|near:testnet|eip155:[1-9][0-9]{0,19})$`

// property is s's property name, for a RefineSchema method; a name the type
// does not have is a programming error, found at start-up.
func Property(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p, ok := s.Properties[name]
	if !ok {
		panic(fmt.Sprintf("app: RefineSchema names %q, which the input type does not have", name))
	}
	return p
}
