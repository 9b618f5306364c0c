package toolkit

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
