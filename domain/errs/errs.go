// Package errs is petal's one error type: a code from the source contract's list,
// a message for people and a hint. Every door (HTTP, MCP, the agent) maps the code
// once; nothing else about an error ever reaches a caller.
package errs

import (
	"errors"
	"fmt"
)

// Code is one of the contract's error codes.
type Code string

// The contract's codes. Their HTTP statuses live in the HTTP adapter, in one table.
const (
	BadInput         Code = "bad_input"
	Unauthorised     Code = "unauthorised"
	InviteRequired   Code = "invite_required"
	NotFound         Code = "not_found"
	CannotRead       Code = "cannot_read"
	InvalidSpec      Code = "invalid_spec"
	RateLimited      Code = "rate_limited"
	BudgetExhausted  Code = "budget_exhausted"
	PaymentRequired  Code = "payment_required"
	NotOnThisSite    Code = "not_on_this_site"
	SourceFailed     Code = "source_failed"
	Conflict         Code = "conflict"           // additive: an Idempotency-Key reused with another body
	MethodNotAllowed Code = "method_not_allowed" // additive: a known route asked with the wrong method
	Internal         Code = "internal"
)

// Problem is one thing wrong with a spec or document, located by a JSON path.
type Problem struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// Error is petal's error. Message and Hint are shown to callers verbatim, so they
// must never carry internal detail; Cause is for logs only.
type Error struct {
	Code        Code
	Message     string
	Hint        string
	RetryAfterS int       // set for rate_limited and daily caps
	Problems    []Problem // set for invalid_spec
	Extra       map[string]any
	Cause       error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// New makes an error with a code, a message and an optional hint.
func New(code Code, message string, hint ...string) *Error {
	e := &Error{Code: code, Message: message}
	if len(hint) > 0 {
		e.Hint = hint[0]
	}
	return e
}

// Newf makes an error with a formatted message.
func Newf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithHint returns e with its hint set.
func (e *Error) WithHint(hint string) *Error { e.Hint = hint; return e }

// WithCause returns e carrying cause for the logs.
func (e *Error) WithCause(cause error) *Error { e.Cause = cause; return e }

// WithRetryAfter returns e with retry_after_s set.
func (e *Error) WithRetryAfter(seconds int) *Error { e.RetryAfterS = seconds; return e }

// As finds petal's error in err's chain.
func As(err error) (*Error, bool) {
	return errors.AsType[*Error](err)
}

// CodeOf is the code of err: internal for anything that is not petal's error.
func CodeOf(err error) Code {
	if e, ok := As(err); ok {
		return e.Code
	}
	return Internal
}

// Is reports whether err carries code.
func Is(err error, code Code) bool {
	e, ok := As(err)
	return ok && e.Code == code
}

// Body is the contract's error shape, the same through every door:
// {"error": {"code", "message", "hint"}}.
type Body struct {
	Error Detail `json:"error"`
}

// Detail is the inside of Body: only what a caller may see.
type Detail struct {
	Code        Code      `json:"code"`
	Message     string    `json:"message"`
	Hint        string    `json:"hint"`
	RetryAfterS int       `json:"retry_after_s,omitempty"`
	Problems    []Problem `json:"problems,omitempty"`
	Ended       string    `json:"ended,omitempty"`
}

// Detail is what callers see of e; Cause stays behind.
func (e *Error) Detail() Detail {
	d := Detail{Code: e.Code, Message: e.Message, Hint: e.Hint, RetryAfterS: e.RetryAfterS, Problems: e.Problems}
	if ended, ok := e.Extra["ended"].(string); ok {
		d.Ended = ended
	}
	return d
}

// Body is e in the contract's error shape.
func (e *Error) Body() Body { return Body{Error: e.Detail()} }
