package main

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
