package runs

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/petal-near/petal/domain/snapshots"
)

// The yes (J4): on a real model, a new map waits for the person. These are
// pure functions over the run's thread (what is approved is read back from
// it, so it survives run_id and a restart, with no column of its own).

// Held reports whether a tool waits for a yes: a fresh read, and drawing.
func Held(tool string) bool {
	switch tool {
	case "get_snapshot", "propose_spec", "render_flower":
		return true
	}
	return false
}

// Drawing reports whether a tool is lost to a chat after a refusal, unless
// something is already approved.
func Drawing(tool string) bool { return tool == "propose_spec" || tool == "render_flower" }

// Approvals is what a run's person has agreed to.
type Approvals struct {
	Targets   map[string]bool // target keys
	Snapshots map[string]bool // snapshot sha256s
}

// Empty reports whether nothing is approved yet.
func (a Approvals) Empty() bool { return len(a.Targets) == 0 && len(a.Snapshots) == 0 }

// How a call was approved, kept on its tool message.
const (
	ByApproved = "approved" // its target or snapshot already was
	ByName     = "name"     // the person asked to draw it by name
	ByYes      = "yes"      // the person said yes to it
)

// ApprovedIn reads what is approved from the thread, the run's last flower
// and the draft the person sent: targets and snapshots of calls that went
// ahead with approval, and the snapshots of flowers drawn and of the draft.
func ApprovedIn(thread []Message, flower, draft json.RawMessage) Approvals {
	a := Approvals{Targets: map[string]bool{}, Snapshots: map[string]bool{}}
	for _, m := range thread {
		if m.Role != RoleTool || m.Approved == "" {
			continue
		}
		a.Targets[m.Approved] = true
		if sha := field([]byte(m.Content), "sha256"); sha != "" {
			a.Snapshots[sha] = true
		}
		if sha := specSnapshot(fieldRaw([]byte(m.Content), "spec")); sha != "" {
			a.Snapshots[sha] = true
		}
	}
	if sha := specSnapshot(fieldRaw(flower, "spec")); sha != "" {
		a.Snapshots[sha] = true
	}
	if sha := specSnapshot(fieldRaw(draft, "spec")); sha != "" {
		a.Snapshots[sha] = true
	}
	return a
}

// Target is what a held call is about.
type Target struct {
	Tool     string
	Network  string
	Params   json.RawMessage
	Key      string // target_key: the network plus its params in canonical form
	Snapshot string // the snapshot it reads or draws, when known
	Fresh    bool   // a get_snapshot asking for a fresh read
	Names    []string
}

// TargetOf says what a held call is about, looking up in the thread the
// snapshot a proposal or a drawing names.
func TargetOf(thread []Message, call ToolCall) Target {
	t := Target{Tool: call.Name}
	switch call.Name {
	case "get_snapshot":
		var in struct {
			Network string          `json:"network"`
			Params  json.RawMessage `json:"params"`
			Fresh   bool            `json:"fresh"`
			At      string          `json:"at"`
		}
		_ = json.Unmarshal(call.Args, &in)
		t.Network, t.Params, t.Fresh, t.Snapshot = in.Network, in.Params, in.Fresh, in.At
	case "propose_spec":
		t.Snapshot = field(call.Args, "sha256")
	case "render_flower":
		t.Snapshot = specSnapshot(fieldRaw(call.Args, "spec"))
	}
	if t.Network == "" && t.Snapshot != "" {
		// The read that gave this snapshot says which target it is.
		for i := len(thread) - 1; i >= 0; i-- {
			m := thread[i]
			if m.Role == RoleTool && m.Name == "get_snapshot" && field([]byte(m.Content), "sha256") == t.Snapshot {
				t.Network = field([]byte(m.Content), "network")
				if call := callOf(thread, m.ToolCallID); call != nil {
					t.Params = fieldRaw(call.Args, "params")
				}
				break
			}
		}
	}
	if t.Network != "" {
		t.Key, _ = snapshots.TargetKey(t.Network, t.Params)
	} else if t.Snapshot != "" {
		t.Key = "snapshot:" + t.Snapshot
	}
	t.Names = targetNames(t)
	return t
}

// Verdict is what happens to a held call.
type Verdict int

