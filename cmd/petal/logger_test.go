package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Logs are JSON unless stdout is a terminal, or PETAL_LOG_FORMAT says.
func TestLoggerFormat(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	newLogger(&buf, "").Info("hello", "n", 1)
	var rec map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &rec), buf.String())
	assert.Equal(t, "hello", rec["msg"])

	// A file (as when stdout is redirected) is not a terminal: JSON.
	f, err := os.Create(filepath.Join(t.TempDir(), "out.log"))
	require.NoError(t, err)
	newLogger(f, "").Info("to a file")
	require.NoError(t, f.Close())
	b, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &rec), string(b))

	buf.Reset()
	newLogger(&buf, "text").Info("hello", "n", 1)
	assert.True(t, strings.HasPrefix(buf.String(), "time="), buf.String())
	assert.Contains(t, buf.String(), "msg=hello n=1")
}
