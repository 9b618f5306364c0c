package runs

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

const marketingKey = `near-dao-members{"chain":"near:mainnet","dao":"marketing.sputnik-dao.near"}`

var readMarketing = ToolCall{ID: "c9", Name: "get_snapshot",
	Args: json.RawMessage(`{"network":"near-dao-members","params":{"dao":"marketing.sputnik-dao.near","chain":"near:mainnet"},"fresh":true}`)}

func user(s string) Message      { return Message{Role: RoleUser, Content: s} }
func assistant(s string) Message { return Message{Role: RoleAssistant, Content: s} }

func TestDecide(t *testing.T) {
	none := ApprovedIn(nil, nil, nil)
	cases := []struct {
		name   string
		thread []Message
		call   ToolCall
		want   Verdict
		by     string
	}{
		{"no yes behind a fresh read", []Message{user("what DAOs are there?")}, readMarketing, Refuse, ""},
		{"drawn by name, even as a first message", []Message{user("Draw the marketing DAO please")}, readMarketing, Allow, ByName},
		{"by its address", []Message{user("map marketing.sputnik-dao.near")}, readMarketing, Allow, ByName},
		{"a name without a drawing word", []Message{user("who is marketing?")}, readMarketing, Refuse, ""},
		{"a yes to one question", []Message{user("hi"), assistant("Shall I draw the Marketing DAO?"), user("yes")}, readMarketing, Allow, ByYes},
		{"a yes to an either-or", []Message{user("hi"), assistant("Marketing or Creatives?"), user("yes")}, readMarketing, Refuse, ""},
		{"a yes to a list", []Message{user("hi"), assistant("I can draw:\n1. Marketing\n2. Creatives\nWhich one?"), user("yes")}, readMarketing, Refuse, ""},
		{"a yes with nothing said before", []Message{user("yes")}, readMarketing, Refuse, ""},
		{"stored only without fresh", []Message{user("what DAOs are there?")},
			ToolCall{Name: "get_snapshot", Args: json.RawMessage(`{"network":"near-dao-members","params":{"chain":"near:mainnet","dao":"marketing.sputnik-dao.near"}}`)}, StoredOnly, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(c.thread, none, c.call, false)
			assert.Equal(t, c.want, d.Verdict)
			assert.Equal(t, c.by, d.By)
			assert.Equal(t, marketingKey, d.Target.Key, "params in canonical form")
		})
	}
}

func TestApprovalsAreReadBackFromTheThread(t *testing.T) {
	snap := "a4295a442b15fbc9b5b0d89d80a3faf6d9b83e7b2159121419f138853590db06"
	thread := []Message{
		user("draw marketing"),
		{Role: RoleAssistant, ToolCalls: []ToolCall{readMarketing}},
		{Role: RoleTool, Name: "get_snapshot", ToolCallID: "c9", Content: `{"sha256":"` + snap + `","network":"near-dao-members"}`, Approved: marketingKey, ApprovedBy: ByName},
		user("now something else entirely"),
	}
	ap := ApprovedIn(thread, nil, nil)
	assert.True(t, ap.Targets[marketingKey])
	assert.True(t, ap.Snapshots[snap])
	// A proposal on that snapshot goes ahead, its target found in the thread.
	d := Decide(thread, ap, ToolCall{Name: "propose_spec", Args: json.RawMessage(`{"sha256":"` + snap + `"}`)}, false)
	assert.Equal(t, Allow, d.Verdict)
	assert.Equal(t, marketingKey, d.Target.Key)
	// A flower already drawn and a draft the person sent approve their snapshots.
	other := "b" + snap[1:]
	ap = ApprovedIn(nil, json.RawMessage(`{"spec":{"snapshot":"`+other+`"}}`), json.RawMessage(`{"spec":{"snapshot":"`+snap+`"}}`))
	assert.True(t, ap.Snapshots[other])
	assert.True(t, ap.Snapshots[snap])
	d = Decide([]Message{user("make it smaller")}, ap, ToolCall{Name: "render_flower", Args: json.RawMessage(`{"spec":{"snapshot":"` + other + `"}}`)}, false)
	assert.Equal(t, Allow, d.Verdict)
}

func TestOneYesCoversOneNewTarget(t *testing.T) {
	thread := []Message{user("hi"), assistant("Shall I draw the Marketing DAO?"), user("yes"),
		{Role: RoleTool, Name: "get_snapshot", Content: `{}`, Approved: marketingKey, ApprovedBy: ByYes}}
	assert.True(t, YesSpent(thread))
	other := ToolCall{Name: "get_snapshot", Args: json.RawMessage(`{"network":"near-dao-members","params":{"chain":"near:mainnet","dao":"creatives.sputnik-dao.near"},"fresh":true}`)}
	assert.Equal(t, Refuse, Decide(thread, ApprovedIn(thread, nil, nil), other, YesSpent(thread)).Verdict)
	assert.Equal(t, Allow, Decide(thread, ApprovedIn(thread, nil, nil), readMarketing, YesSpent(thread)).Verdict)
}

func TestAmbiguousFindNeedsTheCandidateNamed(t *testing.T) {
	find := Message{Role: RoleTool, Name: "find_target", Content: `{"ambiguous":true,"candidates":[
		{"target_key":"near-dao-members{\"chain\":\"near:mainnet\",\"dao\":\"creatives.sputnik-dao.near\"}","params":{"chain":"near:mainnet","dao":"creatives.sputnik-dao.near"}},
		{"target_key":` + jsonString(marketingKey) + `,"params":{"chain":"near:mainnet","dao":"marketing.sputnik-dao.near"}}]}`}
	base := []Message{user("draw the marketing dao"), {Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "f", Name: "find_target"}}}, find}
	assert.Equal(t, Refuse, Decide(base, ApprovedIn(nil, nil, nil), readMarketing, false).Verdict, "a candidate of an ambiguous find isn't drawn by name alone")
	for _, reply := range []string{"the second", "2", "marketing.sputnik-dao.near please"} {
		th := append(append([]Message{}, base...), assistant("Which one: Creatives or Marketing?"), user(reply))
		assert.Equal(t, Allow, Decide(th, ApprovedIn(nil, nil, nil), readMarketing, false).Verdict, reply)
	}
	th := append(append([]Message{}, base...), assistant("Which one?"), user("the first"))
	assert.Equal(t, Refuse, Decide(th, ApprovedIn(nil, nil, nil), readMarketing, false).Verdict)
}

func TestIsYes(t *testing.T) {
	for _, s := range []string{"yes", "Yes!", "ok", "Sure.", "go ahead", "yes, please", "y"} {
		assert.True(t, IsYes(s), s)
	}
	for _, s := range []string{"no", "yes but the other one", "maybe", ""} {
		assert.False(t, IsYes(s), s)
	}
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }
