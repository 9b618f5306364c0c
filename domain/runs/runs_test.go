package runs

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSummarizeNeverCarriesABody(t *testing.T) {
	body := `{"sha256":"abc","count":3,"accounts":[{"id":"near:mainnet:a.near"},{"id":"b"},{"id":"c"}],"about":"` + strings.Repeat("x", 200) + `"}`
	s := Summarize(json.RawMessage(body))
	assert.Equal(t, "accounts: 3, count: 3, sha256: abc", s)
	assert.NotContains(t, s, "a.near")
	assert.Equal(t, "drew it", Summarize(json.RawMessage(`{"summary":"drew it","spec":{}}`)))
	assert.Equal(t, "2 items", Summarize(json.RawMessage(`[1,2]`)))
	assert.LessOrEqual(t, len([]rune(Summarize(json.RawMessage(`{"summary":"`+strings.Repeat("y", 1000)+`"}`)))), SummaryMax)
}

func TestTerminalEvents(t *testing.T) {
	assert.True(t, Event{Kind: KindDone}.Terminal())
	assert.True(t, Event{Kind: KindError, Data: Make(KindError, ErrorData{Code: CodeInterrupted}).Data}.Terminal())
	assert.False(t, Event{Kind: KindError, Data: Make(KindError, ErrorData{Code: CodeStopped}).Data}.Terminal())
	assert.False(t, Event{Kind: KindMessage}.Terminal())
}

func TestStatuses(t *testing.T) {
	for _, s := range []Status{Running, Done, Failed, Stopped, Interrupted} {
		assert.True(t, s.Valid())
		assert.Equal(t, s != Running, s.Ended())
	}
	assert.False(t, Status("paused").Valid())
}

func TestConversationKeepsWordsOnly(t *testing.T) {
	th := []Message{
		{Role: RoleSystem, Content: "sys"},
		{Role: RoleUser, Content: "draw"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1", Name: "x"}}},
		{Role: RoleTool, Content: "{}", ToolCallID: "1"},
		{Role: RoleAssistant, Content: "done"},
	}
	assert.Equal(t, []Message{{Role: RoleUser, Content: "draw"}, {Role: RoleAssistant, Content: "done"}}, Conversation(th))
}
