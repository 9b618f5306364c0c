package siteapp

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
)

// The skill (GET /skill.md) is the document a person gives their own agent.
// Its prose is a template; its tool list is the registry's and its
// refusals are the error codes the door maps, so neither can drift.
//
//go:embed skill.md.tmpl
var skillTemplate string

var skillTmpl = template.Must(template.New("skill").Parse(skillTemplate))

// SkillDoor is what the door adds to the skill: each tool's route, each
// error code's status, and its body limits.
type SkillDoor struct {
	Routes   map[string]string // tool → "METHOD /path"
	Statuses map[errs.Code]int // every code the door answers, with its status
	BodyLimit, ChatBodyLimit,
	PostedWireLimit, PostedInflatedLimit int64
}

// Skill is the rendered document and its ETag.
type Skill struct {
	Body []byte
	ETag string // quoted: the SHA-256 of Body
}

// refusalMeanings say what each error code means to an agent, and what to
// do about it. Every code the door maps must have one (a test checks).
var refusalMeanings = map[errs.Code]string{
	errs.BadInput:         "the input is wrong; the message names the field or the limit. Fix it and send again.",
	errs.Unauthorised:     "no access: not signed in, a link or agent token that is unknown or revoked, a request from another site, or a job that ended (`error.ended`). Nothing to retry as it is.",
	errs.InviteRequired:   "Petals' own agent needs an invite or the person's credit on this site; bring your own agent (this page) instead.",
	errs.NotFound:         "nothing there for you: no such thing, or someone else's (they answer the same).",
	errs.CannotRead:       "the source was read but cannot be turned into what was asked (a contract without the methods a reader needs).",
	errs.InvalidSpec:      "the flower spec breaks flower-spec/v1 or its snapshot; `problems` lists each, by path.",
	errs.RateLimited:      "over a limit: wait `retry_after_s` seconds (also the Retry-After header), then try again.",
	errs.BudgetExhausted:  "a budget is spent (an invite's, the model's daily cap, or the site's daily data budget); `retry_after_s` says when a daily one resets. Bring your own agent.",
	errs.PaymentRequired:  "Petals' own agent needs the person's credit; they add it in NEAR on the site.",
	errs.NotOnThisSite:    "this site does not run that; run the tool on the person's machine (`petal mcp`) and post what it made.",
	errs.SourceFailed:     "the chain, a page or a provider did not answer in time; nothing changed, so the same call can be sent again.",
	errs.Conflict:         "the state does not allow it now: an Idempotency-Key reused with another body, or a run still going.",
	errs.MethodNotAllowed: "the route exists, but not with that method; see /api/v1/openapi.json.",
	errs.Internal:         "something failed on the site's side; the message says no more. Try again later.",
}

// RefusalMeaning is what code means to an agent, if the skill says.
func RefusalMeaning(code errs.Code) (string, bool) {
	m, ok := refusalMeanings[code]
	return m, ok
}

// RenderSkill renders the skill for this site: every tool of its doors, in
// name order, with its one-line purpose (its description's first sentence)
// and its route.
func RenderSkill(cfg config.Config, reg *toolkit.Registry, door SkillDoor) (Skill, error) {
	type tool struct {
		Name, Purpose, Route string
		OnTheirMachine       bool
	}
	type refusal struct {
		Code    errs.Code
		Status  int
		Meaning string
	}
	var tools []tool
	for _, t := range registered(reg) {
		tools = append(tools, tool{Name: t.Name, Purpose: purpose(t.Description), Route: door.Routes[t.Name], OnTheirMachine: t.OnTheirMachine})
	}
	var refusals []refusal
	for _, code := range sortedCodes(door.Statuses) {
		meaning, ok := refusalMeanings[code]
		if !ok {
			return Skill{}, fmt.Errorf("skill: no meaning for the error code %s", code)
		}
		refusals = append(refusals, refusal{Code: code, Status: door.Statuses[code], Meaning: meaning})
	}
	base := strings.TrimRight(cfg.PublicURL, "/")
	data := map[string]any{
		"Site": base, "Base": base, "Public": cfg.Public, "ToolsVersion": toolkit.ToolsVersion,
		"Tools": tools, "Refusals": refusals,
		"TokenPrefix": agentjobs.TokenPrefix, "DefaultWaitS": agentjobs.DefaultWaitS, "MaxWaitS": agentjobs.MaxWaitS,
		"MaxWorkers": agentjobs.MaxWorkersPerAgent, "MaxOpenJobs": agentjobs.MaxOpenPerPerson,
		"MaxBrief": bytesWords(agentjobs.MaxBrief), "MaxReport": bytesWords(agentjobs.MaxReport),
		"ToolCallsPerMinute": cfg.ToolCallsPerMinute, "SSEPerAddress": cfg.SSEPerAddress,
		"NewChatsPerHour": cfg.NewChatsPerHour, "FollowUpsPerHour": cfg.FollowUpsPerHour,
		"MaxToolRounds": runs.MaxToolRounds, "RunMaxS": int(cfg.RunMax.Seconds()),
		"BodyLimit": bytesWords(door.BodyLimit), "ChatBodyLimit": bytesWords(door.ChatBodyLimit),
		"PostedWireLimit": bytesWords(door.PostedWireLimit), "PostedInflatedLimit": bytesWords(door.PostedInflatedLimit),
	}
	var b bytes.Buffer
	if err := skillTmpl.Execute(&b, data); err != nil {
		return Skill{}, fmt.Errorf("skill: %w", err)
	}
	sum := sha256.Sum256(b.Bytes())
	return Skill{Body: b.Bytes(), ETag: `"` + hex.EncodeToString(sum[:16]) + `"`}, nil
}

// purposeMax bounds a tool's line in the skill.
const purposeMax = 240

// purpose is a description's first sentence (a full stop followed by a
// space, outside brackets), on one line, at most purposeMax characters.
func purpose(description string) string {
	d := strings.Join(strings.Fields(description), " ")
	depth := 0
scan:
	for i := 0; i < len(d); i++ {
		switch d[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth = max(depth-1, 0)
		case '.':
			if depth == 0 && (i+1 == len(d) || d[i+1] == ' ') {
				d = d[:i+1]
				break scan
			}
		}
	}
	if utf8.RuneCountInString(d) > purposeMax {
		r := []rune(d)[:purposeMax-1]
		if cut := strings.LastIndexByte(string(r), ' '); cut > purposeMax/2 {
			return string(r)[:cut] + "…"
		}
		return string(r) + "…"
	}
	return d
}

// bytesWords is a size as people read it: 256 KiB, 2 MiB.
func bytesWords(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// sortedCodes is m's codes by status, then name: the common refusals (4xx)
// first.
func sortedCodes(m map[errs.Code]int) []errs.Code {
	codes := make([]errs.Code, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool {
		if m[codes[i]] != m[codes[j]] {
			return m[codes[i]] < m[codes[j]]
		}
		return codes[i] < codes[j]
	})
	return codes
}

// registered is the tools of reg's doors, wherever they run (a public site
// refuses some: the person's machine runs them): never Petals' agent's own
// (AgentOnly), which no door has. None without a registry.
func registered(reg *toolkit.Registry) []*toolkit.Tool {
	if reg == nil {
		return nil
	}
	var out []*toolkit.Tool
	for _, t := range reg.All() {
		if !t.AgentOnly {
			out = append(out, t)
		}
	}
	return out
}
