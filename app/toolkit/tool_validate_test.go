package toolkit

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type nullableInput struct {
	Query  string  `json:"query"`
	Limit  *int    `json:"limit,omitempty"`
	Cursor *string `json:"cursor,omitempty"`
}

// The published schema types an optional field by its one type (for the
// Inspector's CLI), yet null given for it still reads as leaving it out, as
// models send it; a required field or an unknown one is not excused by null.
func TestNullForAnOptionalFieldReadsAsAbsent(t *testing.T) {
	schema, err := InputSchema[nullableInput]()
	require.NoError(t, err)
	var published struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(schema, &published))
	assert.JSONEq(t, `"integer"`, string(published.Properties["limit"].Type), "one type word for clients")

	v, err := CompileInput("t", schema)
	require.NoError(t, err)
	assert.NoError(t, v.Check(json.RawMessage(`{"query":"x","limit":null}`)))
	assert.NoError(t, v.Check(json.RawMessage(`{"query":"x","limit":null,"cursor":null}`)))
	assert.NoError(t, v.Check(json.RawMessage(`{"query":"x","limit":3}`)))
	assert.ErrorContains(t, v.Check(json.RawMessage(`{"query":"x","limit":"3"}`)), "/limit")
	assert.ErrorContains(t, v.Check(json.RawMessage(`{"query":null}`)), "/query", "a required field is not excused")
	assert.ErrorContains(t, v.Check(json.RawMessage(`{"query":"x","bogus":null}`)), "unknown field /bogus")

	var in nullableInput
	require.NoError(t, DecodeInput(json.RawMessage(`{"query":"x","limit":null}`), &in))
	assert.Nil(t, in.Limit)
}