// Verdicts.
const (
	// Allow runs the call; By says how it was approved.
	Allow Verdict = iota
	// StoredOnly runs a get_snapshot from storage only: it reaches no source
	// and approves nothing.
	StoredOnly
	// Refuse answers approval_required and runs nothing.
	Refuse
)

// Decision is the yes's answer for one call.
type Decision struct {
	Verdict Verdict
	By      string // how an allowed call was approved
	Target  Target
}

// Decide applies the contract's paragraph to one held call. yesSpent says a
// yes in the latest user message already covered one new target.
func Decide(thread []Message, approved Approvals, call ToolCall, yesSpent bool) Decision {
	t := TargetOf(thread, call)
	d := Decision{Target: t}
	if approved.Targets[t.Key] || (t.Snapshot != "" && approved.Snapshots[t.Snapshot]) {
		d.By = ByApproved
		return d
	}
	last, lastAt := lastUser(thread)
	ambiguous, candidates := lastFind(thread, lastAt)
	switch {
	case ambiguous && containsKey(candidates, t.Key):
		if namesCandidate(last, candidates, t) {
			d.By = ByName
			return d
		}
	case asksToDraw(last, t):
		d.By = ByName
		return d
	}
	if !yesSpent && IsYes(last) && leavesOneThing(lastWords(thread, lastAt)) {
		d.By = ByYes
		return d
	}
	if t.Tool == "get_snapshot" && !t.Fresh {
		d.Verdict = StoredOnly
		return d
	}
	d.Verdict = Refuse
	return d
}

// YesSpent reports whether a yes already let a new target through since the
// latest user message: one yes covers one new target.
func YesSpent(thread []Message) bool {
	_, at := lastUser(thread)
	for _, m := range thread[at+1:] {
		if m.Role == RoleTool && m.ApprovedBy == ByYes {
			return true
		}
	}
	return false
}

// ApprovalData is the approval_required event for a refused call.
func ApprovalData(t Target) ApprovalRequiredData {
	d := ApprovalRequiredData{Tool: t.Tool, Network: t.Network, TargetKey: t.Key}
	if p := strings.TrimSpace(string(t.Params)); p != "" && p != "null" && p != "{}" {
		d.Params = t.Params
	}
	return d
}

var yesWords = map[string]bool{
	"yes": true, "y": true, "yeah": true, "yep": true, "yup": true, "sure": true, "ok": true, "okay": true,
	"go ahead": true, "do it": true, "please do": true, "yes please": true, "go": true, "sounds good": true,
	"yes go ahead": true, "ok go ahead": true, "yes do it": true, "please": true, "absolutely": true, "of course": true,
}

// IsYes reports whether a message is a plain yes.
func IsYes(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	t = strings.TrimRight(t, ".!👍 ")
	t = strings.ReplaceAll(t, ",", "")
	return yesWords[t]
}

var numberedList = regexp.MustCompile(`(?m)^\s*(\d+[.)]|[-*•])\s`)

// leavesOneThing reports whether what the agent last said leaves one thing to
// agree to: something was said, its last question has no either-or, and it
// holds no list.
func leavesOneThing(said string) bool {
	if strings.TrimSpace(said) == "" || numberedList.MatchString(said) {
		return false
	}
	q := said
	if i := strings.LastIndex(said, "?"); i >= 0 {
		start := strings.LastIndexAny(said[:i], ".!?\n") + 1
		q = said[start : i+1]
	}
	return !strings.Contains(" "+strings.ToLower(q)+" ", " or ")
}

var drawWords = []string{"draw", "map", "show", "flower", "picture", "chart", "plot", "visuali", "read", "make", "render"}

// asksToDraw reports whether a message tells the agent to draw the target by
// name: a drawing word and one of the target's names.
func asksToDraw(text string, t Target) bool {
	low := strings.ToLower(text)
	verb := false
	for _, w := range drawWords {
		if strings.Contains(low, w) {
			verb = true
			break
		}
	}
	if !verb {
		return false
	}
	for _, n := range t.Names {
		if n != "" && containsWord(low, strings.ToLower(n)) {
			return true
		}
	}
	return false
}

// targetNames are the words that name a target: its params' values (an
// address, and its first label) and its network's id.
func targetNames(t Target) []string {
	var out []string
	var params map[string]any
	_ = json.Unmarshal(t.Params, &params)
	for k, v := range params {
		s, ok := v.(string)
		if !ok || k == "chain" {
			continue
		}
		out = append(out, s)
		if label, _, found := strings.Cut(s, "."); found && len(label) >= 3 {
			out = append(out, label)
		}
	}
	return out
}

