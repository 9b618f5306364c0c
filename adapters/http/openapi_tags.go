package httpapi

import (
	"sort"
	"strings"
)

// capabilities tag each operation by what it is for, from its path: the
// longest prefix (a whole segment, or the exact path) wins. A new route whose
// path none of these holds fails the document's build.
var capabilities = []struct {
	tag, says string
	paths     []string
}{
	{"service", "the service itself: health, identity, this description, the skill, MCP",
		[]string{"/api/v1/health", "/api/v1/info", "/api/v1/openapi.json", "/skill.md", "/mcp"}},
	{"sign-in", "signing in with a NEAR wallet (NEP-413), the session and invites",
		[]string{"/api/v1/auth", "/api/v1/me"}},
	{"money", "price, credit, tips, usage and paying in NEAR or through 1Click",
		[]string{"/api/v1/price", "/api/v1/pay", "/api/v1/me/tip", "/api/v1/me/usage", "/api/v1/quote"}},
	{"chain", "reading the chain into content-addressed snapshots",
		[]string{"/api/v1/networks", "/api/v1/find", "/api/v1/snapshots", "/api/v1/read-chain", "/api/v1/look-up"}},
	{"flowers", "figures, flower specs and their drawings",
		[]string{"/api/v1/figures", "/api/v1/render", "/api/v1/specs", "/d"}},
	{"publishing", "flowers published to NEAR (flower/v1), and people's corrections of them (correction/v1)",
		[]string{"/api/v1/publish", "/api/v1/flowers", "/api/v1/corrections"}},
	{"views", "how a person sees flowers (view/v1)",
		[]string{"/api/v1/me/view", "/api/v1/views"}},
	{"profiles", "a person's profile and its pictures",
		[]string{"/api/v1/me/profile", "/api/v1/media"}},
	{"explorations", "explorations: their steps, notes, links, readings and conversations",
		[]string{"/api/v1/explorations", "/s", "/api/v1/conversations"}},
	{"annotations", "claims about accounts, layers and datasets",
		[]string{"/api/v1/explorations/{ref}/annotations", "/api/v1/explorations/{ref}/layers",
			"/api/v1/explorations/{ref}/datasets", "/api/v1/me/annotations", "/api/v1/maps/{id}/claims"}},
	{"agent", "Petals' agent: chats as durable runs, streamed over SSE, paid on the ledger",
		[]string{"/api/v1/agent", "/api/v1/attestations"}},
	{"your agents", "a person's own agents: links, waits, jobs and their supervision",
		[]string{"/api/v1/agents", "/api/v1/jobs", "/api/v1/explorations/{ref}/jobs", "/api/v1/explorations/{ref}/live"}},
	{"map", "the shared map of every network's flowers",
		[]string{"/api/v1/map", "/api/v1/maps"}},
	{"relations", "how groups of accounts relate",
		[]string{"/api/v1/relations"}},
	{"eyes", "reading the web and petal's own knowledge",
		[]string{"/api/v1/read-page", "/api/v1/web-search", "/api/v1/search", "/api/v1/brain"}},
	{"pages", "the pages people open in a browser",
		[]string{"/", "/pages", "/make", "/draft", "/connect", "/map", "/compare", "/account", "/signin", "/me"}},
}

// capabilityOf is the tag of an OpenAPI path.
func capabilityOf(path string) (string, bool) {
	best, bestLen := "", -1
	for _, c := range capabilities {
		for _, p := range c.paths {
			if path == p || (p != "/" && strings.HasPrefix(path, p+"/")) {
				if len(p) > bestLen {
					best, bestLen = c.tag, len(p)
				}
			}
		}
	}
	return best, bestLen >= 0
}

func tagList(used map[string]bool) []map[string]string {
	var out []map[string]string
	for _, c := range capabilities {
		if used[c.tag] {
			out = append(out, map[string]string{"name": c.tag, "description": c.says})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i]["name"] < out[j]["name"] })
	return out
}
