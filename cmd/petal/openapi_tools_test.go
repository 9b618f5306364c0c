package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	npmInstallsMu sync.Mutex
	npmInstalls   = map[string]error{}
)

// npmTools is a testdata directory of npm tools, installed from its lock
// file on first use (CI's machine has node and npm, nothing installed by
// hand); marker is a file the install leaves. The tests never skip without
// them.
func npmTools(t *testing.T, name, marker string) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", name))
	require.NoError(t, err)
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: this test runs third-party tools from npm and never skips", tool)
		}
	}
	npmInstallsMu.Lock()
	defer npmInstallsMu.Unlock()
	installErr, done := npmInstalls[dir]
	if !done {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", marker)); err != nil {
			cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				installErr = fmt.Errorf("npm ci in %s: %v: %s", dir, err, out)
			}
		}
		npmInstalls[dir] = installErr
	}
	require.NoError(t, installErr)
	return dir
}

// servedDocument is the OpenAPI document as a petal configured with env
// serves it, written to a file.
func servedDocument(t *testing.T, env map[string]string) (string, []byte) {
	t.Helper()
	p := startPetal(t, env)
	res, body := p.do(t, http.MethodGet, "/api/v1/openapi.json", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	file := filepath.Join(t.TempDir(), "openapi.json")
	require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
	return file, []byte(body)
}

// A site's PETAL_API (a name that can never be anyone's, RFC 6761): the
// document's servers and contact follow it.
var documentedSite = map[string]string{"PETAL_API": "https://petal.test"}

func runTool(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), filepath.Join(dir, "node_modules", ".bin", args[0]), args[1:]...)
	cmd.Dir = dir
	// Redocly CLI asks the network for updates and sends telemetry unless told not to.
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_COLOR=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%s: %w: %s", args[0], err, stderr.String())
	}
	return stdout.String(), err
}

// Two third-party linters hold the served document to their rules: Redocly
// CLI's recommended ruleset and Spectral's spectral:oas. Neither may find an
// error or a warning.
func TestOpenAPIPassesRedoclyAndSpectral(t *testing.T) {
	t.Parallel()
	dir := npmTools(t, "openapitools", filepath.Join("@redocly", "cli", "package.json"))
	file, _ := servedDocument(t, documentedSite)

	out, err := runTool(t, dir, "redocly", "lint", "--extends=recommended", "--format=json", "--max-problems=1000", file)
	var redocly struct {
		Totals   struct{ Errors, Warnings int } `json:"totals"`
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		} `json:"problems"`
	}
	require.NoError(t, json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &redocly), "redocly: %v\n%s", err, out)
	for _, p := range redocly.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		t.Errorf("redocly %s %s at %s: %s", p.Severity, p.RuleID, where, p.Message)
	}
	assert.Zero(t, redocly.Totals.Errors, "Redocly's errors")
	assert.Zero(t, redocly.Totals.Warnings, "Redocly's warnings")

	out, err = runTool(t, dir, "spectral", "lint", "--ruleset", filepath.Join(dir, ".spectral.yaml"), "--format", "json", "--quiet", file)
	var spectral []struct {
		Code     string `json:"code"`
		Severity int    `json:"severity"` // 0 error, 1 warning, 2 information, 3 hint
		Message  string `json:"message"`
		Path     []any  `json:"path"`
	}
	if strings.TrimSpace(out) != "" && !strings.HasPrefix(strings.TrimSpace(out), "No results") {
		require.NoError(t, json.Unmarshal([]byte(out[strings.Index(out, "["):]), &spectral), "spectral: %v\n%s", err, out)
	}
	for _, r := range spectral {
		if r.Severity <= 1 {
			t.Errorf("spectral %d %s at %v: %s", r.Severity, r.Code, r.Path, r.Message)
		}
	}
	if len(spectral) == 0 {
		assert.NoError(t, err, "spectral found nothing yet failed")
	}
}

// openapi-typescript generates a client's types from the served document;
// tsc --strict compiles a small program reading five answers through them,
// and refuses one reading a field no answer has (so the types are not
// "anything"). No answer may be typed as an object without fields.
func TestOpenAPITypeScriptClient(t *testing.T) {
	t.Parallel()
	dir := npmTools(t, "openapitools", filepath.Join("openapi-typescript", "package.json"))
	file, _ := servedDocument(t, documentedSite)
	work := t.TempDir()
	types := filepath.Join(work, "petal.d.ts")
	_, err := runTool(t, dir, "openapi-typescript", file, "--output", types)
	require.NoError(t, err)
	generated, err := os.ReadFile(types)
	require.NoError(t, err)
	// openapi-typescript's own exports for what the document has none of
	// (webhooks, $defs) are Record<string, never> too; no operation's may be.
	for i, line := range strings.Split(string(generated), "\n") {
		if strings.Contains(line, "Record<string, never>") && !strings.HasPrefix(line, "export type webhooks") && !strings.HasPrefix(line, "export type $defs") {
			t.Errorf("petal.d.ts:%d types something as an object without fields: %s", i+1, strings.TrimSpace(line))
		}
	}

	for _, f := range []string{"client.ts", "wrong.ts"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(work, f), b, 0o600))
	}
	tsc := func(program string) (string, error) {
		return runTool(t, dir, "tsc", "--strict", "--noEmit", "--noUncheckedIndexedAccess", "--target", "es2022",
			"--module", "es2022", "--moduleResolution", "bundler", filepath.Join(work, program))
	}
	out, err := tsc("client.ts")
	assert.NoError(t, err, "tsc on the client program: %s", out)
	out, err = tsc("wrong.ts")
	require.Error(t, err, "tsc compiled a program reading a field /api/v1/info does not have")
	assert.Contains(t, out, "no_such_field")
}