func containsWord(text, word string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], word)
		if j < 0 {
			return false
		}
		j += i
		before := j == 0 || !isWordByte(text[j-1])
		end := j + len(word)
		after := end == len(text) || !isWordByte(text[end])
		if before && after {
			return true
		}
		i = j + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || b == '-' || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9')
}

// candidate is one candidate of a find_target answer.
type candidate struct {
	Key    string
	Params map[string]any
}

// lastFind reads the latest find_target answer since the latest user message
// (or, when none, the one before it): whether it was ambiguous, and its
// candidates in order.
func lastFind(thread []Message, lastUserAt int) (bool, []candidate) {
	for i := len(thread) - 1; i >= 0; i-- {
		m := thread[i]
		if m.Role != RoleTool || m.Name != "find_target" {
			continue
		}
		var out struct {
			Ambiguous  bool `json:"ambiguous"`
			Candidates []struct {
				TargetKey string         `json:"target_key"`
				Params    map[string]any `json:"params"`
			} `json:"candidates"`
		}
		if json.Unmarshal([]byte(m.Content), &out) != nil {
			return false, nil
		}
		var cs []candidate
		for _, c := range out.Candidates {
			cs = append(cs, candidate{Key: c.TargetKey, Params: c.Params})
		}
		return out.Ambiguous, cs
	}
	return false, nil
}

func containsKey(cs []candidate, key string) bool {
	for _, c := range cs {
		if c.Key == key {
			return true
		}
	}
	return false
}

var ordinals = []string{"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"}

// namesCandidate reports whether a reply names t among an ambiguous find's
// candidates: by ordinal, by chain, or by address.
func namesCandidate(text string, cs []candidate, t Target) bool {
	low := strings.ToLower(strings.TrimSpace(text))
	for i, c := range cs {
		if c.Key != t.Key {
			continue
		}
		if i < len(ordinals) && containsWord(low, ordinals[i]) {
			return true
		}
		n := string(rune('1' + i))
		if low == n || strings.HasPrefix(low, n+" ") || strings.HasPrefix(low, n+".") || containsWord(low, "#"+n) || containsWord(low, "number "+n) {
			return true
		}
		for k, v := range c.Params {
			s, ok := v.(string)
			if !ok || s == "" {
				continue
			}
			if k == "chain" {
				// The chain tells this candidate apart only when no other
				// candidate is on it.
				if containsWord(low, strings.ToLower(strings.TrimPrefix(s, "near:"))) && uniqueChain(cs, s) {
					return true
				}
				continue
			}
			if containsWord(low, strings.ToLower(s)) {
				return true
			}
		}
	}
	return false
}

func uniqueChain(cs []candidate, chain string) bool {
	n := 0
	for _, c := range cs {
		if c.Params["chain"] == chain {
			n++
		}
	}
	return n == 1
}

// lastUser is the latest user message and its place (-1 when none).
func lastUser(thread []Message) (string, int) {
	for i := len(thread) - 1; i >= 0; i-- {
		if thread[i].Role == RoleUser {
			return thread[i].Content, i
		}
	}
	return "", -1
}

// lastWords is what the agent last said before the message at place at.
func lastWords(thread []Message, at int) string {
	for i := at - 1; i >= 0; i-- {
		if thread[i].Role == RoleAssistant && strings.TrimSpace(thread[i].Content) != "" {
			return thread[i].Content
		}
		if thread[i].Role == RoleUser {
			return ""
		}
	}
	return ""
}

func callOf(thread []Message, id string) *ToolCall {
	for i := len(thread) - 1; i >= 0; i-- {
		for j := range thread[i].ToolCalls {
			if thread[i].ToolCalls[j].ID == id {
				return &thread[i].ToolCalls[j]
			}
		}
	}
	return nil
}

func fieldRaw(doc []byte, key string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(doc, &m) != nil {
		return nil
	}
	return m[key]
}

func field(doc []byte, key string) string {
	var s string
	_ = json.Unmarshal(fieldRaw(doc, key), &s)
	return s
}

func specSnapshot(spec json.RawMessage) string { return field(spec, "snapshot") }
