// Package agentjobs is a person's own agents (Claude Code, Codex, any MCP
// client) working for them: the agent links their agents wait with, the
// workers that wait, and the jobs Petals' agent hands out to them. It decides
// what is allowed; storage, waking and doors live elsewhere.
package agentjobs

import (
	"encoding/base64"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/people"
)

// The contract's limits.
const (
	MaxWorkersPerAgent = 32
	MaxAgentsPerPerson = 32  // agents (names) a person's links have waited as
	MaxLinksPerPerson  = 100 // agent links that work at once
	MaxOpenPerPerson   = 200
	MaxBrief           = 16 << 10  // bytes
	MaxReport          = 256 << 10 // bytes
	MaxTitle           = 200       // characters
	MaxAgentName       = 64        // characters
	MaxCan             = 2000      // characters
	MaxInputs          = 16 << 10  // bytes of a job's inputs
	MinParts, MaxParts = 2, 32
	DefaultWaitS       = 50
	// MaxWaitS is below the 100 s a tunnel in front of the site lets a
	// request idle.
	MaxWaitS = 90
)

// TokenPrefix starts every agent link's token, so it is recognised (and
// never confused with an exploration link) wherever it is pasted.
const TokenPrefix = "petal_agent_"

// Link lets a person's agents wait for their jobs. Only its token's hash is kept.
type Link struct {
	ID          string
	Owner       string // prs_…
	TokenSHA256 string
	CreatedAt   time.Time
	RevokedAt   *time.Time
}

// NewToken makes an agent link's token and the hash that is all that is stored.
func NewToken(random io.Reader) (token, hash string, err error) {
	var b [32]byte
	if _, err := io.ReadFull(random, b[:]); err != nil {
		return "", "", fmt.Errorf("agentjobs: random: %w", err)
	}
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashToken(token), nil
}

var tokenPattern = regexp.MustCompile(`^petal_agent_[A-Za-z0-9_-]{43}$`)

// ValidToken reports whether t has an agent token's shape.
func ValidToken(t string) bool { return tokenPattern.MatchString(t) }

// HashToken is a token's stored form.
func HashToken(token string) string { return people.HashToken(token) }

// Status is where a job stands.
type Status string

// Job statuses.
const (
	Open    Status = "open"
	Taken   Status = "taken"
	Done    Status = "done"
	Failed  Status = "failed"
	Stopped Status = "stopped"
)

// Ended says why a worker's take no longer counts.
const (
	EndedStopped    = "stopped"
	EndedHandedOver = "handed_over"
	// EndedReported: the job was reported done or failed; the worker's
	// continue link ends with it.
	EndedReported = "reported"
)

// Job is one piece of work handed to the person's agents.
type Job struct {
	ID           string
	Owner        string // the person (prs_…)
	Run          string // the run that handed it out ("" when none)
	Exploration  string // the handing conversation's exploration
	Conversation string // the job's own exploration
	PartOf       string // the group's id when the job is one of parts
	Part, Parts  int    // its place in the group, and the group's size
	Kind         string
	Title        string
	Brief        string
	Inputs       []byte // JSON, or nil
	To           string // the agent it is for, in lower case; "" for anyone
	Status       Status
	TakenBy      string // the agent that took it (as it names itself)
	Worker       string // the taking worker ("" when it named none)
	N            int    // the taking worker's place (1, 2, …)
	Report       string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	LastSeen     *time.Time // the last call through its worker's link
	OpenedAt     time.Time  // when it last opened (set by a take only)
	Question     string     // its conversation's question (set by a take only)
}

// Ended reports whether a job has reached an end.
func (j Job) Ended() bool { return j.Status == Done || j.Status == Failed || j.Status == Stopped }

// CanStop reports whether the job may be stopped: open or taken.
func (j Job) CanStop() bool { return j.Status == Open || j.Status == Taken }

// CanRetry reports whether the job may be sent again: taken, failed or stopped.
func (j Job) CanRetry() bool { return j.Status == Taken || j.Status == Failed || j.Status == Stopped }

// Worker is one window or sub-agent of a person's agent, as it last waited.
type Worker struct {
	Owner        string
	Agent        string // the agent's name in lower case: who jobs are sent to
	Name         string // the agent's name as it last said it
	Worker       string // "" for an agent that never named a worker
	N            int    // its place among the agent's workers, 1 first
	Can          *string
	FirstSeen    time.Time
	LastSeen     time.Time
	WaitingUntil *time.Time // a wait open now ends by then
	Job          *string    // the job it holds, if any
}

// Waiting reports whether a wait is open at now.
func (w Worker) Waiting(now time.Time) bool {
	return w.WaitingUntil != nil && w.WaitingUntil.After(now)
}

var workerPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// CheckAgent checks an agent's name and worker, and gives the name's key.
func CheckAgent(as, worker string) (key string, err error) {
	name := strings.TrimSpace(as)
	switch {
	case name == "":
		return "", errs.New(errs.BadInput, "as is empty", "name your agent, such as Codex or Claude Code")
	case utf8.RuneCountInString(name) > MaxAgentName:
		return "", errs.Newf(errs.BadInput, "as is longer than %d characters", MaxAgentName)
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return "", errs.New(errs.BadInput, "as holds a control character")
	case worker != "" && !workerPattern.MatchString(worker):
		return "", errs.New(errs.BadInput, "worker must be 1 to 32 letters, digits, - or _")
	}
	return AgentKey(name), nil
}

