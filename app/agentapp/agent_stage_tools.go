package agentapp

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// ToolMoreTools is Petals' agent's own tool that lists every tool it may
// call and adds the ones it names to its next rounds: each round offers the
// model the tools of its stage, not all of them, and this is how the rest
// stay in reach.
const ToolMoreTools = "more_tools"

// coreTools are offered on every round: the typical chat's path (find the
// target, read it, count, propose, check, draw, name the chat) and the way
// to the rest. A chat's tool list only grows (more_tools adds), so each
// call's request starts with the bytes of the one before it, and NEAR AI's
// count for them holds the next call (docs/money.md, "Holding what a call
// can cost").
var coreTools = []string{"find_target", "get_snapshot", "compute_figures", "propose_spec", "validate_spec", "render_flower",
	"name_conversation", ToolMoreTools}

// stageTools are each stage's tools beyond the core: asking for one of them
// with more_tools brings its stage's others along, as a stage's work needs
// them together.
var stageTools = map[string][]string{
	runs.StageThinking:   {"list_networks", "get_network", "list_explorations", "get_exploration", "start_exploration"},
	runs.StageReadingMap: {"search_petals", "brain_index", "brain_route", "brain_file", "list_flowers", "get_flower"},
	runs.StageFetching:   {"look_up", "read_chain", "read_page", "search", "describe_snapshot"},
	runs.StageCounting:   {"describe_snapshot", "compare_figures", "voting_blocs", "account_groups", "shared_accounts", "power_path", "relations_overview", "related_groups"},
	runs.StageProposing:  {"save_step", "add_note", "keep_layer", "list_layers", "fork_dataset", ToolAnnotate, "add_annotation", "list_annotations"},
	runs.StageValidating: {"get_flower", "list_flowers"},
	runs.StageDrawing:    {"get_flower", "list_flowers", "hand_job", "list_jobs", "retry_job", "stop_job"},
}

// StageOrder is the stages in the order a chat meets them.
var StageOrder = []string{runs.StageThinking, runs.StageReadingMap, runs.StageFetching, runs.StageCounting, runs.StageProposing, runs.StageValidating, runs.StageDrawing}

// stageOf is the stage a tool belongs to ("" for a core tool or one no
// stage lists).
func stageOf(tool string) string {
	for _, s := range StageOrder {
		if slices.Contains(stageTools[s], tool) {
			return s
		}
	}
	return ""
}

// offered is what a chat's round offers: the core, and the tools more_tools
// added (with their stages'), in the order of all, which is every tool the
// agent may call.
func offered(all []ports.ModelTool, added map[string]bool) []ports.ModelTool {
	out := []ports.ModelTool{} // never nil: nil means "no tools this call"
	for _, t := range all {
		if slices.Contains(coreTools, t.Name) || added[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

// StageToolBytes is the bytes of each stage's round's tool list (the core
// and the stage's tools: names, descriptions and schemas), beside all of
// them, for docs/agent.md.
func (a *AgentService) StageToolBytes() (map[string]int, int) {
	all := a.modelTools()
	size := func(ts []ports.ModelTool) int {
		n := 0
		for _, t := range ts {
			n += len(t.Name) + len(t.Description) + len(t.Parameters)
		}
		return n
	}
	out := map[string]int{}
	for _, s := range StageOrder {
		added := map[string]bool{}
		for _, n := range stageTools[s] {
			added[n] = true
		}
		out[s] = size(offered(all, added))
	}
	return out, size(all)
}

type moreToolsInput struct {
	Add []string `json:"add,omitempty" jsonschema:"the tools to offer from the next round on (their stage's come along); empty: only list them"`
}

func (moreToolsInput) RefineSchema(s *jsonschema.Schema) {
	add := toolkit.Property(s, "add")
	add.MaxItems = jsonschema.Ptr(16)
}

// moreToolsTool lists every tool the agent may call, one line each, and
// adds those asked for to the chat's next rounds.
func (a *AgentService) moreToolsTool() *ownTool {
	return newOwnTool(toolkit.Tool{
		Name: ToolMoreTools,
		Description: "List every tool you may call beyond the ones offered now, a line each, and add the ones you name (with their stage's) to your next rounds: " +
			"reading the map and Petal's brain, the chain and the web, relations between accounts, explorations, notes and layers, jobs for the person's own agents.",
	}, false, func(_ context.Context, c *chat, in moreToolsInput) (any, error) {
		all := a.modelTools()
		byName := map[string]ports.ModelTool{}
		for _, t := range all {
			byName[t.Name] = t
		}
		var added []string
		for _, name := range in.Add {
			if _, ok := byName[name]; !ok {
				return nil, errs.Newf(errs.BadInput, "add: there is no tool %q to offer", name).WithHint("name tools this list gives")
			}
			if c.added == nil {
				c.added = map[string]bool{}
			}
			for _, n := range append([]string{name}, stageTools[stageOf(name)]...) {
				if _, ok := byName[n]; ok && !c.added[n] && !slices.Contains(coreTools, n) {
					c.added[n] = true
					added = append(added, n)
				}
			}
		}
		// Only what isn't offered yet, a short line each: the list itself
		// is read at a token a byte on every later round.
		type line struct {
			Name  string `json:"name"`
			Stage string `json:"stage,omitempty"`
			What  string `json:"what"`
		}
		out := struct {
			More  []line   `json:"more"`
			Added []string `json:"added"`
		}{More: []line{}, Added: added}
		if out.Added == nil {
			out.Added = []string{}
		}
		for _, t := range all {
			if slices.Contains(coreTools, t.Name) || (c.added[t.Name] && !slices.Contains(added, t.Name)) {
				continue
			}
			out.More = append(out.More, line{Name: t.Name, Stage: stageOf(t.Name), What: shortWhat(t.Description)})
		}
		return out, nil
	})
}

// reached adds a tool the model called beyond its round's offer (a model
// may know a tool from an earlier chat), and its stage's, to the chat's
// next rounds: what it reaches for it keeps.
func (c *chat) reached(tool string) {
	stage := stageOf(tool)
	if stage == "" || c.added[tool] {
		return
	}
	if c.added == nil {
		c.added = map[string]bool{}
	}
	c.added[tool] = true
	for _, n := range stageTools[stage] {
		c.added[n] = true
	}
}

// shortWhat is a tool's description cut to its first sentence, at most
// whatMax bytes (on a rune boundary).
func shortWhat(d string) string {
	const whatMax = 90
	what, _, _ := strings.Cut(d, ". ")
	what, _, _ = strings.Cut(what, ": ")
	if len(what) <= whatMax {
		return what
	}
	cut := whatMax
	for cut > 0 && !utf8.RuneStart(what[cut]) {
		cut--
	}
	return what[:cut] + "…"
}
