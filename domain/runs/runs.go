// Package runs is Petals' agent's run: a job whose events are stored in a log
// with a place (seq) each, its statuses, the event kinds and their payloads as
// the contract's table has them, the limits of one chat, and the consent rules
// (the yes) as pure functions over the run's thread.
package runs

import (
	"encoding/json"
	"time"

	"github.com/petal-near/petal/domain/errs"
)

// Status is where a run stands.
type Status string

// The statuses of a run.
const (
	Running     Status = "running"
	Done        Status = "done"
	Failed      Status = "failed"
	Stopped     Status = "stopped"
	Interrupted Status = "interrupted"
)

// Ended reports whether a run with this status has finished.
func (s Status) Ended() bool { return s != Running }

// Valid reports whether s is one of the statuses.
func (s Status) Valid() bool {
	switch s {
	case Running, Done, Failed, Stopped, Interrupted:
		return true
	}
	return false
}

// Limits of one chat (the contract's "Limits per chat").
const (
	// MaxToolRounds is how many rounds of tool calls one chat may make.
	MaxToolRounds = 8
	// HeartbeatEvery keeps idle SSE connections open.
	HeartbeatEvery = 10 * time.Second
	// MaxThread is the most a run's thread may hold (its messages as stored
	// JSON) for a follow-up to be taken: past it the run is full, and the
	// person starts a new chat.
	MaxThread = 2 << 20
)

// ThreadBytes is the size of a thread as stored (its JSON).
func ThreadBytes(thread []Message) int {
	b, err := json.Marshal(thread)
	if err != nil {
		return 0
	}
	return len(b)
}

// ThreadFull is the refusal of a follow-up that would take a run's thread
// past MaxThread.
func ThreadFull(size int) *errs.Error {
	return errs.Newf(errs.BadInput, "this chat's thread would hold %d bytes, past the %d one run keeps", size, MaxThread).
		WithHint("start a new chat (without run_id), saying in it what this one found")
}

// Model names the provider answered by when there is no model key.
const RecordedModel = "recorded"

// Run is a stored run.
type Run struct {
	ID        string
	Owner     string // the session subject that owns it; empty: open to whoever holds the id
	Status    Status
	Model     string // the provider it runs on: recorded or the model's name
	ProcessID string // the process whose job holds it while it runs
	Thread    []Message
	Draft     json.RawMessage // the draft the person sent, if any
	Flower    json.RawMessage // the last flower drawn, the flower event's data
	// Exploration is the exploration the run keeps its flowers in (empty
	// until its first flower).
	Exploration string
	// Title is the conversation's name, given by Petals' agent
	// (name_conversation); "" until it names it.
	Title string
	// Settings are what the run's chats run on, as the conversation asked.
	Settings  Settings
	NextSeq   int64 // the seq the next event gets
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Settings are a conversation's choice of model and effort (T370); empty
// fields are the site's defaults. The model catalogue is the allow-list.
type Settings struct {
	Model  string `json:"model,omitempty"`
	Effort string `json:"effort,omitempty"`
}

// ResumeURL is where a person comes back to a run.
func ResumeURL(runID string) string { return "/make?run=" + runID }

// Message is one message of a run's thread, in the model's terms.
type Message struct {
	Role       string     `json:"role"` // system, user, assistant or tool
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"` // a tool message's tool
	// Approved is set on a tool message whose call the yes let through, so
	// what is approved is read back from the thread (no new column).
	Approved   string `json:"approved,omitempty"`
	ApprovedBy string `json:"approved_by,omitempty"` // approved, name or yes
}

// Roles of a message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// ToolCall is one call the model asked for.
type ToolCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Conversation is the thread as people read it: user and assistant turns with
// words, without tool traffic.
func Conversation(thread []Message) []Message {
	out := []Message{}
	for _, m := range thread {
		if (m.Role == RoleUser || m.Role == RoleAssistant) && m.Content != "" {
			out = append(out, Message{Role: m.Role, Content: m.Content})
		}
	}
	return out
}
