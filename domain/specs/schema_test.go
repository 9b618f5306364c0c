package specs

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The published schemas are the ones the tools carry, byte for byte.
func TestPublishedSchemas(t *testing.T) {
	for path, want := range map[string]string{
		"../../docs/schemas/flower-spec-v1.schema.json": SpecJSONSchema,
		"../../docs/schemas/view-v1.schema.json":        ViewJSONSchema,
	} {
		var v map[string]any
		require.NoError(t, json.Unmarshal([]byte(want), &v), "%s is JSON", path)
		if *update {
			require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "run go test ./domain/specs -update to write it")
		assert.Equal(t, want, string(got), "%s differs from the schema in schema.go", path)
	}
}
