package config_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/app/config"
)

// The variable list in .env.example and docs/operations.md is generated from
// app.Variables, so the docs cannot drift from the code. After adding a
// variable, regenerate both with:
//
//	PETAL_UPDATE_DOCS=1 go test ./app -run TestConfigDocs
const (
	envExamplePath = "../../.env.example"
	operationsPath = "../../docs/operations.md"
	tableBegin     = "<!-- variables:begin (generated from app.Variables: PETAL_UPDATE_DOCS=1 go test ./app -run TestConfigDocs) -->"
	tableEnd       = "<!-- variables:end -->"
)

func TestConfigDocsListEveryVariable(t *testing.T) {
	wantEnv := renderEnvExample()
	ops, err := os.ReadFile(operationsPath)
	require.NoError(t, err)
	wantOps, err := spliceTable(string(ops), renderTable())
	require.NoError(t, err, "docs/operations.md needs the markers %q and %q around its variable table", tableBegin, tableEnd)

	if os.Getenv("PETAL_UPDATE_DOCS") == "1" {
		require.NoError(t, os.WriteFile(envExamplePath, []byte(wantEnv), 0o644))
		require.NoError(t, os.WriteFile(operationsPath, []byte(wantOps), 0o644))
		t.Logf("wrote %s and %s", filepath.Clean(envExamplePath), filepath.Clean(operationsPath))
		return
	}
	gotEnv, err := os.ReadFile(envExamplePath)
	require.NoError(t, err)
	assert.Equal(t, wantEnv, string(gotEnv), ".env.example is out of step with app.Variables: PETAL_UPDATE_DOCS=1 go test ./app -run TestConfigDocs")
	assert.Equal(t, wantOps, string(ops), "docs/operations.md is out of step with app.Variables: PETAL_UPDATE_DOCS=1 go test ./app -run TestConfigDocs")
}

// Every listed default must itself be a valid configuration, and each must be
// what LoadConfig reads for an empty environment.
func TestVariablesDefaultsLoad(t *testing.T) {
	defaults := map[string]string{}
	seen := map[string]bool{}
	for _, v := range config.Variables {
		require.False(t, seen[v.Name], "%s is listed twice", v.Name)
		seen[v.Name] = true
		require.NotEmpty(t, v.Meaning, "%s needs a meaning for the docs", v.Name)
		defaults[v.Name] = v.Default
	}
	fromDefaults, err := config.LoadConfig(func(k string) string { return defaults[k] })
	require.NoError(t, err)
	fromEmpty, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	assert.Equal(t, fromEmpty, fromDefaults)
}

func renderEnvExample() string {
	var b strings.Builder
	b.WriteString("# petal's configuration: every variable it reads, with its default.\n")
	b.WriteString("# Generated from app.Variables (PETAL_UPDATE_DOCS=1 go test ./app -run TestConfigDocs);\n")
	b.WriteString("# docs/operations.md explains them. petal reads the environment only: load this\n")
	b.WriteString("# file with your shell (set -a; . ./.env; set +a) or your process manager.\n")
	for _, v := range config.Variables {
		fmt.Fprintf(&b, "\n# %s\n%s=%s\n", v.Meaning, v.Name, v.Default)
	}
	return b.String()
}

func renderTable() string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n| --- | --- | --- |\n")
	for _, v := range config.Variables {
		def := "(empty)"
		if v.Default != "" {
			def = "`" + v.Default + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.Name, def, strings.ReplaceAll(v.Meaning, "|", `\|`))
	}
	return b.String()
}

func spliceTable(doc, table string) (string, error) {
	i := strings.Index(doc, tableBegin)
	j := strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("markers missing")
	}
	return doc[:i+len(tableBegin)] + "\n" + table + doc[j:], nil
}