// AgentKey is the form an agent's name is matched in: case ignored.
func AgentKey(as string) string { return strings.ToLower(strings.TrimSpace(as)) }

// CheckCan checks what a worker says it can do.
func CheckCan(can string) error {
	if utf8.RuneCountInString(can) > MaxCan {
		return errs.Newf(errs.BadInput, "can is longer than %d characters", MaxCan)
	}
	return nil
}

// CheckWait reads wait_s: the default when absent, never past MaxWaitS.
func CheckWait(waitS *int) (time.Duration, error) {
	if waitS == nil {
		return DefaultWaitS * time.Second, nil
	}
	if *waitS < 0 || *waitS > MaxWaitS {
		return 0, errs.Newf(errs.BadInput, "wait_s must be between 0 and %d", MaxWaitS)
	}
	return time.Duration(*waitS) * time.Second, nil
}

// CheckJob checks a job's (or a part's) title, brief and inputs.
func CheckJob(field, title, brief string, inputs []byte) error {
	switch {
	case strings.TrimSpace(title) == "":
		return errs.Newf(errs.BadInput, "%stitle is empty", field)
	case utf8.RuneCountInString(title) > MaxTitle:
		return errs.Newf(errs.BadInput, "%stitle is longer than %d characters", field, MaxTitle)
	case strings.TrimSpace(brief) == "":
		return errs.Newf(errs.BadInput, "%sbrief is empty", field)
	case len(brief) > MaxBrief:
		return errs.Newf(errs.BadInput, "%sbrief is longer than %d bytes, not %d", field, MaxBrief, len(brief)).
			WithHint("hand the rest of the work in parts, or keep the detail in the conversation's notes")
	case len(inputs) > MaxInputs:
		return errs.Newf(errs.BadInput, "%sinputs are longer than %d bytes", field, MaxInputs)
	}
	return nil
}

// CheckReport checks a report's summary.
func CheckReport(summary string) error {
	switch {
	case strings.TrimSpace(summary) == "":
		return errs.New(errs.BadInput, "summary is empty", "say what you did, or why it failed")
	case len(summary) > MaxReport:
		return errs.Newf(errs.BadInput, "summary is longer than %d bytes, not %d", MaxReport, len(summary))
	}
	return nil
}

// NotFound is the one answer for a job, a link or a worker that isn't the
// caller's, whatever the reason.
func NotFound(what string) *errs.Error {
	return errs.Newf(errs.NotFound, "no such %s", what)
}

// TooManyOpen refuses a job past the person's open jobs.
func TooManyOpen() *errs.Error {
	return errs.Newf(errs.RateLimited, "at most %d open jobs at once", MaxOpenPerPerson).
		WithHint("wait for your agents to take some, or stop the ones nobody will take").WithRetryAfter(60)
}

// TooManyAgents refuses a new agent name past the person's.
func TooManyAgents() *errs.Error {
	return errs.Newf(errs.RateLimited, "at most %d agents per person", MaxAgentsPerPerson).
		WithHint("connect your agents under the names they had before").WithRetryAfter(60)
}

// TooManyLinks refuses a new agent link past the person's.
func TooManyLinks() *errs.Error {
	return errs.Newf(errs.RateLimited, "at most %d agent links at once", MaxLinksPerPerson).
		WithHint("revoke the agent links you no longer use").WithRetryAfter(60)
}

// TooManyWorkers refuses a worker past its agent's.
func TooManyWorkers() *errs.Error {
	return errs.Newf(errs.RateLimited, "at most %d workers per agent", MaxWorkersPerAgent).
		WithHint("reuse a worker's name, or disconnect the agent to start again from its first").WithRetryAfter(60)
}

// ConversationFull refuses a take of a job whose conversation already holds
// as many links that work as an exploration may: its worker's continue link
// would be one more. The job stays open.
func ConversationFull(maxLinks int) *errs.Error {
	return errs.Newf(errs.Conflict, "this job's conversation already has %d links that work, the most one may; its worker's link would be one more", maxLinks).
		WithHint("the job stays open: it can be taken once a job working there reports or is stopped, or a link shared on it is revoked")
}

// BadAgentLink refuses a call through an agent link that doesn't work:
// unknown, malformed, or revoked (also while a wait through it was open).
func BadAgentLink() *errs.Error {
	return errs.New(errs.Unauthorised, "that agent link doesn't work",
		"make a new one on the site (Connect your agent), and send it as Authorization: Bearer <token>")
}

// EndedError refuses a worker whose take was stopped or sent to another.
func EndedError(ended string) *errs.Error {
	e := errs.Newf(errs.Unauthorised, "this job was %s", strings.ReplaceAll(ended, "_", " "))
	e.Hint = "report nothing; wait for the next job"
	e.Extra = map[string]any{"ended": ended}
	return e
}
