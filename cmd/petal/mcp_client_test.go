package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpapi "github.com/petal-near/petal/adapters/http"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
)

// TestMain lets this test binary stand in for petal itself: the stdio MCP
// test starts it as `petal mcp`, exactly as a local agent would start petal.
func TestMain(m *testing.M) {
	if os.Getenv("PETAL_TEST_RUN_AS_PETAL") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	_ = os.RemoveAll(testBlobDir())
	os.Exit(code)
}

var installClient sync.Once

// mcpClientDir is the TypeScript SDK client, installed from the npm registry
// on first use (CI's machine has node and npm, nothing installed by hand).
func mcpClientDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "mcpclient"))
	require.NoError(t, err)
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: the MCP test drives the official TypeScript client and never skips", tool)
		}
	}
	var installErr error
	installClient.Do(func() {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			installErr = fmt.Errorf("npm ci: %v: %s", err, out)
		}
	})
	require.NoError(t, installErr)
	return dir
}

type mcpCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
	Progress  bool           `json:"progress,omitempty"`
}

type mcpPlan struct {
	Transport string            `json:"transport"`
	URL       string            `json:"url,omitempty"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	Calls     []mcpCall         `json:"calls"`
}

type mcpToolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

type mcpClientAnswer struct {
	Server struct{ Name string } `json:"server"`
	Tools  []struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	} `json:"tools"`
	Results []struct {
		Name   string        `json:"name"`
		Result mcpToolResult `json:"result"`
		Thrown string        `json:"thrown"`
	} `json:"results"`
}

func runMCPClient(t *testing.T, plan mcpPlan) mcpClientAnswer {
	t.Helper()
	dir := mcpClientDir(t)
	b, err := json.Marshal(plan)
	require.NoError(t, err)
	planFile := filepath.Join(t.TempDir(), "plan.json")
	require.NoError(t, os.WriteFile(planFile, b, 0o600))
	cmd := exec.CommandContext(t.Context(), "node", filepath.Join(dir, "client.mjs"), planFile)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "the TypeScript MCP client failed: %s", stderr.String())
	var out mcpClientAnswer
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &out), stdout.String())
	return out
}

// httpToolCall calls a tool through its HTTP route with the same input an
// MCP call gets: path parameters from the input, the rest as the query (GET)
// or the JSON body.
func httpToolCall(t *testing.T, p *testPetal, r httpapi.Route, input map[string]any) (int, map[string]any) {
	t.Helper()
	rest := map[string]any{}
	for k, v := range input {
		rest[k] = v
	}
	path := r.Path
	for _, seg := range strings.Split(r.Path, "/") {
		if !strings.HasPrefix(seg, ":") {
			continue
		}
		name := seg[1:]
		field := name
		if f, ok := r.PathAs[name]; ok {
			field = f
		}
		v, _ := rest[field].(string)
		if v == "" {
			v = "x"
		}
		delete(rest, field)
		path = strings.Replace(path, seg, url.PathEscape(v), 1)
	}
	body := ""
	if r.Method == http.MethodGet {
		q := url.Values{}
		for k, v := range rest {
			q.Set(k, fmt.Sprint(v))
		}
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
	} else {
		b, err := json.Marshal(rest)
		require.NoError(t, err)
		body = string(b)
	}
	res, out := p.do(t, r.Method, path, body, "Accept", "application/json")
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v), "%s %s: %s", r.Method, path, out)
	delete(v, "tools_version")
	return res.StatusCode, v
}

// withoutToolsVersion is an output schema as MCP lists it, less the
// tools_version every result carries: the tool's own schema.
func withoutToolsVersion(t *testing.T, schema json.RawMessage) json.RawMessage {
	t.Helper()
	var s map[string]any
	require.NoError(t, json.Unmarshal(schema, &s))
	if props, ok := s["properties"].(map[string]any); ok {
		require.Contains(t, props, "tools_version")
		delete(props, "tools_version")
	}
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return b
}

// volatile are fields two calls can't share: what each call made anew.
var volatile = map[string]bool{"id": true, "created_at": true, "updated_at": true, "seq": true}

func masked(v any, extra ...string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			if volatile[k] || contains(extra, k) {
				out[k] = "…"
				continue
			}
			out[k] = masked(val, extra...)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = masked(x[i], extra...)
		}
		return out
	case string:
		// A record's name hashes its made_at, to the second: two doors asked
		// a second apart name the same flower differently.
		return flowerKey.ReplaceAllString(x, "/petal/flower/…")
	}
	return v
}

var flowerKey = regexp.MustCompile(`/petal/flower/[0-9a-f]{64}`)

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// The contract's MCP test, with a real MCP client that is not the Go SDK's:
// tools/list names and schemas equal the registry, and one tools/call per
// tool answers what the tool's HTTP route answers for the same input, over
// Streamable HTTP and over stdio.
func TestMCPWithTheTypeScriptClient(t *testing.T) {
	t.Parallel()
	// Every tool is called through three doors from one address: more than
	// the default 60 tool calls a minute.
	p := startPetal(t, map[string]string{"PETAL_TOOL_CALLS_PER_MIN": "1000"})
	reg := p.Svc.Server.Registry()
	owner := p.browser(t)
	spec, _, snapshot := proposedSpec(t, p, 3)
	// One exploration only read, one written to, each reached by a continue
	// link that both doors can use without a session.
	readID := owner.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"read by both doors"}`)["id"].(string)
	owner.ok(t, http.MethodPost, "/api/v1/explorations/"+readID+"/steps", `{"spec":`+mustJSON(t, spec)+`,"note":"a step"}`)
	owner.ok(t, http.MethodPost, "/api/v1/explorations/"+readID+"/notes", `{"text":"a note"}`)
	readTok := tokenOf(t, owner.ok(t, http.MethodPost, "/api/v1/explorations/"+readID+"/links", `{"scope":"continue"}`)["url"].(string))
	writeID := owner.ok(t, http.MethodPost, "/api/v1/explorations", `{"question":"written by both doors"}`)["id"].(string)
	writeTok := tokenOf(t, owner.ok(t, http.MethodPost, "/api/v1/explorations/"+writeID+"/links", `{"scope":"continue"}`)["url"].(string))

	// A sample input per tool; a tool without one is called with {} (its
	// refusal must then be the same through both doors).
	samples := map[string]map[string]any{
		"start_exploration": {"question": "asked through two doors", "title": "doors"},
		"list_explorations": {"limit": 5},
		"get_exploration":   {"exploration": readTok},
		"save_step":         {"exploration": writeTok, "spec": spec, "note": "saved"},
		"add_note":          {"exploration": writeTok, "text": "noted"},
		"list_networks":     {"query": "dao"},
		"get_network":       {"id": "near-dao-members", "dao": "marketing"},
		"get_snapshot":      {"network": "near-dao-members", "params": map[string]any{"dao": "marketing"}},
		"describe_snapshot": {"sha256": snapshotsapp.ShippedSnapshots()[0].SHA256, "top": 3},
		"compute_figures":   {"sha256": snapshot},
		"propose_spec":      {"sha256": snapshot, "intent": "who sits on the council"},
		"validate_spec":     {"spec": spec},
		"render_flower":     {"spec": spec},
		"add_annotation": {"exploration": writeTok, "as": "doors", "annotations": []any{map[string]any{
			"subject": "near:mainnet:alice.near", "verb": "noted", "object": map[string]any{"value": "seen"}, "kind": "stated"}}},
		"list_annotations": {"exploration": readTok},
		"keep_layer": {"exploration": writeTok, "about": "near:mainnet:marketing.sputnik-dao.near", "snapshot": snapshot, "annotations": []any{map[string]any{
			"subject": "near:mainnet:bob.near", "verb": "noted", "object": map[string]any{"value": "layered"}, "kind": "stated"}}},
		"list_layers":  {"exploration": readTok},
		"fork_dataset": {"exploration": writeTok, "version": strings.Repeat("0", 64), "add": []string{"near:mainnet:x.near"}},
		"brain_route":  {"q": "what does the gini mean", "answers": "get_policy"},
		"brain_file":   {"id": "figures"},
		"read_page":    {"url": "file:///etc/passwd"},
		"search":       {"query": "near dao"},
		"list_flowers": {"limit": 5},
		"get_flower":   {"id": strings.Repeat("0", 64)},
		"list_jobs":    {"exploration": readTok},
		"report_job":   {"job": "job_00000000000000000000000000000000", "status": "done", "summary": "s", "exploration": writeTok},
	}
	// Per tool, fields that differ by door for a reason: a create over HTTP
	// opens a session and owns what it makes; over MCP it is unowned.
	// The same claim sent through both doors is kept once: the second door
	// finds it kept.
	differs := map[string][]string{"start_exploration": {"access"}, "add_annotation": {"added", "existed"},
		"keep_layer": {"layer", "version", "added", "existed"}}

	routeOf := map[string]httpapi.Route{}
	for _, r := range p.Svc.Server.Routes() {
		if r.Tool != "" {
			routeOf[r.Tool] = r
		}
	}
	offered := reg.Offered()
	var calls []mcpCall
	for _, tool := range offered {
		in := samples[tool.Name]
		if in == nil {
			in = map[string]any{}
		}
		calls = append(calls, mcpCall{Name: tool.Name, Arguments: in, Progress: tool.Long})
	}

	exe, err := os.Executable()
	require.NoError(t, err)
	plans := map[string]mcpPlan{
		"streamable http": {Transport: "http", URL: p.URL + "/mcp", Calls: calls},
		"stdio": {Transport: "stdio", Command: exe, Args: []string{"mcp"}, Calls: calls, Env: map[string]string{
			"PETAL_TEST_RUN_AS_PETAL": "1", "DATABASE_URL": p.DB.URL, "PETAL_MIGRATE": "off",
			// The bodies the server kept are in its blob store: a replica reads them there.
			"PETAL_BLOB_URL": p.Cfg.BlobURL,
			"PATH":           os.Getenv("PATH"), "HOME": os.Getenv("HOME"),
		}},
	}
	// The stdio petal reads no real NEAR either, as startPetal's server: the
	// refusals name the address they could not reach.
	for k, v := range offlineDefaults {
		plans["stdio"].Env[k] = v
	}
	names := []string{"streamable http", "stdio"}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			got := runMCPClient(t, plans[name])
			assert.Equal(t, "petal", got.Server.Name)

			require.Len(t, got.Tools, len(offered), "tools/list is the registry's offered tools")
			for i, tool := range got.Tools {
				assert.Equal(t, offered[i].Name, tool.Name)
				assert.Equal(t, offered[i].Description, tool.Description)
				assert.JSONEq(t, string(offered[i].Input), string(tool.InputSchema), "%s input schema", tool.Name)
				assert.JSONEq(t, string(offered[i].Output), string(withoutToolsVersion(t, tool.OutputSchema)), "%s output schema", tool.Name)
			}

			require.Len(t, got.Results, len(calls))
			for i, res := range got.Results {
				tool := offered[i]
				require.Empty(t, res.Thrown, "%s: the client refused the answer", tool.Name)
				r, ok := routeOf[tool.Name]
				require.True(t, ok, "%s has no HTTP route", tool.Name)
				status, want := httpToolCall(t, p, r, calls[i].Arguments)
				require.NotEmpty(t, res.Result.Content, tool.Name)
				var text map[string]any
				require.NoError(t, json.Unmarshal([]byte(res.Result.Content[0].Text), &text))
				assert.Equal(t, toolkit.ToolsVersion, text["tools_version"], "%s: every result says which tool set answered", tool.Name)
				delete(text, "tools_version")
				if status != http.StatusOK {
					assert.True(t, res.Result.IsError, "%s: HTTP refused (%d), MCP must too", tool.Name, status)
					assert.Equal(t, want, text, "%s: the same error through both doors", tool.Name)
					continue
				}
				require.False(t, res.Result.IsError, "%s: %s", tool.Name, res.Result.Content[0].Text)
				var structured map[string]any
				require.NoError(t, json.Unmarshal(res.Result.StructuredContent, &structured))
				delete(structured, "tools_version")
				assert.Equal(t, structured, text, "%s: text and structured content agree", tool.Name)
				assert.Equal(t, masked(want, differs[tool.Name]...), masked(structured, differs[tool.Name]...),
					"%s: MCP answers what HTTP answers", tool.Name)
			}
		})
	}
	whole := owner.ok(t, http.MethodGet, "/api/v1/explorations/"+writeID, "")
	assert.Len(t, whole["steps"], 4, "each door's save_step landed (HTTP and MCP, twice)")
}
