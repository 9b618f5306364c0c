package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	httpapi "github.com/petal-near/petal/adapters/http"
	"github.com/petal-near/petal/app/toolkit"
)

// update rewrites the golden files instead of comparing with them.
var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the running service")

// goldenTool is what a door promises of one tool: its schemas and the flags
// that decide where it is offered. Descriptions are left out: they are words,
// and changing them is not a break.
type goldenTool struct {
	Name            string          `json:"name"`
	OnTheirMachine  bool            `json:"on_their_machine,omitempty"`
	HiddenFromAgent bool            `json:"hidden_from_agent,omitempty"`
	Long            bool            `json:"long,omitempty"`
	AgentOnly       bool            `json:"agent_only,omitempty"`
	AgentOwn        bool            `json:"agent_own,omitempty"`
	Input           json.RawMessage `json:"input"`
	Output          json.RawMessage `json:"output,omitempty"`
}

type goldenRoute struct {
	Method    string `json:"method"`
	Path      string `json:"path"`
	Tool      string `json:"tool,omitempty"`
	Access    string `json:"access"`
	BodyLimit int64  `json:"body_limit,omitempty"`
	Head      bool   `json:"head,omitempty"`
}

// Every tool's input and output schema and the route table, as the wired
// service has them, are the ones in testdata. A schema refinement is found by
// a runtime type assertion on the input type, so moving code can drop one
// without a compile error; this test is what says so. Rewrite with
// go test ./cmd/petal -run TestToolSchemasAndRoutesAreGolden -update.
func TestToolSchemasAndRoutesAreGolden(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)

	var tools []goldenTool
	for _, tl := range p.Svc.Registry.All() {
		tools = append(tools, goldenOf(*tl, false))
	}
	for _, tl := range p.Svc.Agent.OwnTools() {
		tools = append(tools, goldenOf(tl, true))
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })

	var routes []goldenRoute
	for _, r := range p.Svc.Server.Routes() {
		routes = append(routes, goldenRoute{Method: r.Method, Path: r.Path, Tool: r.Tool, Access: accessName(r.Access), BodyLimit: r.BodyLimit, Head: r.Head})
	}
	sort.Slice(routes, func(i, j int) bool {
		if routes[i].Path != routes[j].Path {
			return routes[i].Path < routes[j].Path
		}
		return routes[i].Method < routes[j].Method
	})

	compareGolden(t, "tools.golden.json", tools)
	compareGolden(t, "routes.golden.json", routes)
}

func goldenOf(tl toolkit.Tool, own bool) goldenTool {
	return goldenTool{Name: tl.Name, OnTheirMachine: tl.OnTheirMachine, HiddenFromAgent: tl.HiddenFromAgent, Long: tl.Long,
		AgentOnly: tl.AgentOnly, AgentOwn: own, Input: canonical(tl.Input), Output: canonical(tl.Output)}
}

// canonical is raw re-encoded with sorted keys, so only a change of meaning
// shows in a diff.
func canonical(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	b, _ := json.Marshal(v)
	return b
}

func accessName(a httpapi.Access) string {
	switch a {
	case httpapi.AccessOpen:
		return "open"
	case httpapi.AccessSession:
		return "session"
	case httpapi.AccessPlain:
		return "plain"
	}
	return "unknown"
}

func compareGolden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file: run with -update")
	if !bytes.Equal(want, got) {
		_ = os.WriteFile(path+".got", got, 0o644)
		t.Fatalf("%s differs from what the service has (written beside it as %s.got; diff them, and rerun with -update if the change is meant)", path, name)
	}
}
