package toolkit

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/app/config"
)

type answerRow struct {
	Name  string  `json:"name" jsonschema:"the row's name"`
	Score *int    `json:"score"`
	Note  *string `json:"note,omitempty"`
}

type answer struct {
	Rows   []answerRow       `json:"rows"`
	Tags   map[string]string `json:"tags"`
	Kind   string            `json:"kind"`
	Cursor *string           `json:"next_cursor"`
}

func (answer) RefineSchema(s *jsonschema.Schema) { Property(s, "kind").Enum = []any{"a", "b"} }

// An answer's schema is its type's: every required field described, arrays
// with items, null only where encoding/json writes it, refinements kept.
func TestOutputSchemaIsTheAnswersType(t *testing.T) {
	raw, err := OutputSchema[answer]()
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(raw, &s))
	props := s["properties"].(map[string]any)
	assert.ElementsMatch(t, []any{"rows", "tags", "kind", "next_cursor"}, s["required"])
	assert.Equal(t, "array", props["rows"].(map[string]any)["type"], "a slice answered is made, not nil")
	assert.Equal(t, "object", props["tags"].(map[string]any)["type"])
	assert.Equal(t, []any{"a", "b"}, props["kind"].(map[string]any)["enum"])
	assert.Equal(t, []any{"null", "string"}, props["next_cursor"].(map[string]any)["type"], "a nil pointer without omitempty is written null")
	row := props["rows"].(map[string]any)["items"].(map[string]any)
	rowProps := row["properties"].(map[string]any)
	assert.Equal(t, "the row's name", rowProps["name"].(map[string]any)["description"])
	assert.Equal(t, []any{"null", "integer"}, rowProps["score"].(map[string]any)["type"])
	assert.Equal(t, "string", rowProps["note"].(map[string]any)["type"], "omitempty: left out when nil, a string when there")
	assert.ElementsMatch(t, []any{"name", "score"}, row["required"])
}

type refinedBadly struct {
	A string `json:"a"`
}

func (refinedBadly) RefineSchema(s *jsonschema.Schema) { s.Required = append(s.Required, "b") }

type writesAnArrayWithoutItems struct {
	A []int `json:"a"`
}

func (writesAnArrayWithoutItems) RefineSchema(s *jsonschema.Schema) { Property(s, "a").Items = nil }

type writesItselfUnknown struct{}

func (writesItselfUnknown) MarshalJSON() ([]byte, error) { return []byte(`"x"`), nil }

// What a generated client could not type is refused at start-up.
func TestOutputSchemaRefusesWhatAClientCannotType(t *testing.T) {
	_, err := OutputSchema[refinedBadly]()
	assert.ErrorContains(t, err, `"b" is required but has no schema`)
	_, err = OutputSchema[writesAnArrayWithoutItems]()
	assert.ErrorContains(t, err, "an array without items")
	_, err = OutputSchema[struct {
		X writesItselfUnknown `json:"x"`
	}]()
	assert.ErrorContains(t, err, "writes its own JSON")
	_, err = OutputSchema[[]string]()
	assert.ErrorContains(t, err, "must be a struct")
}

// A tool's Output comes from its answer type or the tool is not registered:
// one with none, one written in a string, and one whose WithIO schema was
// written over after are all refused, so a new tool can't slip back to a
// hand-written schema (or to none, which a client types as nothing).
func TestRegisterRefusesAnOutputNotFromItsAnswerType(t *testing.T) {
	run := func(context.Context, Call) (any, error) { return answer{}, nil }
	typed := WithIO(Tool{Name: "typed"}, func(context.Context, Call, struct{}) (answer, error) { return answer{}, nil })
	overwritten := typed
	overwritten.Name, overwritten.Output = "overwritten", json.RawMessage(`{"type":"object"}`)
	for _, tool := range []Tool{
		{Name: "none", Run: run},
		{Name: "written", Run: run, Output: json.RawMessage(`{"type":"object","properties":{"rows":{"type":"array"}}}`)},
		overwritten,
	} {
		r := NewRegistry(config.Config{}, nil, nil)
		assert.PanicsWithValue(t, `app: tool "`+tool.Name+`": its Output is not its answer type's: make the tool with WithIO`,
			func() { r.Register(tool) }, tool.Name)
	}
	r := NewRegistry(config.Config{}, nil, nil)
	r.Register(typed)
	got, ok := r.Get("typed")
	require.True(t, ok)
	want, err := OutputSchema[answer]()
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got.Output))
}

// list_networks' kind of answer: encoded once, described as what it holds,
// and written as the bytes kept.
func TestAnEncodedAnswerIsDescribedAsWhatItHolds(t *testing.T) {
	want, err := OutputSchema[answer]()
	require.NoError(t, err)
	got, err := OutputSchema[Encoded[answer]]()
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
	kind := "a"
	e, err := Encode(answer{Rows: []answerRow{}, Tags: map[string]string{}, Kind: kind})
	require.NoError(t, err)
	b, err := json.Marshal(e)
	require.NoError(t, err)
	assert.JSONEq(t, `{"rows":[],"tags":{},"kind":"a","next_cursor":null}`, string(b))
	assert.Equal(t, string(e.JSON()), string(b))
}
