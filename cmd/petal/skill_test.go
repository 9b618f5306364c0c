package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
)

// skillTools is the tools /skill.md lists: its "## Tools" section's items.
func skillTools(t *testing.T, doc string) []string {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## Tools\n")
	require.True(t, ok, "the skill has a Tools section")
	section, _, _ = strings.Cut(section, "\n## ")
	var names []string
	for _, m := range regexp.MustCompile("(?m)^- `([a-z_0-9]+)`: ").FindAllStringSubmatch(section, -1) {
		names = append(names, m[1])
	}
	return names
}

// /skill.md lists exactly the registry's tools that doors have (not Petals'
// agent's own), each with a purpose; it is
// Markdown, cacheable by its ETag, and kept on a public site, where the
// tools the site refuses are marked as the person's machine's.
func TestSkillListsExactlyTheRegistrysTools(t *testing.T) {
	t.Parallel()
	for _, public := range []bool{false, true} {
		env := map[string]string{"PETAL_API": "https://petal.example"}
		if public {
			env["PETAL_PUBLIC"] = "1"
		}
		p := startPetal(t, env)
		res, doc := p.do(t, http.MethodGet, "/skill.md", "", "Origin", "https://elsewhere.example")
		require.Equal(t, http.StatusOK, res.StatusCode, doc)
		assert.Equal(t, "text/markdown; charset=utf-8", res.Header.Get("Content-Type"))
		assert.Equal(t, "*", res.Header.Get("Access-Control-Allow-Origin"), "any agent may read it")
		etag := res.Header.Get("ETag")
		require.NotEmpty(t, etag)
		assert.Contains(t, res.Header.Get("Cache-Control"), "public")

		var want []string
		for _, tool := range p.Svc.Registry.All() {
			if tool.AgentOnly {
				assert.NotContains(t, doc, "`"+tool.Name+"`", "Petals' agent's own tools are no door's")
				continue
			}
			want = append(want, tool.Name)
			line := regexp.MustCompile("(?m)^- `" + tool.Name + "`: (.*)$").FindStringSubmatch(doc)
			require.NotNil(t, line, tool.Name)
			assert.NotEmpty(t, strings.TrimSpace(line[1]), "%s has a purpose", tool.Name)
			if public && tool.OnTheirMachine {
				assert.Contains(t, line[1], "On your machine", tool.Name)
			}
		}
		got := skillTools(t, doc)
		slices.Sort(got)
		slices.Sort(want)
		assert.Equal(t, want, got, "exactly the registry's tools")
		assert.NotContains(t, got, "name_conversation", "the agent's own tools are no door's")

		for _, s := range []string{"https://petal.example/mcp", "petal mcp", "/api/v1/agents/wait", "petal_agent_", "`not_on_this_site` (403)",
			"`rate_limited` (429)", "`bad_input` (400)", "retry_after_s"} {
			assert.Contains(t, doc, s)
		}
		assert.Equal(t, public, strings.Contains(doc, "This is a public site"))

		res, body := p.do(t, http.MethodGet, "/skill.md", "", "If-None-Match", etag)
		assert.Equal(t, http.StatusNotModified, res.StatusCode)
		assert.Empty(t, body)
		res, body = p.do(t, http.MethodHead, "/skill.md", "")
		assert.Equal(t, http.StatusOK, res.StatusCode)
		assert.Empty(t, body)
		assert.Equal(t, etag, res.Header.Get("ETag"))
	}
}

// The skill's worked exchange is true: each of its calls, sent as written
// (the render with the spec step 3 answered), answers 200 with every plain
// member its trimmed answer shows, on a site with no chain at hand but the
// fake's DAO list for find_target.
func TestTheSkillsWorkedExchangeIsTrue(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	const base = "https://petal.example"
	p := startPetal(t, map[string]string{"PETAL_API": base, "PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	_, doc := p.do(t, http.MethodGet, "/skill.md", "")
	_, section, ok := strings.Cut(doc, "\n## A worked exchange\n")
	require.True(t, ok, "the skill has a worked exchange")
	section, _, _ = strings.Cut(section, "\n## ")

	call := regexp.MustCompile("(?m)^       (GET|POST) " + regexp.QuoteMeta(base) + `(\S+)\n(?:       (\{.*\})\n)?\n   ` + "```json\n((?s:.*?))\n   ```")
	member := regexp.MustCompile(`"([a-z_0-9]+)": ("[^"\\…]*"|-?[0-9.]+|true|false)`)
	calls := call.FindAllStringSubmatch(section, -1)
	require.Len(t, calls, 4, "find, snapshot, propose, render")
	var spec json.RawMessage
	for _, c := range calls {
		method, path, body, shown := c[1], c[2], c[3], c[4]
		if strings.Contains(body, "…the spec above…") {
			body = `{"spec":` + string(spec) + `}`
		}
		res, got := p.do(t, method, path, body)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s %s: %s", method, path, got)
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, []byte(got)))
		for _, m := range member.FindAllStringSubmatch(shown, -1) {
			assert.Contains(t, compact.String(), `"`+m[1]+`":`+m[2], "%s %s shows %s: %s", method, path, m[0], got)
		}
		var answer struct {
			Spec json.RawMessage `json:"spec"`
		}
		if json.Unmarshal([]byte(got), &answer) == nil && answer.Spec != nil {
			spec = answer.Spec
		}
	}
	assert.Contains(t, section, "To try it offline")
}
