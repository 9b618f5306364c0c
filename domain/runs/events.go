package runs

import (
	"encoding/json"

	"github.com/petal-near/petal/domain/credit"
)

// Kind is an event's name on the wire.
type Kind string

// The event kinds of the contract's table.
const (
	KindRun              Kind = "run"
	KindStage            Kind = "stage"
	KindProgress         Kind = "progress"
	KindToolCall         Kind = "tool_call"
	KindToolResult       Kind = "tool_result"
	KindMessage          Kind = "message"
	KindApprovalRequired Kind = "approval_required"
	KindFlower           Kind = "flower"
	KindTitle            Kind = "title"
	KindJob              Kind = "job" // additive: a job handed to the person's own agent
	KindSignature        Kind = "signature"
	KindError            Kind = "error"
	KindHeartbeat        Kind = "heartbeat" // never stored, carries no id
	KindDone             Kind = "done"
)

// Stored reports whether events of this kind go into the log.
func (k Kind) Stored() bool { return k != KindHeartbeat }

// Event is one stored event: its place in the run's log, its kind and data.
type Event struct {
	Seq  int64           `json:"seq"`
	Kind Kind            `json:"event"`
	Data json.RawMessage `json:"data"`
}

// NewEvent is an event about to be appended; the log gives it its seq.
type NewEvent struct {
	Kind Kind
	Data json.RawMessage
}

// Make builds a NewEvent from a payload.
func Make(kind Kind, payload any) NewEvent {
	b, err := json.Marshal(payload)
	if err != nil {
		// Payloads are our own structs; failing to encode one is a bug.
		panic("runs: encode " + string(kind) + ": " + err.Error())
	}
	return NewEvent{Kind: kind, Data: b}
}

// Terminal reports whether e is the last event of a chat: done, or the
// interrupted error (after which no done follows).
func (e Event) Terminal() bool {
	switch e.Kind {
	case KindDone:
		return true
	case KindError:
		var d ErrorData
		_ = json.Unmarshal(e.Data, &d)
		return d.Code == CodeInterrupted
	}
	return false
}

// Stages of a run.
const (
	StageRecorded   = "recorded"
	StageThinking   = "thinking"
	StageReadingMap = "reading_map"
	StageFetching   = "fetching"
	StageCounting   = "counting"
	StageProposing  = "proposing"
	StageValidating = "validating"
	StageDrawing    = "drawing"
)

// ToolStage is the stage a run enters when its agent calls a tool, with the
// words the stage event says; "" for a tool that announces no stage of its
// own. Reading outside the map (the chain, a page, the web) is fetching;
// reading Petal's own brain is reading the map's doctrine.
func ToolStage(tool string) (stage, message string) {
	switch tool {
	case "read_chain":
		return StageFetching, "reading the chain"
	case "read_page":
		return StageFetching, "reading a web page"
	case "search":
		return StageFetching, "searching the web"
	case "look_up":
		return StageFetching, "looking it up on the map and the chain"
	case "search_petals":
		return StageReadingMap, "searching the map"
	case "brain_index", "brain_route", "brain_file":
		return StageReadingMap, "reading Petal's brain"
	}
	return "", ""
}

// Error codes a run adds to the tool codes.
const (
	CodeStopped          = "stopped"
	CodeInterrupted      = "interrupted"
	CodeApprovalRequired = "approval_required"
	CodeTimeout          = "timeout"
)

// RunData is the run event: always the first event of a chat.
type RunData struct {
	RunID     string `json:"run_id"`
	ResumeURL string `json:"resume_url"`
}

// StageData is the stage event.
type StageData struct {
	Stage   string `json:"stage"`
	Message string `json:"message"`
}

// ProgressData is a progress event forwarded from a tool.
type ProgressData struct {
	Stage   string `json:"stage"`
	Message string `json:"message"`
	Done    *int   `json:"done,omitempty"`
	Total   *int   `json:"total,omitempty"`
}

// ToolCallData is the tool_call event.
type ToolCallData struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// ToolResultData is the tool_result event: a summary, never a raw body.
type ToolResultData struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Summary string `json:"summary"`
	MS      int64  `json:"ms"`
}

// MessageData is one complete assistant turn.
type MessageData struct {
	Text string `json:"text"`
}

// ApprovalRequiredData is the approval_required event (J4).
type ApprovalRequiredData struct {
	Tool      string          `json:"tool"`
	Network   string          `json:"network"`
	Params    json.RawMessage `json:"params,omitempty"`
	TargetKey string          `json:"target_key"`
}

// FlowerData is the flower event.
type FlowerData struct {
	Spec           json.RawMessage `json:"spec"`
	SpecSHA256     string          `json:"spec_sha256"`
	RenderSHA256   string          `json:"render_sha256"`
	ViewURL        string          `json:"view_url"`
	Legend         json.RawMessage `json:"legend"`
	Interpretation json.RawMessage `json:"interpretation"`
	Validation     json.RawMessage `json:"validation"`
}

// TitleData is the title event: Petals' agent named or renamed the
// conversation (name_conversation).
type TitleData struct {
	Title string `json:"title"`
}

// Signature is a model's signature of one completion (ModelSignature).
type Signature struct {
	ChatID         string `json:"chat_id,omitempty"`
	Model          string `json:"model,omitempty"`
	Text           string `json:"text"`
	Signature      string `json:"signature"`
	SigningAddress string `json:"signing_address"`
	SigningAlgo    string `json:"signing_algo"`
	SignatureKind  string `json:"signature_kind,omitempty"`
	ReportSHA256   string `json:"report_sha256,omitempty"`
}

// ErrorData is the error event.
type ErrorData struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

// Tokens counts a chat's model tokens.
type Tokens struct {
	In     int64 `json:"in"`
	Out    int64 `json:"out"`
	Cached int64 `json:"cached"`
}

// Add adds another count.
func (t *Tokens) Add(o Tokens) { t.In += o.In; t.Out += o.Out; t.Cached += o.Cached }

// DoneData is the done event.
type DoneData struct {
	Turns        int              `json:"turns"`
	Model        string           `json:"model"`
	FallbackUsed bool             `json:"fallback_used"`
	Tokens       Tokens           `json:"tokens"`
	CostUSD      credit.USDNumber `json:"cost_usd"`
	// QuotedUSD is the max_usd of the quote the chat was bound to (additive,
	// issue 18); absent without one.
	QuotedUSD *credit.USDNumber `json:"quoted_usd,omitempty"`
	Signature *Signature        `json:"signature"`
	Picked    *string           `json:"picked"`
}
