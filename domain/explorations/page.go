package explorations

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/errs"
)

// Caps on what one exploration holds, and on a page of it.
const (
	MaxSteps = 1000 // steps per exploration
	MaxNotes = 1000 // notes per exploration

	DefaultPageItems = 50  // steps, and notes, on a page when the caller doesn't say
	MaxPageItems     = 200 // the most a caller may ask for
	// PageBytes bounds the text of one page's steps and notes (inline specs
	// included); a page always holds at least one of each that is left.
	PageBytes = 1 << 20
)

// Cursor is where a page of an exploration starts: after the step numbered
// AfterStep, and after the note (NoteAt, NoteID) in the notes' order.
type Cursor struct {
	AfterStep int
	NoteAt    time.Time
	NoteID    string
}

// IsStart reports whether c is the first page's cursor.
func (c Cursor) IsStart() bool { return c.AfterStep == 0 && c.NoteID == "" }

// String is the cursor as callers carry it: opaque base64url.
func (c Cursor) String() string {
	if c.IsStart() {
		return ""
	}
	raw := fmt.Sprintf("1.%d.%d.%s", c.AfterStep, c.NoteAt.UnixMicro(), c.NoteID)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// ParseCursor reads a cursor a caller sent back ("" is the first page).
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	bad := errs.New(errs.BadInput, "cursor is not one this site gave", "send the next_cursor of the page before, or none for the first page")
	if len(s) > 200 {
		return Cursor{}, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, bad
	}
	parts := strings.SplitN(string(raw), ".", 4)
	if len(parts) != 4 || parts[0] != "1" {
		return Cursor{}, bad
	}
	step, err1 := strconv.Atoi(parts[1])
	micros, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || step < 0 || step > MaxSteps || (parts[3] != "" && !notePattern.MatchString(parts[3])) {
		return Cursor{}, bad
	}
	c := Cursor{AfterStep: step, NoteID: parts[3]}
	if c.NoteID != "" {
		c.NoteAt = time.UnixMicro(micros).UTC()
	}
	return c, nil
}

// PageItems reads a page's limit: the default when absent, at most MaxPageItems.
func PageItems(limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultPageItems, nil
	case limit < 0 || limit > MaxPageItems:
		return 0, errs.Newf(errs.BadInput, "limit must be between 1 and %d", MaxPageItems)
	}
	return limit, nil
}

// TooMany is the refusal of a step or note past an exploration's cap.
func TooMany(what string, limit int) *errs.Error {
	return errs.Newf(errs.BadInput, "this exploration already holds %d %s, the most one may", limit, what).
		WithHint("start a new exploration to go on (start_exploration), and note in it where it came from")
}
